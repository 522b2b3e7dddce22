"""What issue 16 added to the lobby's records and settings (pure: no Redis):
private queue keys, display names in claims, seated tables and history
records (and those records as older lobbies wrote them), the spectator grant
and ticket progress settings."""

from __future__ import annotations

import json

import pytest
from truc.v1 import game_pb2

from truc_lobby.config import ConfigError, Settings
from truc_lobby.history import GameRecord, PageTokenError, page_token, parse_page_token
from truc_lobby.rule_sets import PRIVATE_SUFFIX, normalize, queued_rules
from truc_lobby.store import Claim, SeatedTable, StoredTicket, bot_name
from truc_rules.rule_set import RuleSet

pytestmark = pytest.mark.unit

R = game_pb2
BASE = {"TRUC_DEV_MODE": "1", "REDIS_URL": "redis://127.0.0.1:1/0"}
FRENCH = normalize(R.RuleOptions(rule_set=R.RULE_SET_FRENCH_TRUC))


def test_a_private_table_queues_apart_under_its_own_key() -> None:
    public, private = FRENCH.queue_key(False), FRENCH.queue_key(True)
    assert public == FRENCH.key and private == FRENCH.key + PRIVATE_SUFFIX != public
    assert queued_rules(public) == (FRENCH, False)
    assert queued_rules(private) == (FRENCH, True)
    with pytest.raises(ValueError):
        queued_rules("not-a-key")


def test_a_claim_carries_the_seats_names_and_privacy() -> None:
    claim = Claim(
        game="g1",
        tickets=("t1",),
        seats=((0, "ana-1", False, 1500.0), (1, "bot:x", True, 1500.0)),
        options=FRENCH.options,
        turn_seconds=0,
        names=("Ana", bot_name(1)),
        private=True,
    )
    again = Claim.decode("g1", claim.encode().encode())
    assert again == claim and again.seat_names() == ["Ana", "Bot 1"]
    seated = again.seated(123)
    assert seated.seats == ((0, "ana-1", False, "Ana"), (1, "bot:x", True, "Bot 1"))
    assert seated.private and seated.start_ms == 123 and seated.rule_set == RuleSet.FRENCH_TRUC
    assert SeatedTable.decode("g1", seated.encode()) == seated
    assert seated.holds("ana-1") and not seated.holds("bot:x") and not seated.holds("zoe-2")
    # A claim written before display names: no names, public.
    old = json.loads(claim.encode())
    del old["n"], old["p"]
    legacy = Claim.decode("g1", json.dumps(old).encode())
    assert legacy.seat_names() == ["", ""] and not legacy.private


def test_history_records_and_tickets_of_older_lobbies_read_without_names() -> None:
    record = GameRecord("g", ((0, "a", False), (1, "b", True)), 0, 5, {}, names=("A", "Bot 1"))
    assert GameRecord.decode(record.encode()) == record and record.name_of(1) == "Bot 1"
    old = json.loads(record.encode())
    del old["n"], old["p"]
    legacy = GameRecord.decode(json.dumps(old))
    assert legacy.name_of(0) == "" and not legacy.private
    raw = {
        b"s": b"QUEUED",
        b"l": b"a",
        b"m": json.dumps([["a", 1, 1500.0]]).encode(),  # a member without a name
        b"o": FRENCH.options,
        b"c": b"1",
        b"k": FRENCH.key.encode(),
    }
    ticket = StoredTicket.decode("t", raw, 3)
    assert ticket.member_names == ("",) and not ticket.private and ticket.players_waiting == 3
    raw[b"k"] = FRENCH.queue_key(True).encode()
    assert StoredTicket.decode("t", raw).private


def test_page_tokens_round_trip_and_others_are_refused() -> None:
    assert parse_page_token(page_token(17, "abc")) == (17, "abc")
    for bad in ("nope", page_token(-1, "abc"), "MTc"):
        with pytest.raises(PageTokenError):
            parse_page_token(bad)


def test_spectator_grant_and_progress_settings() -> None:
    settings = Settings.from_env(BASE)
    assert settings.spectator_grant_seconds == 14_400
    assert settings.spectator_grants_per_player == 60
    assert settings.ticket_progress_seconds == 5.0
    for name, value in (
        ("TRUC_SPECTATOR_GRANT_SECONDS", "59"),
        ("TRUC_SPECTATOR_GRANT_SECONDS", "86401"),
        ("TRUC_TICKET_PROGRESS_SECONDS", "0"),
        ("TRUC_SPECTATOR_GRANTS_PER_PLAYER", "-1"),
    ):
        with pytest.raises(ConfigError, match=name):
            Settings.from_env({**BASE, name: value})
    with pytest.raises(ConfigError, match="TRUC_SPECTATOR_GRANT_SECONDS"):
        Settings.from_env(
            {
                **BASE,
                "TRUC_TOKEN_TTL_SECONDS": "3600",
                "TRUC_SPECTATOR_GRANT_SECONDS": "7200",
                "TRUC_MAX_TOKEN_SECONDS": "3600",
            }
        )
