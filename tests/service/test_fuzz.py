"""Hostile input: hypothesis fuzzes the game service on two real replicas.

"No request, however malformed or hostile, crashes a server, corrupts a game
or shows a player a card they may not see." Every request here goes over real
gRPC to a replica on a real Redis, and every reply is checked against an
oracle written from the protocol's documentation (game_service.proto):

* structured fuzz: SubmitAction (and GetGame, CreateGame) requests built from
  strategies covering every field with valid and invalid values; the oracle
  predicts the exact status and ErrorInfo reason (or success, which must be a
  legal action: a reference GetGame is taken before each example);
* raw-bytes fuzz: arbitrary, truncated, extended, mutated and deeply nested
  bytes as the serialized request of every RPC;
* WatchGame: malformed requests fail cleanly, and watchers opened before the
  storm see every version exactly once;
* after the storm: every game is readable by its six seats on both replicas,
  the 18 cards of a hand are conserved, no view shows a card its viewer may
  not see, every version is accounted for, and both replicas are alive,
  SERVING and have logged no unexplained traceback.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

import grpc
import jwt
import pytest
from google.protobuf.message import DecodeError, Message
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from truc.v1 import cards_pb2, game_pb2, game_service_pb2, game_service_pb2_grpc

from truc_protocol.identifiers import valid_request_id
from truc_service.tokens import issue_token

from .conftest import SECRET, Replica, error_reason, new_players

SC = grpc.StatusCode
Metadata = tuple[tuple[str, str], ...]
CardKey = tuple[int, int]

# ------------------------------------------------------------------ the documented contract

RULES_REASONS: Final = frozenset(
    {"NOT_YOUR_TURN", "CARD_NOT_IN_HAND", "NO_FLOR", "NOT_ALLOWED_NOW", "GAME_OVER"}
)
REASONS: Final[dict[grpc.StatusCode, frozenset[str]]] = {
    SC.UNAUTHENTICATED: frozenset({"TOKEN_MISSING", "TOKEN_INVALID", "TOKEN_EXPIRED"}),
    SC.PERMISSION_DENIED: frozenset({"NOT_SEATED", "LOBBY_ONLY"}),
    SC.INVALID_ARGUMENT: frozenset(
        {"BAD_NAME", "BAD_ACTION", "BAD_REQUEST", "FIXED_DEALS_DISABLED", "REQUEST_ID_REUSED"}
    ),
    SC.NOT_FOUND: frozenset({"GAME_NOT_FOUND"}),
    SC.ALREADY_EXISTS: frozenset({"GAME_EXISTS"}),
    SC.FAILED_PRECONDITION: RULES_REASONS,
    SC.ABORTED: frozenset({"STALE_ETAG", "CONFLICT"}),
    SC.RESOURCE_EXHAUSTED: frozenset({"RATE_LIMITED"}),
    SC.OUT_OF_RANGE: frozenset({"AFTER_VERSION_AHEAD"}),
    SC.UNAVAILABLE: frozenset({"STORE_UNAVAILABLE"}),
}
_READ_CODES: Final = frozenset(
    {SC.UNAUTHENTICATED, SC.INVALID_ARGUMENT, SC.NOT_FOUND, SC.PERMISSION_DENIED}
)
CODES: Final[dict[str, frozenset[grpc.StatusCode]]] = {
    "SubmitAction": _READ_CODES | {SC.FAILED_PRECONDITION, SC.ABORTED, SC.RESOURCE_EXHAUSTED},
    "GetGame": _READ_CODES,
    "WatchGame": _READ_CODES | {SC.OUT_OF_RANGE},
    "CreateGame": frozenset(
        {SC.UNAUTHENTICATED, SC.PERMISSION_DENIED, SC.INVALID_ARGUMENT, SC.ALREADY_EXISTS}
    ),
}
DOMAIN: Final = "truc.v1"
_RESPONSE_VIEWS: Final = frozenset(game_service_pb2.ResponseView.values())
MAX_MESSAGE_BYTES: Final = 65536  # TRUC_MAX_MESSAGE_BYTES' default
_NAME: Final = re.compile(r"games/[A-Za-z0-9_-]{1,64}")
INT32: Final = st.integers(-(2**31), 2**31 - 1)
_EDGES: Final = (-1, 99, -(2**31), 2**31 - 1)
_MESSAGES: Final = frozenset({"signal", "directive"})
_SERVICE: Final = "/truc.v1.GameService/"

# Examples per fuzz (a SubmitAction example costs a reference GetGame and the call).
SUBMIT_EXAMPLES: Final = 3000
GET_EXAMPLES: Final = 150
CREATE_EXAMPLES: Final = 150
RAW_EXAMPLES: Final = 150


def fuzz_settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )


def bearer(player: str, *, role: str = "player", ttl: float = 3600.0) -> Metadata:
    """Call metadata carrying a token for ``player``."""
    return (("authorization", "Bearer " + issue_token(SECRET, player, role=role, ttl_seconds=ttl)),)


def proto_card(suit: int, rank: int) -> cards_pb2.Card:
    """A card with any numbers, known to the enums or not."""
    card = cards_pb2.Card()
    card.suit = suit  # type: ignore[assignment]
    card.rank = rank  # type: ignore[assignment]
    return card


def fixed_deal(hands: Sequence[Sequence[str]]) -> game_pb2.Deal:
    """Six hands from texts like '7Sw'."""
    ranks, suits = "1234567JNK", ("Sw", "Cl", "Co", "Cu")
    return game_pb2.Deal(
        hands=[
            game_pb2.Hand(
                cards=[proto_card(suits.index(c[-2:]) + 1, ranks.index(c[:-2]) + 1) for c in hand]
            )
            for hand in hands
        ]
    )


# ------------------------------------------------------------------ status checks


def error_info(error: grpc.RpcError) -> error_details_pb2.ErrorInfo | None:
    """The ErrorInfo of a failed call, None if there is none."""
    assert isinstance(error, grpc.Call)
    for name, value in error.trailing_metadata() or ():
        if name == "grpc-status-details-bin" and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            if status.code != error.code().value[0]:
                raise AssertionError(f"status details code {status.code} != {error.code()}")
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return info
    return None


def well_formed(method: str, error: grpc.RpcError) -> str:
    """The reason of a well-formed error of ``method``; AssertionError otherwise."""
    code = error.code()
    assert code in CODES[method], f"{method}: status {code} ({error.details()!r})"
    info = error_info(error)
    assert info is not None, f"{method}: {code} without ErrorInfo ({error.details()!r})"
    assert info.domain == DOMAIN, f"{method}: ErrorInfo domain {info.domain!r}"
    reason = error_reason(error)
    assert reason == info.reason
    assert reason in REASONS[code], f"{method}: {code} with undocumented reason {reason!r}"
    return reason


@dataclass(frozen=True, slots=True)
class Expect:
    """What the oracle predicts: an error (code, possible reasons) or success."""

    code: grpc.StatusCode
    reasons: frozenset[str] = frozenset()
    version: int = 0
    """Success: the etag the reply carries."""
    replay: bool = False
    seat: int | None = None

    @staticmethod
    def error(code: grpc.StatusCode, *reasons: str) -> Expect:
        return Expect(code, frozenset(reasons))


def check_error(method: str, error: grpc.RpcError, expect: Expect, what: str) -> None:
    reason = well_formed(method, error)
    assert expect.code != SC.OK, f"{what}: expected success, got {error.code()} {reason}"
    assert error.code() == expect.code and reason in expect.reasons, (
        f"{what}: expected {expect.code} {sorted(expect.reasons)}, "
        f"got {error.code()} {reason} ({error.details()!r})"
    )


# ------------------------------------------------------------------ what a seat may see


def key(card: cards_pb2.Card) -> CardKey:
    return (card.suit, card.rank)


def real(card: CardKey) -> bool:
    return 1 <= card[0] <= 4 and 1 <= card[1] <= 10


_CARD_TYPE: Final = cards_pb2.Card.DESCRIPTOR.full_name


def cards_in(msg: Message, skip: frozenset[str] = frozenset()) -> Iterator[CardKey]:
    """Every Card anywhere in ``msg`` (top-level fields in ``skip`` left out)."""
    for descriptor, value in msg.ListFields():
        if descriptor.name in skip or descriptor.message_type is None:
            continue
        items: Iterable[Message] = value if descriptor.is_repeated else (value,)
        for item in items:
            if descriptor.message_type.full_name == _CARD_TYPE:
                assert isinstance(item, cards_pb2.Card)
                yield key(item)
            else:
                yield from cards_in(item)


def played_cards(view: game_pb2.GameView) -> list[tuple[int, CardKey]]:
    """(seat, card) of every card played in the current hand."""
    plays = [p for trick in view.tricks for p in trick.plays]
    plays.extend(view.current_trick.plays)
    return [(p.seat, key(p.card)) for p in plays]


def allowed_cards(view: game_pb2.GameView) -> set[CardKey]:
    """What the viewer may see of the current hand: its own cards and public ones."""
    allowed = {key(c) for c in (*view.hand, *view.dealt)}
    allowed.update(c for _, c in played_cards(view))
    allowed.update(key(c) for s in view.seats for c in s.shown)
    return allowed


def event_problems(
    events: Sequence[game_pb2.Event], seat: int | None, allowed: set[CardKey] | None
) -> list[str]:
    """Events the viewer ``seat`` must not see; ``allowed``: the cards it may see of the
    current hand (checked for the events after the last HandStarted), None: skip that."""
    problems: list[str] = []
    starts = [i for i, e in enumerate(events) if e.WhichOneof("kind") == "hand_started"]
    first_current = starts[-1] + 1 if starts else 0
    for i, event in enumerate(events):
        kind = event.WhichOneof("kind")
        if kind == "cards_dealt" and event.cards_dealt.seat != seat:
            problems.append(f"seat {seat} sees seat {event.cards_dealt.seat}'s CardsDealt")
        if kind in {"signal_sent", "directive_sent"}:
            sender = event.signal_sent.seat if kind == "signal_sent" else event.directive_sent.seat
            if seat is None or sender % 2 != seat % 2:
                problems.append(f"seat {seat} sees a {kind} of seat {sender}")
        if allowed is not None and i >= first_current:
            leaked = sorted(c for c in cards_in(event) if c not in allowed)
            if leaked:
                problems.append(f"seat {seat} sees {leaked} in a {kind} event")
    return problems


def view_problems(
    view: game_pb2.GameView, seat: int | None, events: Sequence[game_pb2.Event] | None = None
) -> list[str]:
    """What is wrong with ``view`` as ``seat``'s (None: a spectator's) view."""
    problems: list[str] = []
    if seat is None:
        if view.HasField("seat") or view.hand or view.dealt or view.signals:
            problems.append("a spectator's view has a seat, cards or signals")
        if view.legal_actions or view.legal_moves or view.legal_messages:
            problems.append("a spectator's view has actions")
        if view.HasField("embit_value") or view.HasField("flor_value"):
            problems.append("a spectator's view has declaration values")
    else:
        if not view.HasField("seat") or view.seat != seat:
            problems.append(f"seat {seat} got the view of seat {view.seat}")
        if len(view.seats) == 6 and view.seats[seat].hand_size != len(view.hand):
            problems.append(f"seat {seat}: hand_size {view.seats[seat].hand_size} != hand")
        if any(m.seat % 2 != seat % 2 for m in view.signals):
            problems.append(f"seat {seat} sees the other team's signals")
        for action in view.legal_actions:
            if action.WhichOneof("kind") not in _MESSAGES and view.to_act != seat:
                problems.append(f"seat {seat} may {action} while {view.to_act} is to act")
            if not protocol_valid(action):
                problems.append(f"seat {seat}: legal action {action} is not a valid action")
    hand = {key(c) for c in view.hand}
    if not hand <= {key(c) for c in view.dealt}:
        problems.append(f"seat {seat}: hand {sorted(hand)} not within dealt")
    allowed = allowed_cards(view)
    leaked = sorted(c for c in cards_in(view, frozenset({"draws", "events"})) if c not in allowed)
    if leaked:
        problems.append(f"seat {seat} sees {leaked} in its view")
    in_hand = allowed if view.phase == game_pb2.PHASE_PLAY else None
    problems += event_problems(view.events if events is None else events, seat, in_hand)
    return problems


def truth_problems(views: dict[int | None, game_pb2.GameView]) -> list[str]:
    """Checks needing every seat's view of one version: conservation and leaks."""
    problems: list[str] = []
    base = views[0]
    hands = {s: [key(c) for c in views[s].hand] for s in range(6)}
    played = played_cards(base)
    if base.phase == game_pb2.PHASE_PLAY:
        cards = [c for s in range(6) for c in hands[s]] + [c for _, c in played]
        if len(cards) != 18 or len(set(cards)) != 18 or not all(map(real, cards)):
            problems.append(f"the hand holds {len(cards)} cards, {len(set(cards))} distinct")
        for s in range(6):
            mine = set(hands[s]) | {c for seat, c in played if seat == s}
            if mine != {key(c) for c in views[s].dealt} or len(views[s].dealt) != 3:
                problems.append(f"seat {s}: hand + played {sorted(mine)} != dealt")
            shown = {key(c) for c in base.seats[s].shown}
            if not shown <= set(hands[s]):
                problems.append(f"seat {s}: shown {sorted(shown)} not in its hand")
    owner = {c: s for s in range(6) for c in hands[s]}
    for viewer, view in views.items():
        visible = set(cards_in(view, frozenset({"draws", "events"})))
        starts = [i for i, e in enumerate(view.events) if e.WhichOneof("kind") == "hand_started"]
        for event in view.events[starts[-1] + 1 :] if starts else ():
            visible.update(cards_in(event))
        for card in visible:
            holder = owner.get(card)
            shown = {key(c) for c in view.seats[holder].shown} if holder is not None else set()
            if holder is not None and holder != viewer and card not in shown:
                problems.append(f"viewer {viewer} sees {card}, held by seat {holder}")
    public = {viewer: public_part(view) for viewer, view in views.items()}
    for viewer, part in public.items():
        if part != public[0]:
            problems.append(f"viewer {viewer}'s public view differs from seat 0's")
    return problems


def public_part(view: game_pb2.GameView) -> bytes:
    copy = game_pb2.GameView()
    copy.CopyFrom(view)
    copy.ClearField("seat")
    copy.ClearField("legal_actions")
    copy.ClearField("legal_moves")
    copy.ClearField("legal_messages")
    copy.ClearField("hand")
    copy.ClearField("dealt")
    copy.ClearField("embit_value")
    copy.ClearField("flor_value")
    copy.ClearField("signals")
    copy.ClearField("events")
    return copy.SerializeToString(deterministic=True)


# ------------------------------------------------------------------ actions


def protocol_valid(action: game_pb2.Action) -> bool:
    """What the protocol (not the rules) accepts: a kind set, known enum numbers."""
    kind = action.WhichOneof("kind")
    if kind == "play_card":
        suit, rank = action.play_card.suit, action.play_card.rank
        spanish = 1 <= suit <= 4 and 1 <= rank <= 10
        # The piquet pack: hearts, diamonds, clubs, spades; 7, J, K and 8, 9, T, Q, A.
        piquet = suit in (5, 6, 2, 7) and rank in (7, 8, 10, 11, 12, 13, 14, 15)
        return spanish or piquet  # a card of either pack (the game refuses another pack's)
    if kind == "call":
        return 1 <= action.call <= 25
    if kind == "signal":
        return 1 <= action.signal <= 10
    if kind == "directive":
        return 1 <= action.directive <= 8
    return kind in ("choose_dealer", "cut_deck")


def action_key(action: game_pb2.Action) -> tuple[str, int, int]:
    kind = action.WhichOneof("kind")
    if kind is None:
        return ("", 0, 0)
    if kind == "play_card":
        return (kind, action.play_card.suit, action.play_card.rank)
    value = getattr(action, kind)
    assert isinstance(value, int)
    return (kind, value, 0)


def _card_action(suit: int, rank: int) -> game_pb2.Action:
    return game_pb2.Action(play_card=proto_card(suit, rank))


def _action(kind: str, value: int) -> game_pb2.Action:
    action = game_pb2.Action()
    setattr(action, kind, value)
    return action


def _edgy(low: int, high: int) -> st.SearchStrategy[int]:
    return st.one_of(st.integers(low, high), st.sampled_from(_EDGES), INT32)


ARBITRARY_ACTIONS: Final[st.SearchStrategy[game_pb2.Action]] = st.one_of(
    st.builds(_card_action, st.integers(1, 4), st.integers(1, 10)),
    st.builds(_card_action, _edgy(0, 5), _edgy(0, 11)),
    st.builds(_action, st.just("call"), _edgy(0, 22)),
    st.builds(_action, st.just("choose_dealer"), _edgy(-1, 7)),
    st.builds(_action, st.just("cut_deck"), _edgy(-1, 41)),
    st.builds(_action, st.just("signal"), _edgy(0, 7)),
    st.builds(_action, st.just("directive"), _edgy(0, 7)),
    st.just(game_pb2.Action()),
    st.just(game_pb2.Action(play_card=cards_pb2.Card())),
)


def index(data: st.DataObject, label: str) -> int:
    """An index into a sequence whose length depends on the servers' state: what is drawn
    must not depend on it, or hypothesis cannot replay and shrink examples."""
    return data.draw(st.integers(0, 2**16), label=label)


def draw_action(data: st.DataObject, legal: Sequence[game_pb2.Action]) -> game_pb2.Action | None:
    """A legal action half of the time (a turn action when there is one), else anything;
    None: the request has no action field at all."""
    pick = data.draw(st.integers(0, 11), label="action kind")
    which = index(data, "legal action")
    arbitrary = data.draw(ARBITRARY_ACTIONS, label="action")
    turn = [a for a in legal if a.WhichOneof("kind") not in _MESSAGES]
    if pick < 6 and turn:
        return turn[which % len(turn)]
    if pick < 7 and legal:
        return legal[which % len(legal)]
    if pick == 11:
        return None
    return arbitrary


# ------------------------------------------------------------------ callers


@dataclass(frozen=True, slots=True)
class Caller:
    label: str
    metadata: Metadata
    player: str | None = None
    """Who a valid token names (None when authentication must fail)."""
    role: str = "player"
    auth: frozenset[str] = frozenset()
    """The UNAUTHENTICATED reasons expected; empty when the token is valid."""

    def seat_in(self, game: Game) -> int | None:
        """The caller's seat: its player's, none for a spectator's token (even
        one naming a seated player: a spectator only looks)."""
        return None if self.role == "spectator" else game.seat_of(self.player)


_ASCII: Final = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
_SEATED_KINDS: Final = ("seated_spectator", "lowercase_scheme", "valid_then_garbage")
_UNSEATED_KINDS: Final = ("stranger", "spectator", "lobby")
_HOSTILE_KINDS: Final = (
    "none",
    "empty",
    "garbage",
    "not_bearer",
    "bearer_only",
    "expired",
    "wrong_secret",
    "bad_role",
    "long_sub",
    "no_exp",
    "alg_none",
    "wrong_audience",
    "garbage_then_valid",
)


def _raw_token(claims: dict[str, object], *, key: str | None = SECRET, alg: str = "HS256") -> str:
    base: dict[str, object] = {
        "iss": "truc-lobby",
        "aud": "truc-game",
        "iat": int(time.time()),
        "exp": int(time.time()) + 3600,
    }
    base.update(claims)
    return jwt.encode({k: v for k, v in base.items() if v is not None}, key, algorithm=alg)


def _auth(value: str) -> Metadata:
    return (("authorization", value),)


def make_caller(data: st.DataObject, game: Game) -> Caller:
    pick = data.draw(st.integers(0, 19), label="token class")
    kind = "to_act" if pick < 10 else "seat" if pick < 12 else ""
    odd = data.draw(st.sampled_from(_SEATED_KINDS), label="seated token")
    unseated = data.draw(st.sampled_from(_UNSEATED_KINDS), label="unseated token")
    hostile = data.draw(st.sampled_from(_HOSTILE_KINDS), label="hostile token")
    kind = kind or (odd if pick == 12 else unseated if pick < 15 else hostile)
    invalid = frozenset({"TOKEN_INVALID"})
    if kind in ("to_act", "seat", "seated_spectator", "lowercase_scheme", "valid_then_garbage"):
        seat = data.draw(st.integers(0, 5), label="seat")
        if kind == "to_act" and game.to_act is not None:
            seat = game.to_act
        player = game.players[seat]
        role = "spectator" if kind == "seated_spectator" else "player"
        token = bearer(player, role=role)
        if kind == "lowercase_scheme":
            token = _auth("bearer " + token[0][1].split(" ", 1)[1])
        if kind == "valid_then_garbage":
            token = (*token, ("authorization", "Bearer garbage"))
        return Caller(kind, token, player, role)
    if kind in ("stranger", "spectator", "lobby"):
        player = "the-lobby" if kind == "lobby" else f"stranger-{kind}"
        role = {"stranger": "player", "spectator": "spectator", "lobby": "lobby"}[kind]
        return Caller(kind, bearer(player, role=role), player, role)
    if kind == "none":
        return Caller(kind, (), auth=frozenset({"TOKEN_MISSING"}))
    if kind == "empty":
        return Caller(kind, _auth(""), auth=frozenset({"TOKEN_MISSING"}))
    if kind in ("garbage", "garbage_then_valid"):
        text = data.draw(st.text(_ASCII, min_size=1, max_size=300), label="garbage token")
        value = data.draw(st.sampled_from([text, "Bearer " + text]), label="scheme")
        metadata = _auth(value)
        if kind == "garbage_then_valid":
            metadata = (*metadata, *bearer(game.players[0]))
        return Caller(kind, metadata, auth=frozenset({"TOKEN_MISSING", "TOKEN_INVALID"}))
    player = game.players[data.draw(st.integers(0, 5), label="seat")]
    tokens: dict[str, Callable[[], str]] = {
        "not_bearer": lambda: "Basic " + issue_token(SECRET, player),
        "bearer_only": lambda: "Bearer",
        "expired": lambda: "Bearer " + issue_token(SECRET, player, ttl_seconds=-30),
        "wrong_secret": lambda: "Bearer " + issue_token("x" * 40, player),
        "bad_role": lambda: "Bearer " + issue_token(SECRET, player, role="admin"),
        "long_sub": lambda: "Bearer " + issue_token(SECRET, "p" * 129),
        "no_exp": lambda: "Bearer " + _raw_token({"sub": player, "exp": None}),
        "alg_none": lambda: "Bearer " + _raw_token({"sub": player}, key=None, alg="none"),
        "wrong_audience": lambda: "Bearer " + _raw_token({"sub": player, "aud": "other"}),
    }
    reasons = frozenset({"TOKEN_EXPIRED"}) if kind == "expired" else invalid
    return Caller(kind, _auth(tokens[kind]()), auth=reasons)


# ------------------------------------------------------------------ games and watchers


@dataclass(slots=True)
class Game:
    name: str
    players: list[str]
    kind: str
    version: int = 1
    fresh: int = 0
    """Successful SubmitActions that made a new version."""
    replays: int = 0
    request_ids: dict[tuple[str, str], int] = field(default_factory=dict)
    """(player, request id) -> the version it produced: request ids are per player."""
    request_actions: dict[tuple[str, str], tuple[str, int, int]] = field(default_factory=dict)
    """(player, request id) -> the action it applied (a request id sent again with
    another action is REQUEST_ID_REUSED)."""
    to_act: int | None = None
    phase: game_pb2.Phase.ValueType = game_pb2.PHASE_UNSPECIFIED
    fixed_turns: bool = True
    """Created with turn_seconds=3600: no turn may time out during the test."""
    watchers: list[Watcher] = field(default_factory=list)

    def seat_of(self, player: str | None) -> int | None:
        return self.players.index(player) if player in self.players else None

    def follow(self, view: game_pb2.GameView) -> None:
        self.to_act = view.to_act if view.HasField("to_act") else None
        self.phase = view.phase

    @property
    def over(self) -> bool:
        return self.phase in (game_pb2.PHASE_MATCH_OVER, game_pb2.PHASE_NO_DEAL)


class Watcher:
    """A WatchGame stream from version 1, consumed on a thread and checked as it comes."""

    def __init__(self, address: str, game: Game, metadata: Metadata, seat: int | None) -> None:
        self.game = game
        self.seat = seat
        self.versions: list[int] = []
        self.problems: list[str] = []
        self.outcome: str | None = None
        self._channel = grpc.insecure_channel(address)
        client = game_service_pb2_grpc.GameServiceStub(self._channel)
        request = game_service_pb2.WatchGameRequest(name=game.name)
        self._call = client.WatchGame(request, metadata=metadata)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for response in self._call:
                expected = self.versions[-1] + 1 if self.versions else 1
                if response.version != expected:
                    self.problems.append(f"got version {response.version}, not {expected}")
                self.versions.append(response.version)
                if response.game.etag != str(response.version) or response.game.events:
                    self.problems.append(f"version {response.version}: bad etag or events")
                if any(e.version != response.version for e in response.events):
                    self.problems.append(f"version {response.version}: events of other versions")
                problems = view_problems(response.game, self.seat, response.events)
                self.problems.extend(f"watch v{response.version}: {p}" for p in problems)
            self.outcome = "ended"
        except grpc.RpcError as exc:
            self.outcome = exc.code().name
        except Exception as exc:
            self.problems.append(repr(exc))
            self.outcome = "crashed"

    def wait_for(self, version: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.outcome is None:
            if self.versions and self.versions[-1] >= version:
                return
            time.sleep(0.02)

    def stop(self) -> None:
        self._call.cancel()  # type: ignore[no-untyped-call]
        self._thread.join(5)
        self._channel.close()


_FIXED_DEALS: Final = (
    (
        ("1Sw", "2Sw", "3Sw"),
        ("4Co", "5Co", "6Co"),
        ("7Cl", "1Cl", "2Cl"),
        ("3Cu", "4Cu", "5Cu"),
        ("6Sw", "7Sw", "KSw"),
        ("KCo", "KCl", "KCu"),
    ),
    (
        ("1Co", "2Co", "7Co"),
        ("JSw", "NSw", "4Sw"),
        ("3Cl", "4Cl", "5Cl"),
        ("6Cu", "7Cu", "JCu"),
        ("NCu", "1Cu", "2Cu"),
        ("JCo", "NCl", "5Sw"),
    ),
)

LIVE_KINDS: Final[dict[str, dict[str, object]]] = {
    # The captains drew: the winner chooses the dealer.
    "draw": {},
    "play": {"dealer": 0},
    # The cutter cuts: cut_deck is legal.
    "cut": {"dealer": 2, "options": game_pb2.RuleOptions(cut=game_pb2.CUT_MODE_CUTTER)},
    # Short matches, so that matches end (GAME_OVER, watches ending) during the fuzz.
    "quick": {
        "dealer": 1,
        "options": game_pb2.RuleOptions(target_score=2, manches_to_win=1),
    },
    # Hands full of flors, then PHASE_NO_DEAL.
    "fixed": {"dealer": 0, "fixed_deals": [fixed_deal(deal) for deal in _FIXED_DEALS]},
}
_MAX_GAMES_PER_KIND: Final = 12


class Arena:
    """The replicas, the games the fuzz plays on, and what was observed of them."""

    def __init__(self, replicas: list[Replica]) -> None:
        self.replicas = replicas
        self.channels = [grpc.insecure_channel(r.address) for r in replicas]
        self.clients = [game_service_pb2_grpc.GameServiceStub(c) for c in self.channels]
        self.games: dict[str, Game] = {}
        self.live: dict[str, Game] = {}
        self.created: Counter[str] = Counter()
        self.stats: Counter[str] = Counter()
        self._turn = 0

    def client(self) -> game_service_pb2_grpc.GameServiceStub:
        self._turn += 1
        return self.clients[self._turn % len(self.clients)]

    def raw(self, replica: int, method: str) -> grpc.UnaryUnaryMultiCallable[bytes, bytes]:
        return self.channels[replica].unary_unary(
            _SERVICE + method, request_serializer=_same, response_deserializer=_same
        )

    def create(self, kind: str, *, watch: bool = True) -> Game:
        players = new_players()
        request = game_service_pb2.CreateGameRequest(
            players=players,
            turn_seconds=3600,
            **LIVE_KINDS[kind],  # type: ignore[arg-type]
        )
        response = self.clients[0].CreateGame(request, metadata=bearer("the-lobby", role="lobby"))
        game = Game(response.name, players, kind)
        game.follow(response.game)
        self.games[game.name] = game
        self.created[kind] += 1
        if not watch:
            return game
        game.watchers = [
            Watcher(self.replicas[0].address, game, bearer(players[0]), 0),
            Watcher(self.replicas[1].address, game, bearer("w", role="spectator"), None),
        ]
        return game

    def start(self) -> None:
        for kind in LIVE_KINDS:
            self.live[kind] = self.create(kind)
        self.live["raw"] = self.create("play")

    def fuzz_games(self) -> list[Game]:
        return [g for kind, g in self.live.items() if kind != "raw"]

    def replace_if_over(self, game: Game) -> None:
        for kind, live in self.live.items():
            if live is game and game.over and self.created[game.kind] < _MAX_GAMES_PER_KIND:
                self.live[kind] = self.create(game.kind)

    def reference(self, game: Game, seat: int) -> game_pb2.GameView:
        """The seat's view now; checks it against the model and for leaks."""
        request = game_service_pb2.GetGameRequest(name=game.name)
        view = self.client().GetGame(request, metadata=bearer(game.players[seat])).game
        assert view.etag == str(game.version), (
            f"{game.name}: the game is at {view.etag}, but {game.version} was expected "
            f"(1 + {game.fresh} observed actions)"
        )
        problems = view_problems(view, seat)
        assert not problems, f"{game.name} seat {seat}: {problems}"
        game.follow(view)
        return view

    def close(self) -> None:
        for game in self.games.values():
            for watcher in game.watchers:
                watcher.stop()
        for channel in self.channels:
            channel.close()


def _same(value: bytes) -> bytes:
    return value


@pytest.fixture(scope="module")
def arena(replicas: list[Replica]) -> Iterator[Arena]:
    world = Arena(replicas)
    world.start()
    yield world
    world.close()


# ------------------------------------------------------------------ SubmitAction oracle


def classify_name(arena: Arena, name: str) -> tuple[bool, Game | None]:
    """(well-formed, the known game it names)."""
    return _NAME.fullmatch(name) is not None, arena.games.get(name)


def predict_submit(
    arena: Arena,
    request: game_service_pb2.SubmitActionRequest,
    caller: Caller,
    legal: Callable[[Game, int], Sequence[game_pb2.Action]],
) -> Expect:
    """The documented outcome, in the order the checks are documented to run."""
    if caller.auth:
        return Expect(SC.UNAUTHENTICATED, caller.auth)
    well, game = classify_name(arena, request.name)
    if not well:
        return Expect.error(SC.INVALID_ARGUMENT, "BAD_NAME")
    if not protocol_valid(request.action):
        return Expect.error(SC.INVALID_ARGUMENT, "BAD_ACTION")
    if request.response_view not in _RESPONSE_VIEWS:
        return Expect.error(SC.INVALID_ARGUMENT, "BAD_REQUEST")
    if not valid_request_id(request.request_id):
        return Expect.error(SC.INVALID_ARGUMENT, "BAD_REQUEST")
    if len(request.etag) > 64:
        return Expect.error(SC.INVALID_ARGUMENT, "BAD_REQUEST")
    if game is None:
        return Expect.error(SC.NOT_FOUND, "GAME_NOT_FOUND")
    seat = caller.seat_in(game)
    if seat is None:
        return Expect.error(SC.PERMISSION_DENIED, "NOT_SEATED")
    key = (caller.player or "", request.request_id)
    if key in game.request_ids:
        if game.request_actions[key] != action_key(request.action):
            return Expect.error(SC.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
        return Expect(SC.OK, version=game.request_ids[key], replay=True, seat=seat)
    if request.etag and request.etag != str(game.version):
        return Expect.error(SC.ABORTED, "STALE_ETAG")
    if action_key(request.action) in {action_key(a) for a in legal(game, seat)}:
        return Expect(SC.OK, version=game.version + 1, seat=seat)
    return Expect(SC.FAILED_PRECONDITION, RULES_REASONS)


def settle_submit(
    arena: Arena,
    request: game_service_pb2.SubmitActionRequest,
    expect: Expect,
    outcome: game_service_pb2.SubmitActionResponse | grpc.RpcError,
    what: str,
    *,
    caller: Caller,
) -> None:
    """Check the outcome against the prediction and move the model on."""
    game = arena.games.get(request.name)
    if isinstance(outcome, grpc.RpcError):
        arena.stats[f"{outcome.code().name}"] += 1
        try:
            check_error("SubmitAction", outcome, expect, what)
        except AssertionError:
            if game is not None:
                arena.reference(game, 0)  # is the game still where the model has it?
            raise
        return
    assert expect.code == SC.OK and game is not None, (
        f"{what}: SubmitAction succeeded (etag {outcome.game.etag}), "
        f"expected {expect.code} {sorted(expect.reasons)}"
    )
    arena.stats["replay" if expect.replay else "applied"] += 1
    view = outcome.game
    assert view.etag == str(expect.version), f"{what}: etag {view.etag}, not {expect.version}"
    assert not view.events, f"{what}: the response's view carries events"
    assert all(e.version == expect.version for e in outcome.events), what
    problems = view_problems(view, expect.seat, outcome.events)
    assert not problems, f"{what}: {problems}"
    if expect.replay:
        game.replays += 1
        return
    game.version = expect.version
    game.fresh += 1
    if request.request_id:
        game.request_ids[(caller.player or "", request.request_id)] = expect.version
        game.request_actions[(caller.player or "", request.request_id)] = action_key(request.action)
    game.follow(view)
    arena.replace_if_over(game)


def submit(
    client: game_service_pb2_grpc.GameServiceStub,
    request: game_service_pb2.SubmitActionRequest,
    metadata: Metadata,
) -> game_service_pb2.SubmitActionResponse | grpc.RpcError:
    try:
        response: game_service_pb2.SubmitActionResponse = client.SubmitAction(
            request, metadata=metadata, timeout=10
        )
    except grpc.RpcError as exc:
        return exc
    return response


class References:
    """Reference views taken before an example's request is sent."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self.views: dict[tuple[str, int], game_pb2.GameView] = {}

    def legal(self, game: Game, seat: int) -> Sequence[game_pb2.Action]:
        found = self.views.get((game.name, seat))
        if found is None:
            found = self.views[(game.name, seat)] = self.arena.reference(game, seat)
        return found.legal_actions


_MALFORMED_NAMES: Final = (
    "",
    "games/",
    "games",
    "game/abc",
    "Games/abc",
    "/games/abc",
    "games/abc/",
    "games/a b",
    "games/" + "a" * 65,
    "games/ü",
    "games/abc\n",
    "games/abc\x00",
    "games/../abc",
    "games/*",
    "games/%41",
    "games/abc/events",
    " games/abc",
)


def draw_name(data: st.DataObject, arena: Arena, game: Game) -> str:
    pick = data.draw(st.integers(0, 11), label="name kind")
    if pick < 8:
        return game.name
    if pick == 8:
        names = sorted(arena.games)
        return names[index(data, "another game") % len(names)]
    if pick == 9:
        return "games/" + data.draw(st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True))
    choices = [
        st.sampled_from(_MALFORMED_NAMES),
        st.sampled_from([game.name + " ", game.name.upper(), game.name + "/x", game.name[1:]]),
        st.text(max_size=100),
        st.text(max_size=100).map(lambda t: "games/" + t),
    ]
    return data.draw(st.one_of(choices), label="malformed name")


def draw_etag(data: st.DataObject, version: int) -> str:
    pick = data.draw(st.integers(0, 11), label="etag kind")
    if pick < 4:
        return ""
    if pick < 8:
        return str(version)
    choices = [
        st.sampled_from([str(version - 1), str(version + 1), "0" + str(version), "-1"]),
        st.sampled_from([f" {version}", f"{version} ", f"{version}.0", "1" * 20]),
        st.text(max_size=200),
        st.just("9" * 2000),
    ]
    return data.draw(st.one_of(choices), label="etag")


def draw_request_id(data: st.DataObject, arena: Arena, game: Game) -> str:
    pick = data.draw(st.integers(0, 11), label="request id kind")
    if pick < 7:
        return str(uuid.uuid4())  # not drawn: hypothesis would repeat its favourite uuids
    if pick < 9:
        which = index(data, "reused request id")
        used = sorted({rid for g in arena.games.values() for _, rid in g.request_ids})
        mine = sorted({rid for _, rid in game.request_ids})
        pool = mine if pick == 7 and mine else used
        return pool[which % len(pool)] if pool else str(uuid.uuid4())
    choices = [
        st.just(""),
        st.text(_ASCII, min_size=64, max_size=64),
        st.text(_ASCII, min_size=65, max_size=200),
        st.text(max_size=80),
    ]
    return data.draw(st.one_of(choices), label="request id")


# ------------------------------------------------------------------ 1. structured fuzz


@fuzz_settings(SUBMIT_EXAMPLES)
@given(data=st.data())
def test_submit_action_fuzz_gets_documented_errors_or_legal_success(
    arena: Arena, data: st.DataObject
) -> None:
    game = data.draw(st.sampled_from(arena.fuzz_games()), label="game")
    client = arena.clients[data.draw(st.integers(0, 1), label="replica")]
    caller = make_caller(data, game)
    name = draw_name(data, arena, game)
    refs = References(arena)
    target = arena.games.get(name)
    seat = caller.seat_in(target) if target is not None else None
    legal = refs.legal(target, seat) if target is not None and seat is not None else ()
    action = draw_action(data, legal)
    request = game_service_pb2.SubmitActionRequest(
        name=name,
        action=action,
        etag=draw_etag(data, game.version if target is None else target.version),
        request_id=draw_request_id(data, arena, target or game),
    )
    expect = predict_submit(arena, request, caller, refs.legal)
    outcome = submit(client, request, caller.metadata)
    settle_submit(arena, request, expect, outcome, f"SubmitAction as {caller.label}", caller=caller)


@fuzz_settings(GET_EXAMPLES)
@given(data=st.data())
def test_get_game_fuzz_gets_documented_errors_or_the_callers_view(
    arena: Arena, data: st.DataObject
) -> None:
    games = list(arena.games.values())
    game = games[index(data, "game") % len(games)]
    client = arena.clients[data.draw(st.integers(0, 1), label="replica")]
    caller = make_caller(data, game)
    name = draw_name(data, arena, game)
    well, target = classify_name(arena, name)
    seat = caller.seat_in(target) if target is not None else None
    if caller.auth:
        expect = Expect(SC.UNAUTHENTICATED, caller.auth)
    elif not well:
        expect = Expect.error(SC.INVALID_ARGUMENT, "BAD_NAME")
    elif target is None:
        expect = Expect.error(SC.NOT_FOUND, "GAME_NOT_FOUND")
    elif seat is None and caller.role == "player":
        expect = Expect.error(SC.PERMISSION_DENIED, "NOT_SEATED")
    else:
        expect = Expect(SC.OK, seat=seat)
    try:
        view = client.GetGame(
            game_service_pb2.GetGameRequest(name=name), metadata=caller.metadata, timeout=10
        ).game
    except grpc.RpcError as exc:
        arena.stats["GetGame error"] += 1
        check_error("GetGame", exc, expect, f"GetGame as {caller.label}")
        return
    arena.stats["GetGame ok"] += 1
    assert expect.code == SC.OK, f"GetGame as {caller.label} succeeded, expected {expect}"
    assert target is not None and int(view.etag) >= target.version
    problems = view_problems(view, expect.seat)
    assert not problems, f"GetGame as {caller.label}: {problems}"


_PLAYER_IDS: Final = st.one_of(
    st.uuids().map(str),
    st.sampled_from(["", "p" * 128, "p" * 129, "ü", " ", "\x00"]),
    st.text(max_size=40),
)


def _deal_strategy() -> st.SearchStrategy[game_pb2.Deal]:
    cards = st.builds(
        proto_card,
        suit=st.one_of(st.integers(1, 4), st.sampled_from([0, 5, 99])),
        rank=st.one_of(st.integers(1, 10), st.sampled_from([0, 11, 99])),
    )
    shuffled = st.permutations([(s, r) for s in range(1, 5) for r in range(1, 11)]).map(
        lambda deck: game_pb2.Deal(
            hands=[
                game_pb2.Hand(cards=[proto_card(s, r) for s, r in deck[i : i + 3]])
                for i in range(0, 18, 3)
            ]
        )
    )
    hands = st.lists(st.builds(game_pb2.Hand, cards=st.lists(cards, max_size=4)), max_size=7)
    return st.one_of(shuffled, st.builds(game_pb2.Deal, hands=hands))


@fuzz_settings(CREATE_EXAMPLES)
@given(data=st.data())
def test_create_game_fuzz_gets_documented_errors_or_a_sound_game(
    arena: Arena, data: st.DataObject
) -> None:
    taken = [g.name[len("games/") :] for g in arena.games.values()]

    def weird(label: str) -> bool:
        return data.draw(st.integers(0, 5), label=f"weird {label}") == 0

    request = game_service_pb2.CreateGameRequest(players=new_players(), turn_seconds=3600)
    if weird("players"):
        sane = list(request.players)
        request.ClearField("players")
        request.players.extend(
            data.draw(
                st.one_of(st.lists(_PLAYER_IDS, max_size=8), st.just([*sane[:5], sane[0]])),
                label="players",
            )
        )
    for name, values in (
        ("perique_trick_rank", _edgy(0, 4)),
        ("ace_value", _edgy(-1, 2)),
        ("responder", _edgy(0, 3)),
        ("cut", _edgy(0, 3)),
        ("target_score", _edgy(-1, 260)),
        ("manches_to_win", _edgy(-1, 10)),
    ):
        if weird(name):
            setattr(request.options, name, data.draw(values, label=name))
    if weird("game_id"):
        request.game_id = data.draw(
            st.one_of(
                st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True),
                st.integers(0, 2**16).map(lambda i: taken[i % len(taken)]),
                st.text(max_size=70),
            ),
            label="game_id",
        )
    if weird("turn_seconds"):
        # Only refused values: a game with short turns would keep playing itself, on the
        # shared Redis, for the rest of the session.
        request.turn_seconds = data.draw(st.sampled_from([-1, 3601, 2**31 - 1, -(2**31)]))
    if weird("fixed_deals"):
        request.fixed_deals.extend(data.draw(st.lists(_deal_strategy(), max_size=2)))
    if weird("dealer"):
        request.dealer = data.draw(_edgy(-1, 6), label="dealer")
    for score in (request.start_scores, request.start_manches):
        if weird("scores"):
            score.team_a = data.draw(_edgy(-1, 30))
            score.team_b = data.draw(_edgy(-1, 30))
    players = list(request.players)
    lobby = not weird("token")
    token = bearer("the-lobby", role="lobby") if lobby else bearer("a-player")
    client = arena.clients[data.draw(st.integers(0, 1), label="replica")]
    try:
        response = client.CreateGame(request, metadata=token, timeout=10)
    except grpc.RpcError as exc:
        arena.stats["CreateGame error"] += 1
        reason = well_formed("CreateGame", exc)
        if len(players) != 6 and lobby:
            assert reason == "BAD_REQUEST", f"{len(players)} players: {reason}"
        if not lobby:
            assert reason in ("LOBBY_ONLY", "BAD_REQUEST"), f"player token: {reason}"
        return
    assert lobby and len(players) == 6 and len(set(players)) == 6, "CreateGame accepted junk"
    assert request.turn_seconds == 3600
    if request.game_id:
        assert response.name == "games/" + request.game_id
    view = response.game
    assert view.etag == "1" and [s.player for s in view.seats] == list(players)
    assert not view_problems(view, None), view_problems(view, None)
    game = Game(response.name, list(players), "created", fixed_turns=request.turn_seconds == 3600)
    game.follow(view)
    arena.games[game.name] = game
    arena.stats["created"] += 1


# ------------------------------------------------------------------ 2. raw-bytes fuzz


def _varint(number: int) -> bytes:
    number &= (1 << 64) - 1
    out = bytearray()
    while True:
        low = number & 0x7F
        number >>= 7
        if not number:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


def _tag(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _unknown_field(number: int, wire: int, payload: bytes, value: int) -> bytes:
    if wire == 0:
        return _tag(number, 0) + _varint(value)
    if wire == 1:
        return _tag(number, 1) + payload.ljust(8, b"\0")[:8]
    if wire == 5:
        return _tag(number, 5) + payload.ljust(4, b"\0")[:4]
    return _tag(number, 2) + _varint(len(payload)) + payload


UNKNOWN_FIELDS: Final = st.lists(
    st.builds(
        _unknown_field,
        st.one_of(st.integers(1, 40), st.integers(1, 2**29 - 1)),
        st.sampled_from([0, 1, 2, 5]),
        st.binary(max_size=64),
        st.integers(0, 2**64 - 1),
    ),
    min_size=1,
    max_size=6,
).map(b"".join)


def _groups(depth: int, number: int, balanced: bool) -> bytes:
    opened = _tag(number, 3) * depth
    return opened + (_tag(number, 4) * depth if balanced else b"")


def _nested_lengths(depth: int, number: int, core: bytes) -> bytes:
    for _ in range(depth):
        core = _tag(number, 2) + _varint(len(core)) + core
    return core


def draw_bytes(data: st.DataObject, valid: bytes, string_field: int) -> bytes:
    """A hostile variation of the serialized request ``valid``."""
    mutation = data.draw(
        st.sampled_from(
            [
                "valid",
                "truncated",
                "unknown fields",
                "random",
                "flipped",
                "nested groups",
                "nested lengths",
                "long string",
                "bad utf-8",
                "bad varint",
            ]
        ),
        label="mutation",
    )
    if mutation == "valid":
        return valid
    if mutation == "truncated":
        return valid[: index(data, "cut at") % max(len(valid), 1)]
    if mutation == "unknown fields":
        extra = data.draw(UNKNOWN_FIELDS, label="unknown fields")
        return data.draw(st.sampled_from([valid + extra, extra + valid]))
    if mutation == "random":
        return data.draw(st.binary(max_size=600), label="random bytes")
    if mutation == "flipped":
        flips = data.draw(
            st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=5)
        )
        mutable = bytearray(valid or b"\0")
        for where, byte in flips:
            mutable[where % len(mutable)] = byte
        return bytes(mutable)
    number = data.draw(st.one_of(st.integers(5, 40), st.just(string_field)), label="field")
    if mutation == "nested groups":
        depth = data.draw(st.integers(1, 5000), label="depth")
        return valid + _groups(depth, number, data.draw(st.booleans(), label="balanced"))
    if mutation == "nested lengths":
        depth = data.draw(st.integers(1, 1000), label="depth")
        return valid + _nested_lengths(depth, number, b"\x08\x01")
    if mutation == "long string":
        size = data.draw(st.sampled_from([65, 129, 1000, 60_000, 65_000, 70_000]), label="size")
        text = data.draw(st.sampled_from(["a", "é", "games/", "\x00"])) * size
        payload = text.encode()[:size]
        return valid + _tag(string_field, 2) + _varint(len(payload)) + payload
    if mutation == "bad utf-8":
        junk = data.draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"ab\x80cd"]))
        return valid + _tag(string_field, 2) + _varint(len(junk)) + junk
    return valid + _tag(string_field, 0) + b"\xff" * 10 + b"\x02"  # an 11-byte varint


RawOutcome = bytes | grpc.RpcError


def call_raw(arena: Arena, replica: int, method: str, data: bytes, meta: Metadata) -> RawOutcome:
    try:
        if method == "WatchGame":
            stream = arena.channels[replica].unary_stream(
                _SERVICE + method, request_serializer=_same, response_deserializer=_same
            )
            call = stream(data, metadata=meta, timeout=1.5)
            try:
                first: bytes | None = next(iter(call), None)
            finally:
                call.cancel()  # type: ignore[no-untyped-call]
            assert first is not None, f"WatchGame ended without a response: {data!r}"
            return first
        reply: bytes = arena.raw(replica, method)(data, metadata=meta, timeout=10)
    except grpc.RpcError as exc:
        return exc
    return reply


def check_raw_transport(method: str, data: bytes, outcome: RawOutcome) -> bool:
    """Outcomes decided before the service sees the request; True if it was one."""
    if len(data) > MAX_MESSAGE_BYTES:
        assert isinstance(outcome, grpc.RpcError), f"{method}: {len(data)} bytes accepted"
        assert outcome.code() == SC.RESOURCE_EXHAUSTED, outcome
        return True
    return False


def is_undecodable(method: str, data: bytes) -> bool:
    request_type = getattr(game_service_pb2, method + "Request")
    try:
        request_type.FromString(data)
    except DecodeError:
        return True
    return False


def check_undecodable(method: str, outcome: RawOutcome) -> None:
    """Bytes that do not parse get a well-formed INVALID_ARGUMENT (BAD_REQUEST)."""
    assert isinstance(outcome, grpc.RpcError), f"{method}: undecodable bytes accepted"
    assert outcome.code() == SC.INVALID_ARGUMENT, f"{method}: undecodable bytes: {outcome}"
    assert well_formed(method, outcome) == "BAD_REQUEST"


@pytest.mark.parametrize("method", ["SubmitAction", "GetGame", "WatchGame", "CreateGame"])
@fuzz_settings(RAW_EXAMPLES)
@given(data=st.data())
def test_raw_bytes_fuzz_gets_only_clean_errors(
    arena: Arena, method: str, data: st.DataObject
) -> None:
    game = arena.live["raw"]
    replica = data.draw(st.integers(0, 1), label="replica")
    refs = References(arena)
    seat = game.to_act if game.to_act is not None else 0
    caller = Caller("raw", bearer(game.players[seat]), game.players[seat])
    valid: bytes
    if method == "SubmitAction":
        legal = refs.legal(game, seat)
        turn = [a for a in legal if a.WhichOneof("kind") not in _MESSAGES] or list(legal)
        valid = game_service_pb2.SubmitActionRequest(
            name=game.name,
            action=turn[0] if turn else game_pb2.Action(call=game_pb2.CALL_TRUC),
            etag=str(game.version),
            request_id=str(uuid.uuid4()),
        ).SerializeToString()
    elif method == "GetGame":
        valid = game_service_pb2.GetGameRequest(name=game.name).SerializeToString()
    elif method == "WatchGame":
        after = index(data, "after_version") % game.version
        valid = game_service_pb2.WatchGameRequest(
            name=game.name, after_version=after
        ).SerializeToString()
    else:
        caller = Caller("lobby", bearer("the-lobby", role="lobby"), "the-lobby", "lobby")
        valid = (
            game_service_pb2.CreateGameRequest(turn_seconds=3600).SerializeToString()
            + game_service_pb2.CreateGameRequest(players=new_players()).SerializeToString()
        )
    raw = draw_bytes(data, valid, string_field=2 if method == "CreateGame" else 1)
    arena.stats[f"raw {method}"] += 1
    undecodable = len(raw) <= MAX_MESSAGE_BYTES and is_undecodable(method, raw)
    if method == "SubmitAction" and not undecodable and len(raw) <= MAX_MESSAGE_BYTES:
        parsed = game_service_pb2.SubmitActionRequest.FromString(raw)
        expect = predict_submit(arena, parsed, caller, refs.legal)
        reply = call_raw(arena, replica, method, raw, caller.metadata)
        response = (
            game_service_pb2.SubmitActionResponse.FromString(reply)
            if isinstance(reply, bytes)
            else reply
        )
        settle_submit(arena, parsed, expect, response, "raw SubmitAction", caller=caller)
        return
    outcome = call_raw(arena, replica, method, raw, caller.metadata)
    if check_raw_transport(method, raw, outcome):
        return
    if undecodable:
        arena.stats["undecodable"] += 1
        check_undecodable(method, outcome)
        return
    if method == "CreateGame":
        settle_raw_create(arena, game_service_pb2.CreateGameRequest.FromString(raw), outcome)
    elif method == "GetGame":
        name = game_service_pb2.GetGameRequest.FromString(raw).name
        settle_raw_read(arena, method, name, after=0, seat=seat, outcome=outcome)
    else:
        request = game_service_pb2.WatchGameRequest.FromString(raw)
        settle_raw_read(
            arena,
            method,
            request.name,
            after=request.after_version,
            seat=seat,
            outcome=outcome,
            response_view=request.response_view,
        )


def settle_raw_read(
    arena: Arena,
    method: str,
    name: str,
    *,
    after: int,
    seat: int,
    outcome: RawOutcome,
    response_view: int = 0,
) -> None:
    """GetGame (``after`` 0) or WatchGame by ``seat`` of the raw game."""
    well, target = classify_name(arena, name)
    game = arena.live["raw"]
    if isinstance(outcome, grpc.RpcError):
        if method == "WatchGame" and outcome.code() == SC.DEADLINE_EXCEEDED:
            # A watch from the current version waits for the next one.
            assert well and target is game and after == game.version, (name, after)
            return
        reason = well_formed(method, outcome)
        if not well:
            expected = "BAD_NAME"
        elif after < 0 or response_view not in _RESPONSE_VIEWS:
            expected = "BAD_REQUEST"
        elif target is None:
            expected = "GAME_NOT_FOUND"
        elif target is not game:
            expected = "NOT_SEATED"
        else:
            expected = "AFTER_VERSION_AHEAD" if after > game.version else "(success)"
        assert reason == expected, f"raw {method} {name!r} after {after}: {reason}"
        return
    assert well and target is game, f"raw {method} of {name!r} succeeded"
    if method == "GetGame":
        view = game_service_pb2.GetGameResponse.FromString(outcome).game
        assert view.etag == str(game.version), view.etag
        problems = view_problems(view, seat)
    else:
        response = game_service_pb2.WatchGameResponse.FromString(outcome)
        assert after < game.version and response.version == after + 1, (after, response.version)
        problems = view_problems(response.game, seat, response.events)
    assert not problems, f"raw {method}: {problems}"


def settle_raw_create(
    arena: Arena, request: game_service_pb2.CreateGameRequest, outcome: RawOutcome
) -> None:
    if isinstance(outcome, grpc.RpcError):
        reason = well_formed("CreateGame", outcome)
        assert reason in ("BAD_REQUEST", "GAME_EXISTS"), reason
        return
    response = game_service_pb2.CreateGameResponse.FromString(outcome)
    players = list(request.players)
    assert len(set(players)) == 6 and response.game.etag == "1"
    assert not view_problems(response.game, None)
    game = Game(response.name, players, "raw-created", fixed_turns=request.turn_seconds == 3600)
    game.follow(response.game)
    arena.games[game.name] = game
    arena.stats["raw created"] += 1


# ------------------------------------------------------------------ 4. WatchGame


_WATCH_CASES: Final = [
    # (name, after_version, token, reason): the checks run token, name, version, game, seat.
    ("game", -1, "seat", "BAD_REQUEST"),
    ("game", -(2**63), "seat", "BAD_REQUEST"),
    ("unknown", -1, "seat", "BAD_REQUEST"),
    ("bad", 0, "seat", "BAD_NAME"),
    ("bad", -1, "seat", "BAD_NAME"),
    ("long", 0, "seat", "BAD_NAME"),
    ("unicode", 0, "seat", "BAD_NAME"),
    ("unknown", 0, "seat", "GAME_NOT_FOUND"),
    ("game", 0, "stranger", "NOT_SEATED"),
    ("game", -1, "none", "TOKEN_MISSING"),
    ("bad", 0, "garbage", "TOKEN_INVALID"),
    ("game", 0, "expired", "TOKEN_EXPIRED"),
]


@pytest.mark.parametrize("replica", [0, 1])
@pytest.mark.parametrize("case", _WATCH_CASES, ids=str)
def test_watch_game_with_a_malformed_request_fails_cleanly(
    arena: Arena, replica: int, case: tuple[str, int, str, str]
) -> None:
    name_kind, after, token_kind, reason = case
    game = arena.live["play"]
    name = {
        "game": game.name,
        "unknown": "games/no-such-game",
        "bad": "games/../x",
        "long": "games/" + "x" * 5000,
        "unicode": "games/\u00e9\U0001f0a1",
    }[name_kind]
    token: Metadata = {
        "seat": bearer(game.players[3]),
        "stranger": bearer("stranger"),
        "none": (),
        "garbage": _auth("Bearer not.a.jwt"),
        "expired": bearer(game.players[3], ttl=-30),
    }[token_kind]
    call = arena.clients[replica].WatchGame(
        game_service_pb2.WatchGameRequest(name=name, after_version=after), metadata=token, timeout=5
    )
    with pytest.raises(grpc.RpcError) as caught:
        next(iter(call))
    assert well_formed("WatchGame", caught.value) == reason


def test_watch_game_resumes_after_a_version_and_waits_at_the_last(arena: Arena) -> None:
    game = arena.live["play"]
    assert game.version >= 1
    token = bearer(game.players[1])
    after = max(game.version - 2, 0)
    call = arena.clients[1].WatchGame(
        game_service_pb2.WatchGameRequest(name=game.name, after_version=after),
        metadata=token,
        timeout=5,
    )
    got = []
    for response in call:
        got.append(response.version)
        assert not view_problems(response.game, 1, response.events)
        if response.version == game.version:
            break
    call.cancel()  # type: ignore[no-untyped-call]
    assert got == list(range(after + 1, game.version + 1))
    waiting = arena.clients[0].WatchGame(
        game_service_pb2.WatchGameRequest(name=game.name, after_version=game.version),
        metadata=token,
        timeout=0.5,
    )
    with pytest.raises(grpc.RpcError) as caught:
        next(iter(waiting))
    assert caught.value.code() == SC.DEADLINE_EXCEEDED
    for far in (game.version + 1, 2**63 - 1):  # past the game's version: refused at once
        ahead = arena.clients[0].WatchGame(
            game_service_pb2.WatchGameRequest(name=game.name, after_version=far),
            metadata=token,
            timeout=5,
        )
        with pytest.raises(grpc.RpcError) as caught:
            next(iter(ahead))
        assert well_formed("WatchGame", caught.value) == "AFTER_VERSION_AHEAD"


# ------------------------------------------------------------------ bugs found


def test_a_huge_etag_is_refused_and_a_stale_one_is_not_echoed(arena: Arena) -> None:
    # Once, a stale etag was echoed unbounded into the status: a 6 KB etag made the
    # trailers exceed the client's metadata limit (RESOURCE_EXHAUSTED, not ABORTED).
    game = arena.create("play", watch=False)
    seat = game.to_act
    assert seat is not None
    request = game_service_pb2.SubmitActionRequest(
        name=game.name, action=game_pb2.Action(call=game_pb2.CALL_TRUC), etag="\u00e9" * 3000
    )
    outcome = submit(arena.clients[0], request, bearer(game.players[seat]))
    assert isinstance(outcome, grpc.RpcError)
    assert outcome.code() == SC.INVALID_ARGUMENT, f"{outcome.code()}: {outcome.details()}"
    assert well_formed("SubmitAction", outcome) == "BAD_REQUEST"
    request.etag = "\u00e9" * 64
    outcome = submit(arena.clients[0], request, bearer(game.players[seat]))
    assert isinstance(outcome, grpc.RpcError)
    assert outcome.code() == SC.ABORTED, f"{outcome.code()}: {outcome.details()}"
    assert well_formed("SubmitAction", outcome) == "STALE_ETAG"
    assert "\u00e9" not in (outcome.details() or "")


@pytest.mark.parametrize("method", ["SubmitAction", "GetGame", "WatchGame", "CreateGame"])
def test_undecodable_bytes_get_invalid_argument_with_error_info(
    arena: Arena, replicas: list[Replica], method: str
) -> None:
    before = replicas[0].log().count("Traceback")
    token = bearer("the-lobby", role="lobby") if method == "CreateGame" else bearer("someone")
    outcome = call_raw(arena, 0, method, b"\x0a\x01\xff", tuple(token))
    assert isinstance(outcome, grpc.RpcError)
    assert outcome.code() == SC.INVALID_ARGUMENT, f"{outcome.code()}: {outcome.details()}"
    assert well_formed(method, outcome) == "BAD_REQUEST"
    time.sleep(0.2)
    assert replicas[0].log().count("Traceback") == before


# ------------------------------------------------------------------ 3. after the storm


def _views(arena: Arena, game: Game) -> dict[tuple[int, int | None], game_pb2.GameView]:
    """Every seat's and a spectator's view, on each replica, all at one version."""
    for _ in range(5):
        views: dict[tuple[int, int | None], game_pb2.GameView] = {}
        for replica, client in enumerate(arena.clients):
            for seat in (*range(6), None):
                player = game.players[seat] if seat is not None else "auditor"
                token = bearer(player, role="player" if seat is not None else "spectator")
                request = game_service_pb2.GetGameRequest(name=game.name)
                views[(replica, seat)] = client.GetGame(request, metadata=token, timeout=10).game
        if len({v.etag for v in views.values()}) == 1:
            return views
        assert not game.fixed_turns, f"{game.name} moved while nobody acted"
    raise AssertionError(f"{game.name}: no consistent read in 5 tries")


def unexplained_tracebacks(log: str) -> list[str]:
    """Every traceback in a replica's log (none is expected)."""
    found = []
    for block in log.split("Traceback (most recent call last):")[1:]:
        lines = block.splitlines()
        final = next((line for line in lines[1:] if line and not line.startswith(" ")), "")
        found.append(final or block[:300])
    return found


def test_after_the_storm_games_are_consistent_and_replicas_healthy(
    arena: Arena, replicas: list[Replica]
) -> None:
    phases = Counter(game_pb2.Phase.Name(g.phase) for g in arena.games.values())
    print(f"\nfuzz outcomes: {dict(arena.stats)}; games: {dict(phases)}")
    problems: list[str] = []
    for game in arena.games.values():
        views = _views(arena, game)
        version = int(views[(0, 0)].etag)
        versions_timed_out = {
            e.version for e in views[(0, 0)].events if e.WhichOneof("kind") == "turn_timed_out"
        }
        if game.fixed_turns:
            assert not versions_timed_out, f"{game.name}: a turn timed out"
            assert version == game.version, f"{game.name}: at {version}, model {game.version}"
        assert version == 1 + game.fresh + len(versions_timed_out), (
            f"{game.name}: version {version} != 1 + {game.fresh} actions "
            f"+ {len(versions_timed_out)} time-outs"
        )
        for (replica, seat), view in views.items():
            if replica == 1:
                same = view.SerializeToString(deterministic=True) == views[
                    (0, seat)
                ].SerializeToString(deterministic=True)
                assert same, f"{game.name}: the replicas disagree on seat {seat}'s view"
                continue
            problems += [f"{game.name}: {p}" for p in view_problems(view, seat)]
        seat_views = {seat: view for (replica, seat), view in views.items() if replica == 0}
        problems += [f"{game.name}: {p}" for p in truth_problems(seat_views)]
        for watcher in game.watchers:
            watcher.wait_for(version)
            problems += [f"{game.name} watcher {watcher.seat}: {p}" for p in watcher.problems]
            if watcher.versions != list(range(1, version + 1)):
                problems.append(
                    f"{game.name} watcher {watcher.seat} saw {watcher.versions[-5:]} "
                    f"({len(watcher.versions)} versions) of {version} ({watcher.outcome})"
                )
            if watcher.outcome not in (None, "ended"):
                problems.append(f"{game.name} watcher {watcher.seat}: {watcher.outcome}")
    assert not problems, "\n".join(problems[:40])
    for server in replicas:
        assert server.process.poll() is None, f"replica {server.address} died:\n{server.log()}"
        with grpc.insecure_channel(server.address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            for service in ("", "truc.v1.GameService"):
                reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
        assert not unexplained_tracebacks(server.log()), unexplained_tracebacks(server.log())
