"""The events of Truc y Flou: the family's shared vocabulary (:mod:`truc_rules.events`)."""

from truc_rules.events import *  # noqa: F403 - the shared event vocabulary, as it lists it
from truc_rules.events import __all__ as __all__  # noqa: PLC0414 - re-exported
