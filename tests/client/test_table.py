"""The terminal client's table display (pure: a GameView in, rich renderables out),
the numbered choices, and the narration of actions."""

from __future__ import annotations

import io
import random

from rich.console import Console, RenderableType
from truc.v1 import cards_pb2, game_pb2

from truc_client.choices import choices_for, find_choice
from truc_client.narration import action_text, card_text, describe, prompt_text
from truc_client.table import render_screen, render_table, seconds_left
from truc_protocol.convert import card_to_proto, events_to_proto, view_to_proto
from truc_rules import DECK, Card, apply_action, legal_actions, new_game, view_for
from truc_rules.truc_y_flou.actions import Action, PlayCard

NOW = 1_000_000.0


def text_of(renderable: RenderableType) -> str:
    console = Console(file=io.StringIO(), width=120, color_system=None, record=True)
    console.print(renderable)
    return console.export_text()


def card(text: str) -> cards_pb2.Card:
    return card_to_proto(Card.parse(text))


def hand_built_view() -> game_pb2.GameView:
    """Seat 2 (team A) in trick 2: its hand, two plays on the table, a pending truc."""
    view = game_pb2.GameView(
        name="games/g1",
        seat=2,
        phase=game_pb2.PHASE_PLAY,
        to_act=2,
        prompt=game_pb2.PROMPT_TRUC_ANSWER,
        hand_number=3,
        dealer=5,
        eldest=0,
        scores=game_pb2.Score(team_a=11, team_b=14),
        manches=game_pb2.Score(team_a=1, team_b=0),
        history=[
            game_pb2.MancheResult(
                winner=game_pb2.TEAM_A, scores=game_pb2.Score(team_a=25, team_b=19)
            )
        ],
        espintou=[game_pb2.TEAM_B],
        stake=2,
        stake_call=game_pb2.CALL_TRUC,
        last_raiser=game_pb2.TEAM_A,  # team A called TRUC, team B accepted it
        truc_call=game_pb2.TrucCall(call=game_pb2.CALL_RETRUC, caller=1, answerer=0),
        hand=[card("7Sw"), card("3Co")],
        dealt=[card("7Sw"), card("3Co"), card("4Cu")],
        embit_value=27,
        tricks=[
            game_pb2.Trick(
                leader=0,
                plays=[
                    game_pb2.Play(seat=s, card=card(c))
                    for s, c in enumerate(("5Co", "5Sw", "4Cu", "6Cl", "2Co", "KCu"))
                ],
                winner=game_pb2.TEAM_A,
                winning_seat=4,
            )
        ],
        current_trick=game_pb2.Trick(
            leader=4,
            plays=[
                game_pb2.Play(seat=4, card=card("1Co")),
                game_pb2.Play(seat=5, card=card("2Sw")),
            ],
        ),
        signals=[game_pb2.TeamMessage(seat=0, signal=game_pb2.SIGNAL_BASTO)],
        options=game_pb2.RuleOptions(target_score=25, manches_to_win=2),
        etag="41",
    )
    for seat in range(6):
        view.seats.add(
            seat=seat,
            team=game_pb2.TEAM_A if seat % 2 == 0 else game_pb2.TEAM_B,
            captain=seat in (0, 3),
            player=f"player-{seat}",
            hand_size=1 if seat in (4, 5) else 2,
        )
    view.seats[3].shown.append(card("JCo"))
    view.deadline.FromSeconds(int(NOW) + 12)
    view.legal_actions.extend(
        [
            game_pb2.Action(call=game_pb2.CALL_ACCEPT),
            game_pb2.Action(call=game_pb2.CALL_FOLD),
            game_pb2.Action(signal=game_pb2.SIGNAL_MANILLA_SW),
            game_pb2.Action(call=game_pb2.CALL_BALOU_QUATRO),
        ]
    )
    return view


def test_the_table_shows_seats_scores_stake_pending_call_signals_and_timer() -> None:
    view = hand_built_view()
    text = text_of(
        render_screen(
            view, choices_for(view), now=NOW, log=["S1(B): RETRUC"], accepted_by="team B (S3(B))"
        )
    )
    for expected in (
        "you are S2(A)",
        "S0(A) ★captain",
        "S3(B) ★captain",
        "(deals)",  # seat 5
        "player-1",
        "7Sw⚔  3Co☀",  # the viewer's hand
        "embit 27",
        "[1Co☀]",  # seat 4's card in the current trick
        "[2Sw⚔]",
        "shown JCo☀",  # revealed by a showdown: public
        "points A 11 - B 14*",
        "manches A 1 - B 0 (to 2)",
        "manches played: A won 25-19",
        "tricks won: A 1 · B 0",
        "TRUC accepted by team B (S3(B))",
        "worth 2 points",
        "pending: S1(B) calls RETRUC, S0(A) to answer",
        "you answer the truc call",
        "⏱ 12 s left",
        "team signals: S0(A) BASTO",
        "1) call ACCEPT",
        "2) call FOLD",
        "3) call BALOU_QUATRO",
        "s1) signal MANILLA_SW",
        "S1(B): RETRUC",
    ):
        assert expected in text, f"{expected!r} missing from:\n{text}"


def test_a_hand_built_view_shows_no_card_it_does_not_hold() -> None:
    view = hand_built_view()
    text = text_of(render_screen(view, choices_for(view), now=NOW))
    visible = {"7Sw", "3Co", "1Co", "2Sw", "JCo"}  # hand, current trick, shown
    for other in DECK:
        if str(other) not in visible:
            assert card_text(card_to_proto(other)) not in text, str(other)


def test_moves_are_numbered_messages_are_s_numbered() -> None:
    view = hand_built_view()
    choices = choices_for(view)
    assert [c.key for c in choices] == ["1", "2", "3", "s1"]
    assert find_choice(choices, " S1 ") is choices[3]
    assert find_choice(choices, "99") is None
    assert find_choice(choices, "x") is None
    assert not choices[3].is_move and choices[0].is_move
    # Not the viewer's turn: the moves are not offered, the messages still are.
    waiting = text_of(render_screen(view, choices[3:], now=NOW))
    assert "waiting for the others" in waiting and "s1) signal MANILLA_SW" in waiting


def test_the_timer_counts_down_to_zero_and_needs_a_deadline() -> None:
    view = hand_built_view()
    assert seconds_left(view, NOW) == 12
    assert seconds_left(view, NOW + 11.5) == 1
    assert seconds_left(view, NOW + 60) == 0
    view.ClearField("deadline")
    assert seconds_left(view, NOW) is None
    assert "s left" not in text_of(render_table(view, now=NOW))


def test_actions_and_prompts_in_words() -> None:
    assert action_text(game_pb2.Action(play_card=card("1Cl"))) == "play 1Cl♣"
    assert action_text(game_pb2.Action(directive=game_pb2.DIRECTIVE_PLAY_LOW)) == (
        "direct PLAY_LOW"
    )
    assert action_text(game_pb2.Action(choose_dealer=3)) == "name S3(B) dealer"
    view = hand_built_view()
    assert prompt_text(view) == "answers the truc call"
    assert prompt_text(view, you=True) == "answer the truc call"
    timed_out = game_pb2.Event(
        turn_timed_out=game_pb2.TurnTimedOut(seat=2, action=game_pb2.Action(play_card=card("4Cu")))
    )
    assert describe(timed_out) == "S2(A) ran out of time (acted for: play 4Cu♥)"


def test_no_view_of_a_real_game_ever_shows_another_seats_hidden_card() -> None:
    """Random legal play in the engine; every seat's screen after every action
    (table, hand, signals, log of its filtered events) is checked against the
    cards the other seats still hold unrevealed."""
    rng = random.Random(5)
    transition = new_game(None, seed=11)
    state = transition.state
    logs: list[list[str]] = [[] for _ in range(6)]
    events = transition.events
    for step in range(120):
        for seat in range(6):
            view = view_for(state, seat, events)
            for line in filter(None, map(describe, events_to_proto(view.events, step))):
                if line.startswith("── hand"):
                    logs[seat].clear()  # cards of earlier hands (or draws) are dealt again
                logs[seat].append(line)
            message = view_to_proto(
                view, name="games/g", players=["p"] * 6, etag=str(step), deadline_ms=None
            )
            text = text_of(render_screen(message, choices_for(message), now=NOW, log=logs[seat]))
            for mine in state.hands[seat]:
                assert card_text(card_to_proto(mine)) in text
            for other in range(6):
                if other == seat:
                    continue
                for hidden in state.hands[other]:
                    if hidden not in state.revealed:
                        assert card_text(card_to_proto(hidden)) not in text, (step, seat, hidden)
        if state.to_act is None:
            break
        legal = legal_actions(state, state.to_act)
        moves: list[Action] = [a for a in legal if isinstance(a, PlayCard)] or list(legal)
        transition = apply_action(state, state.to_act, rng.choice(moves))
        state, events = transition.state, transition.events
