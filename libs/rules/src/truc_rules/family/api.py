"""The part of a variants.md rule set's API that every rule set module re-exports
as it is: the functions that take a state (a state knows its rule set) and the
types they speak. Each module adds its own ``VARIANT``, ``RULES`` and the
functions bound to it (``new_game``, ``options``, ``options_from_mapping``,
``decode_state``)."""

from .codec import encode_state
from .defaults import default_action
from .engine import Transition, apply_action, is_terminal, legal_actions, to_act
from .state import FamilyState
from .variant import FamilyOptions
from .views import FamilyView, view_for

__all__ = [
    "FamilyOptions",
    "FamilyState",
    "FamilyView",
    "Transition",
    "apply_action",
    "default_action",
    "encode_state",
    "is_terminal",
    "legal_actions",
    "to_act",
    "view_for",
]

SHARED: tuple[str, ...] = tuple(__all__)
"""The names above, for a rule set module's own ``__all__``."""
BOUND: tuple[str, ...] = (
    "RULES",
    "VARIANT",
    "decode_state",
    "new_game",
    "options",
    "options_from_mapping",
)
"""What each rule set module defines itself, beside :data:`SHARED`."""
