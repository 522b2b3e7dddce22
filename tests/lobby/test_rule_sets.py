"""What a ticket's options say about its table (truc_lobby.rule_sets), and the
records that carry a rule set (the followed game, the history), including
those stored by a lobby older than the rule sets (pure: no Redis)."""

from __future__ import annotations

import json

import pytest
from truc.v1 import game_pb2

from truc_lobby.history import GameRecord
from truc_lobby.results import elo_changes
from truc_lobby.rule_sets import normalize, stored_rules
from truc_lobby.store import RATINGS, Claim, Tracked, ratings_key
from truc_protocol.convert import options_from_proto
from truc_protocol.errors import InvalidArgument
from truc_rules.rule_set import RuleSet

R = game_pb2

# What the lobby stored as the options of a default ticket before the rule sets
# existed (options_to_proto then wrote the Truc y Flou fields 1-7, no rule_set,
# no seats): the bytes of its tickets, claims and queue entries in Redis.
LEGACY_DEFAULT = R.RuleOptions(
    perique_trick_rank=R.PERIQUE_TRICK_RANK_LOWEST,
    responder=R.RESPONDER_CAPTAIN,
    cut=R.CUT_MODE_AUTOMATIC,
    target_score=25,
    manches_to_win=2,
).SerializeToString(deterministic=True)

TABLES = [
    (R.RuleOptions(), RuleSet.TRUC_Y_FLOU, 6),
    (R.RuleOptions(rule_set=R.RULE_SET_TRUC_Y_FLOU), RuleSet.TRUC_Y_FLOU, 6),
    (R.RuleOptions(rule_set=R.RULE_SET_FRENCH_TRUC), RuleSet.FRENCH_TRUC, 2),
    (R.RuleOptions(rule_set=R.RULE_SET_SACKSON_TRUC), RuleSet.SACKSON_TRUC, 2),
    (R.RuleOptions(rule_set=R.RULE_SET_PARTNERSHIP_TRUC), RuleSet.PARTNERSHIP_TRUC, 4),
    (R.RuleOptions(rule_set=R.RULE_SET_CATALAN_TRUC), RuleSet.CATALAN_TRUC, 4),
    (R.RuleOptions(rule_set=R.RULE_SET_CATALAN_TRUC, seats=4), RuleSet.CATALAN_TRUC, 4),
    (R.RuleOptions(rule_set=R.RULE_SET_CATALAN_TRUC, seats=2), RuleSet.CATALAN_TRUC, 2),
]


@pytest.mark.parametrize(("options", "rule_set", "seats"), TABLES)
def test_options_name_the_rule_set_and_the_table_size(
    options: game_pb2.RuleOptions, rule_set: RuleSet, seats: int
) -> None:
    rules = normalize(options)
    assert (rules.rule_set, rules.seat_count, rules.team_size) == (rule_set, seats, seats // 2)
    normal = rules.proto()
    # Written out: the rule set and the seats are part of the key.
    assert normal.rule_set != R.RULE_SET_UNSPECIFIED and normal.seats == seats
    assert normal.target_score > 0 and normal.manches_to_win > 0
    assert rules.key == rules.options.hex()
    assert rules.options == normal.SerializeToString(deterministic=True)
    # Read back as stored, the same table.
    assert stored_rules(rules.options) == rules


def test_keys_tell_every_game_and_table_size_apart_and_only_them() -> None:
    keys = {
        (rules.rule_set, rules.seat_count): rules.key
        for rules in (normalize(options) for options, _, _ in TABLES)
    }
    assert len(keys) == 6  # tyf, french, sackson, partnership, catalan 4, catalan 2
    assert len(set(keys.values())) == 6
    # Defaults written or left out: one key.
    assert (
        normalize(R.RuleOptions()).key
        == normalize(R.RuleOptions(rule_set=R.RULE_SET_TRUC_Y_FLOU, seats=6, target_score=25)).key
    )
    assert (
        normalize(R.RuleOptions(rule_set=R.RULE_SET_FRENCH_TRUC)).key
        == normalize(
            R.RuleOptions(rule_set=R.RULE_SET_FRENCH_TRUC, trick_order=R.TRICK_ORDER_SEVEN_EIGHT)
        ).key
    )
    # Another option value: another queue.
    assert (
        normalize(R.RuleOptions(rule_set=R.RULE_SET_FRENCH_TRUC)).key
        != normalize(
            R.RuleOptions(rule_set=R.RULE_SET_FRENCH_TRUC, trick_order=R.TRICK_ORDER_SEVEN_ACE)
        ).key
    )


@pytest.mark.parametrize(
    ("options", "field"),
    [
        (R.RuleOptions(rule_set=R.RULE_SET_FRENCH_TRUC, ace_value=1), "options.ace_value"),
        (R.RuleOptions(rule_set=R.RULE_SET_CATALAN_TRUC, seats=6), "options.seats"),
        (R.RuleOptions(rule_set=R.RULE_SET_TRUC_Y_FLOU, seats=2), "options.seats"),
        (R.RuleOptions(trick_order=R.TRICK_ORDER_SEVEN_ACE), "options.trick_order"),
        (R.RuleOptions(rule_set=42), "options.rule_set"),  # type: ignore[arg-type]
    ],
    ids=["french-ace", "catalan-6", "tyf-2", "tyf-order", "unknown"],
)
def test_an_option_the_rule_set_lacks_is_bad_request(
    options: game_pb2.RuleOptions, field: str
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        normalize(options)
    assert refused.value.reason == "BAD_REQUEST"
    assert refused.value.message.startswith(field + ":"), refused.value.message


def test_options_stored_before_the_rule_sets_are_todays_truc_y_flou() -> None:
    legacy = stored_rules(LEGACY_DEFAULT)
    today = normalize(R.RuleOptions())
    assert legacy == today  # same key: old and new tickets queue together
    assert (legacy.rule_set, legacy.seat_count) == (RuleSet.TRUC_Y_FLOU, 6)
    assert legacy.key != LEGACY_DEFAULT.hex()
    custom = R.RuleOptions.FromString(LEGACY_DEFAULT)
    custom.target_score = 17
    assert stored_rules(custom.SerializeToString()) == normalize(R.RuleOptions(target_score=17))


@pytest.mark.parametrize(("options", "rule_set", "seats"), TABLES)
def test_the_game_service_accepts_the_options_the_lobby_creates_games_with(
    options: game_pb2.RuleOptions, rule_set: RuleSet, seats: int
) -> None:
    """CreateGame gets the normalized options: the game's parser must read them
    as the same options (what the lobby queued is what is played)."""
    normal = normalize(options)
    engine = options_from_proto(normal.proto())  # the game service's parse of CreateGame's
    assert normalize(normal.proto()) == normal
    assert (normal.rule_set, normal.seat_count) == (rule_set, seats)
    assert type(engine) is type(options_from_proto(options))


def test_ratings_are_kept_per_rule_set_truc_y_flou_where_they_always_were() -> None:
    assert ratings_key(RuleSet.TRUC_Y_FLOU) == RATINGS == "truc:{lobby}:ratings"
    keys = {ratings_key(rule_set) for rule_set in RuleSet}
    assert len(keys) == len(RuleSet)
    assert all(k.startswith("truc:{lobby}:") for k in keys)  # one cluster slot


def test_a_followed_game_says_its_rule_set_and_reads_the_old_records() -> None:
    seats = ((0, "a", False, 1500.0), (1, "bot:x", True, 1500.0))
    french = Tracked(RuleSet.FRENCH_TRUC, seats)
    assert Tracked.decode(french.encode()) == french and french.seat_count == 2
    six = tuple((s, f"p{s}", False, 1500.0 + s) for s in range(6))
    tyf = Tracked(RuleSet.TRUC_Y_FLOU, six)
    # Truc y Flou's as the list of seats older lobbies wrote (and still read).
    assert json.loads(tyf.encode()) == [list(s) for s in six]
    assert Tracked.decode(json.dumps([list(s) for s in six]).encode()) == tyf


def test_a_claim_knows_its_rule_set_from_its_options() -> None:
    rules = normalize(R.RuleOptions(rule_set=R.RULE_SET_PARTNERSHIP_TRUC))
    seats = tuple((s, f"p{s}", False, 1500.0) for s in range(4))
    claim = Claim("g", ("t1",), seats, rules.options, 0)
    assert Claim.decode("g", claim.encode().encode()).rule_set == RuleSet.PARTNERSHIP_TRUC
    old = Claim(
        "g", ("t1",), tuple((s, f"p{s}", False, 1500.0) for s in range(6)), LEGACY_DEFAULT, 0
    )
    assert old.rule_set == RuleSet.TRUC_Y_FLOU
    assert claim.players == ["p0", "p1", "p2", "p3"]


def test_history_records_carry_their_rule_set_and_read_the_old_ones() -> None:
    record = GameRecord(
        "g1", ((0, "a", False), (1, "b", False)), 1, 123, {"a": -16.0, "b": 16.0},
        RuleSet.SACKSON_TRUC,
    )  # fmt: skip
    again = GameRecord.decode(record.encode())
    assert again == record
    assert (again.rule_set, again.seat_count) == (RuleSet.SACKSON_TRUC, 2)
    # A record written before the rule sets: no "r", six seats.
    old = {"g": "g0", "s": [[s, f"p{s}", False] for s in range(6)], "w": 0, "e": 5, "c": {}}
    legacy = GameRecord.decode(json.dumps(old))
    assert (legacy.rule_set, legacy.seat_count, legacy.winner) == (RuleSet.TRUC_Y_FLOU, 6, 0)


def test_elo_at_two_and_four_seats() -> None:
    duel = [(0, "a", False, 1500.0), (1, "b", False, 1500.0)]
    assert elo_changes(duel, winner=1) == {"a": -16.0, "b": 16.0}
    pairs = [(s, f"p{s}", s == 3, 1600.0 if s % 2 == 0 else 1400.0) for s in range(4)]
    changes = elo_changes(pairs, winner=1)  # an upset: the 1400s beat the 1600s
    assert set(changes) == {"p0", "p1", "p2"}  # the bot at seat 3 is not rated
    assert changes["p0"] == changes["p2"] < -16.0 < 16.0 < changes["p1"]
