"""Display names (truc_protocol.display_names) and the token claims that carry
them (``name``) and a spectator grant's game (``game``): unit tests of the one
definition every service uses."""

from __future__ import annotations

import pytest

from truc_protocol.display_names import (
    MAX_DISPLAY_NAME,
    display_name_problem,
    normalized_display_name,
)
from truc_protocol.errors import Unauthenticated
from truc_service.tokens import TokenVerifier, issue_token

pytestmark = pytest.mark.unit

SECRET = "display-names-secret-0123456789abcdef-01234"

ACCEPTED = [
    "José María",
    "山田",
    "Ørjan",
    "Zoë-Ann O'Neil",
    "👩\u200d👩\u200d👧",  # an emoji sequence joined by U+200D
    "x" * MAX_DISPLAY_NAME,
    "مريم",  # right-to-left script, without a bidi control
]

REFUSED = {
    "": "at least one character",
    "x" * (MAX_DISPLAY_NAME + 1): "at most 32",
    "\u202eevil": "bidirectional control (U+202E)",
    "a\u2066b": "bidirectional control (U+2066)",
    "a\u200fb": "bidirectional control (U+200F)",
    "a\nb": "control character (U+000A)",
    "bell\x07": "control character (U+0007)",
    "del\x7f": "control character (U+007F)",
    "c1\x85x": "control character (U+0085)",
    "a\u2028b": "line separator (U+2028)",
    "a\u2029b": "paragraph separator (U+2029)",
    "zero\u200bwidth": "invisible format character (U+200B)",
    "bom\ufeff": "invisible format character (U+FEFF)",
    "private\ue000": "private-use character (U+E000)",
    "unassigned\U000e0fff": "unassigned character",
}


@pytest.mark.parametrize("name", ACCEPTED)
def test_accepted(name: str) -> None:
    assert display_name_problem(normalized_display_name(name)) is None


@pytest.mark.parametrize(("name", "why"), REFUSED.items())
def test_refused_saying_why(name: str, why: str) -> None:
    problem = display_name_problem(normalized_display_name(name))
    assert problem is not None and why in problem, problem


def test_normalized_is_nfc_and_trimmed() -> None:
    decomposed = "Jose\u0301 Mari\u0301a"  # combining acute accents
    assert normalized_display_name(f"  {decomposed}\t") == "José María"
    # The length counts characters as stored: 32 composed letters fit.
    assert display_name_problem(normalized_display_name("e\u0301" * 32)) is None


def verifier() -> TokenVerifier:
    return TokenVerifier(SECRET, issuer="truc-lobby", audience="truc-game")


def bearer(**kwargs: object) -> str:
    return "Bearer " + issue_token(SECRET, "alice", **kwargs)  # type: ignore[arg-type]


def test_token_carries_the_display_name_and_the_grants_game() -> None:
    player = verifier().verify(bearer(name="José María"))
    assert (player.display_name, player.game) == ("José María", None)
    grant = verifier().verify(bearer(role="spectator", game="games/g-1"))
    assert (grant.role, grant.game, grant.display_name) == ("spectator", "games/g-1", "")


@pytest.mark.parametrize(
    ("claims", "why"),
    [
        ({"name": "\u202eevil"}, "bidirectional"),
        ({"name": "Jose\u0301"}, "NFC"),
        ({"name": " padded"}, "NFC"),
        ({"name": 7}, "must be a string"),
        ({"game": "games/g-1"}, "only a spectator"),
        ({"role": "spectator", "game": "tickets/t"}, "games/{game}"),
        ({"role": "spectator", "game": "games/a/b"}, "games/{game}"),
        ({"role": "spectator", "game": ["games/g"]}, "games/{game}"),
    ],
)
def test_token_claims_refused(claims: dict[str, object], why: str) -> None:
    with pytest.raises(Unauthenticated) as caught:
        verifier().verify(bearer(**claims))
    assert caught.value.reason == "TOKEN_INVALID"
    assert why in str(caught.value), caught.value
