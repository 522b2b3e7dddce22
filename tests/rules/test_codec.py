"""The storage encoding: exact round trip, compact, versioned, refuses corrupt data."""

from __future__ import annotations

import pytest

from truc_rules import InvalidSetup, RuleOptions, decode_state, encode_state, new_game
from truc_rules.truc_y_flou.codec import FORMAT_VERSION

from .play import play, seq, start


def test_a_fresh_game_round_trips_and_is_small() -> None:
    state = new_game(RuleOptions(), seed=2**62 + 17).state
    data = encode_state(state)
    assert decode_state(data) == state
    assert data[:2] == bytes((0x54, FORMAT_VERSION))
    assert len(data) < 80


def test_a_mid_hand_state_with_calls_round_trips() -> None:
    state = play(start(scores=(18, 22)), *seq("0:EMBIDE 1:RESTOU 0:ACCEPT 0:TRUC 3:RETRUC"))
    assert decode_state(encode_state(state)) == state


def test_options_round_trip() -> None:
    options = RuleOptions.from_mapping(
        {
            "perique_trick_rank": "top",
            "play_out_all_tricks": True,
            "ace_value": 1,
            "responder": "caller",
            "cut": "cutter",
            "target_score": 12,
            "manches_to_win": 3,
        }
    )
    state = new_game(options, seed=5).state
    assert decode_state(encode_state(state)).options == options


@pytest.mark.parametrize(
    "data",
    [b"", b"X\x01", b"T\x09", b"T\x01", b"T\x01\x00\x00\x00\x00\x00\x19\x02\x00"],
)
def test_corrupt_or_foreign_data_is_refused(data: bytes) -> None:
    with pytest.raises(InvalidSetup):
        decode_state(data)


def test_every_truncation_of_a_real_state_is_refused() -> None:
    data = encode_state(play(start(), *seq("0:TRUC 3:ACCEPT 0:2Co 1:3Sw")))
    for end in range(len(data)):
        with pytest.raises(InvalidSetup):
            decode_state(data[:end])
    with pytest.raises(InvalidSetup):
        decode_state(data + b"\x00")
