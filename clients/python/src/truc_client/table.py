"""The table as one seat sees it, drawn with ``rich``: pure functions of a GameView.

Nothing here talks to a service or reads a clock: the caller passes ``now``
(seconds since the epoch) for the turn timer. Everything drawn comes from the
viewer's :class:`~truc.v1.game_pb2.GameView`, which has no field for another
seat's unrevealed cards, so none can be drawn: the other seats show how many
cards they hold, the cards they played, and the cards a showdown revealed.

* :func:`render_table`: the seats around the table, six, four or two by the
  rule set (teams, Truc y Flou's captains, partnership Truc's governors, the
  dealer, whose turn, each seat's card in the current trick), the tricks won
  (or spoiled), the scores (points and manches, or games), the stake and the
  pending calls (a raise, MON_RESTE, a redeal proposal), the timer. A seat
  shows its player's display name (``SeatInfo.display_name``, else the
  caller's label, else the player id; :func:`~truc_client.narration.printable`
  always); a finished match shows its last manche's final points (from
  ``GameView.history`` when the service reports 0-0); an embit a flor voided
  says so; who accepted the truc comes from the narration of the events
  (``accepted_by``), never from ``last_raiser``;
* :func:`render_hand`, :func:`render_signals`, :func:`render_choices`: the
  viewer's cards, the team's signals this hand, the numbered legal actions;
* :func:`render_screen`: all of it plus the event log, the one renderable of
  the terminal client.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from truc.v1 import game_pb2

from .choices import Choice
from .narration import (
    action_text,
    call_name,
    card_text,
    is_family,
    printable,
    prompt_text,
    seat_label,
    seat_name,
    team_name,
)

__all__ = [
    "games_word",
    "render_choices",
    "render_hand",
    "render_screen",
    "render_signals",
    "render_table",
    "seat_count",
    "seconds_left",
    "shown_scores",
    "timer_text",
]

_TEAM_STYLE = ("cyan", "magenta")  # team A, team B
_PIQUET_RULE_SETS = frozenset(
    (
        game_pb2.RULE_SET_FRENCH_TRUC,
        game_pb2.RULE_SET_SACKSON_TRUC,
        game_pb2.RULE_SET_PARTNERSHIP_TRUC,
    )
)


def seat_count(view: game_pb2.GameView) -> int:
    """Seats at the view's table: 6, 4 or 2 (6 for a view that does not say)."""
    return view.seat_count or len(view.seats) or 6


def seconds_left(view: game_pb2.GameView, now: float) -> int | None:
    """Whole seconds until the turn deadline (0 once passed); None without one."""
    if not view.HasField("to_act") or not view.HasField("deadline"):
        return None
    deadline = view.deadline.seconds + view.deadline.nanos / 1e9
    if deadline <= 0:
        return None
    return max(0, math.ceil(deadline - now))


def timer_text(view: game_pb2.GameView, now: float) -> Text:
    """``▶ S2(A) answers the truc call · ⏱ 12 s left`` (empty when nobody acts)."""
    if not view.HasField("to_act"):
        return Text("")
    mine = view.HasField("seat") and view.to_act == view.seat
    who = "you" if mine else seat_name(view.to_act)
    verb = prompt_text(view, you=mine)
    line = Text("▶ ", style="bold yellow")
    line.append(f"{who} {verb}", style="bold" if mine else "")
    left = seconds_left(view, now)
    if left is not None:
        line.append(f" · ⏱ {left} s left", style="bold red" if left <= 5 else "yellow")
    return line


def _seat_cell(view: game_pb2.GameView, seat: int, labels: Mapping[int, str]) -> Text:
    info = next((s for s in view.seats if s.seat == seat), None)
    team = seat % 2
    cell = Text()
    acting = view.HasField("to_act") and view.to_act == seat
    cell.append("▶ " if acting else "  ", style="bold yellow")
    cell.append(seat_name(seat), style=f"bold {_TEAM_STYLE[team]}")
    if info is not None and info.captain:
        cell.append(" ★captain", style=_TEAM_STYLE[team])
    if info is not None and info.governor and view.phase == game_pb2.PHASE_PLAY:
        cell.append(" ★governor", style=_TEAM_STYLE[team])
    if view.phase == game_pb2.PHASE_PLAY and seat == view.dealer:
        cell.append(" (deals)", style="dim")
    label = printable(labels.get(seat, ""), limit=32) or (
        seat_label(seat, info.display_name, info.player[:12]) if info else ""
    )
    if view.HasField("seat") and seat == view.seat:
        label = f"{label} (you)" if label and label != "you" else "you"
    cell.append(f"\n  {label}")
    if info is not None and view.phase == game_pb2.PHASE_PLAY:
        cell.append(f"  {'▯' * info.hand_size or '-'} {info.hand_size} held", style="dim")
        if info.shown:
            cell.append("\n  shown " + " ".join(card_text(c) for c in info.shown))
    played = next((p.card for p in view.current_trick.plays if p.seat == seat), None)
    cell.append("\n  ")
    if played is not None:
        cell.append(f"[{card_text(played)}]", style="bold")
    return cell


def _tricks(view: game_pb2.GameView) -> str:
    if not view.tricks:
        return "tricks: none yet"
    parts = []
    tie = "spoiled" if is_family(view.rule_set) else "pardes"
    for number, trick in enumerate(view.tricks, 1):
        if trick.winner == game_pb2.TEAM_UNSPECIFIED:
            parts.append(f"{number}: {tie}")
        else:
            winner = f" {seat_name(trick.winning_seat)}" if trick.HasField("winning_seat") else ""
            parts.append(f"{number}: {team_name(trick.winner)}{winner}")
    won_a = sum(t.winner == game_pb2.TEAM_A for t in view.tricks)
    won_b = sum(t.winner == game_pb2.TEAM_B for t in view.tricks)
    return f"tricks won: A {won_a} · B {won_b}  ({', '.join(parts)})"


def _stake(view: game_pb2.GameView, accepted_by: str) -> str:
    if is_family(view.rule_set):
        return _family_stake(view, accepted_by)
    if view.stake == 0 and view.stake_call != game_pb2.CALL_UNSPECIFIED:
        worth = "the manche"
    else:
        worth = f"{view.stake or 1} point{'s' if (view.stake or 1) > 1 else ''}"
    if view.stake_call == game_pb2.CALL_UNSPECIFIED:
        return f"truc: none called · the hand is worth {worth}"
    by = f" by {accepted_by}" if accepted_by else ""
    return f"truc: {call_name(view.stake_call)} accepted{by} · the hand is worth {worth}"


def _family_stake(view: game_pb2.GameView, accepted_by: str) -> str:
    """The stake of a variants.md hand: 1 point, an accepted raise, or the game."""
    if view.mon_reste:
        return "stake: MON_RESTE answered with MON_RESTE · this hand decides the game"
    stake = view.stake or 1
    worth = f"{stake} point{'s' if stake > 1 else ''}"
    if view.stake_call == game_pb2.CALL_UNSPECIFIED:
        return f"stake: no raise yet · the hand is worth {worth}"
    by = f" by {accepted_by}" if accepted_by else ""
    return f"stake: {call_name(view.stake_call)} accepted{by} · the hand is worth {worth}"


def _pending(view: game_pb2.GameView) -> list[str]:
    """The calls waiting for answers, and the declarations of the hand."""
    lines = []
    if is_family(view.rule_set):
        return _family_pending(view)
    if view.truc_call.call != game_pb2.CALL_UNSPECIFIED:
        truc = view.truc_call
        lines.append(
            f"pending: {seat_name(truc.caller)} calls {call_name(truc.call)}, "
            f"{seat_name(truc.answerer)} to answer"
        )
    embit = view.embit
    if embit.call != game_pb2.CALL_UNSPECIFIED:
        line = f"embit: {seat_name(embit.opener)} {call_name(embit.call)}"
        if embit.challenge != game_pb2.CALL_UNSPECIFIED:
            challenger = seat_name(embit.challenger) if embit.HasField("challenger") else "?"
            line += f", {challenger} {call_name(embit.challenge)}"
        if embit.answer != game_pb2.CALL_UNSPECIFIED:
            line += f", {call_name(embit.answer)}"
        if embit.result.team != game_pb2.TEAM_UNSPECIFIED:
            gain = "the manche" if embit.result.wins_manche else f"+{embit.result.points}"
            if view.flors:  # §5.9: a flor in the hand voids every embit result
                line += f" → void (a flor was declared): team {team_name(embit.result.team)}"
                line += f" loses its {gain}"
            else:
                line += f" → team {team_name(embit.result.team)} {gain}"
        elif view.prompt in (game_pb2.PROMPT_EMBIT_POLL, game_pb2.PROMPT_EMBIT_ANSWER):
            line = "pending " + line
        lines.append(line)
    for flor in view.flors:
        line = f"flor: {seat_name(flor.declarer)} FLOR"
        if flor.challenge != game_pb2.CALL_UNSPECIFIED:
            challenger = seat_name(flor.challenger) if flor.HasField("challenger") else "?"
            line += f", {challenger} {call_name(flor.challenge)}"
        for answer in (flor.declarer_answer, flor.challenger_answer):
            if answer != game_pb2.CALL_UNSPECIFIED:
                line += f", {call_name(answer)}"
        if flor.result.team != game_pb2.TEAM_UNSPECIFIED:
            gain = "the manche" if flor.result.wins_manche else f"+{flor.result.points}"
            line += f" → team {team_name(flor.result.team)} {gain}"
        lines.append(line)
    return lines


def _family_pending(view: game_pb2.GameView) -> list[str]:
    """The call waiting for its answer, the governors, a redeal already used."""
    lines = []
    pending = view.truc_call
    if pending.call != game_pb2.CALL_UNSPECIFIED:
        caller, answerer = seat_name(pending.caller), seat_name(pending.answerer)
        if pending.call == game_pb2.CALL_PROPOSE_REDEAL:
            lines.append(f"pending: {caller} proposes a redeal, {answerer} (the dealer) to answer")
        else:
            words = action_text(game_pb2.Action(call=pending.call), view).removeprefix("call ")
            if pending.call == game_pb2.CALL_MON_RESTE:
                words = 'MON_RESTE ("my rest": this hand for the game)'
            lines.append(f"pending: {caller} calls {words}, {answerer} to answer")
    elif view.redeal_proposed and view.rule_set in _PIQUET_RULE_SETS:
        lines.append("a redeal was proposed this hand (no other may be)")
    if view.governors and view.phase == game_pb2.PHASE_PLAY:
        governing = " and ".join(seat_name(s) for s in view.governors)
        lines.append(f"governors: {governing} (only they answer raises and concede)")
    return lines


def shown_scores(view: game_pb2.GameView) -> game_pb2.Score:
    """The points to show: the current manche's; once the match is over, the
    last manche's final points (its history entry: a service that reports 0-0
    for the manche that will not be played is shown right too)."""
    if view.finished and view.history:
        return view.history[-1].scores
    return view.scores


def _scores(view: game_pb2.GameView) -> Text:
    family = is_family(view.rule_set)
    target = view.options.target_score or (12 if family else 25)
    manches = view.options.manches_to_win or 2
    games = "games" if family else "manches"
    espintou = {team_name(t) for t in view.espintou}
    points = shown_scores(view)
    line = Text("final points " if view.finished else "points ")
    line.append(f"A {points.team_a}", style=f"bold {_TEAM_STYLE[0]}")
    line.append("*" if "A" in espintou else "")
    line.append(" - ")
    line.append(f"B {points.team_b}", style=f"bold {_TEAM_STYLE[1]}")
    line.append("*" if "B" in espintou else "")
    line.append(f" (to {target})   {games} A {view.manches.team_a} - B {view.manches.team_b}")
    belle = "the deciding game" if family else "la belle"
    line.append(f" (to {manches}){f'  · {belle}' if view.belle else ''}")
    if espintou:
        line.append("   * espintou", style="dim")
    if view.history:  # the manches played, with their final scores
        played = ", ".join(
            f"{team_name(m.winner)} won {m.scores.team_a}-{m.scores.team_b}" for m in view.history
        )
        line.append(f"\n{games} played: {played}", style="dim")
    return line


def games_word(view: game_pb2.GameView) -> str:
    """``manches`` (Truc y Flou) or ``games`` (the family)."""
    return "games" if is_family(view.rule_set) else "manches"


def _layout(ring: list[int]) -> list[tuple[int | None, int | None, int | None]]:
    """The grid rows of the seats (None: an empty cell; the centre cell of the
    middle row holds the trick). The viewer sits at the bottom centre and play
    goes round to the right."""
    if len(ring) == 2:
        return [(None, ring[1], None), (None, None, None), (None, ring[0], None)]
    if len(ring) == 4:
        return [(None, ring[2], None), (ring[3], None, ring[1]), (None, ring[0], None)]
    return [(ring[4], ring[3], ring[2]), (None, None, None), (ring[5], ring[0], ring[1])]


def render_table(
    view: game_pb2.GameView,
    *,
    now: float,
    labels: Mapping[int, str] | None = None,
    accepted_by: str = "",
) -> RenderableType:
    """The seats around the table and the state of the hand and the match.

    The viewer sits at the bottom centre; play goes round to the right: with
    six seats the next seat is bottom right, then top right, top centre, top
    left, bottom left; with four, right, top (the partner), left; with two, the
    opponent sits at the top. ``labels`` names seats (e.g. "Bot 3"); by default a
    seat shows its display name, else its player id. ``accepted_by`` is who
    accepted the hand's stake, as the narration of the events told it
    (:attr:`~truc_client.narration.Narrator.accepted_by`).
    """
    names = labels or {}
    seats = seat_count(view)
    me = view.seat if view.HasField("seat") else 0
    ring = [(me + i) % seats for i in range(seats)]
    grid = Table.grid(expand=True, padding=(0, 2))
    for _ in range(3):
        grid.add_column(ratio=1)
    centre = Text(justify="center")
    if view.phase == game_pb2.PHASE_PLAY:
        trick = len(view.tricks) + 1
        centre.append(f"hand {view.hand_number} · trick {min(trick, 3)}", style="bold")
        if view.current_trick.plays:
            centre.append(f"\nled by {seat_name(view.current_trick.leader)}")
    elif view.phase == game_pb2.PHASE_DRAW:
        draws = " vs ".join(card_text(c) for c in view.draws)
        centre.append(f"the captains draw for the first deal: {draws}", style="bold")
    elif view.finished:
        won = f"{games_word(view)} A {view.manches.team_a} - B {view.manches.team_b}"
        centre.append(f"match over: team {team_name(view.winner)} wins\n{won}", style="bold green")
    for row, cells in enumerate(_layout(ring)):
        grid.add_row(
            *(
                centre
                if row == 1 and column == 1
                else Text("")
                if seat is None
                else _seat_cell(view, seat, names)
                for column, seat in enumerate(cells)
            )
        )
    status: list[RenderableType] = [_scores(view)]
    if view.phase == game_pb2.PHASE_PLAY:
        status.append(Text(_tricks(view)))
        status.append(Text(_stake(view, accepted_by)))
        status.extend(Text(line, style="yellow") for line in _pending(view))
    status.append(timer_text(view, now))
    title = f"{view.name} · you are {seat_name(me)}" if view.HasField("seat") else view.name
    return Panel(Group(grid, Text(""), *status), title=title, title_align="left")


def render_hand(view: game_pb2.GameView) -> RenderableType:
    """The viewer's cards still held, and its declaration values."""
    line = Text("your hand: ", style="bold")
    if view.hand:
        line.append("  ".join(card_text(c) for c in view.hand), style="bold green")
    else:
        line.append("(no cards)", style="dim")
    extra = []
    if view.HasField("embit_value"):
        extra.append(f"embit {view.embit_value}")
    if view.HasField("flor_value"):
        extra.append(f"flor {view.flor_value}")
    if extra:
        line.append(f"   ({', '.join(extra)})", style="dim")
    if view.instruction != game_pb2.DIRECTIVE_UNSPECIFIED:
        name = game_pb2.Directive.Name(view.instruction).removeprefix("DIRECTIVE_")
        line.append(
            f"\nyour governor's instruction {name} binds your next card"
            " (only the cards it allows are offered)",
            style="bold yellow",
        )
    return line


def render_signals(view: game_pb2.GameView) -> RenderableType:
    """The team's signals and directives (instructions in partnership Truc) this
    hand (team-only)."""
    line = Text("team signals: ", style="bold")
    if not view.signals:
        line.append("none this hand", style="dim")
        return line
    instructs = "instructs" if view.rule_set == game_pb2.RULE_SET_PARTNERSHIP_TRUC else "directs"
    parts = []
    for message in view.signals:
        if message.WhichOneof("message") == "directive":
            name = game_pb2.Directive.Name(message.directive).removeprefix("DIRECTIVE_")
            parts.append(f"{seat_name(message.seat)} {instructs} {name}")
        else:
            name = game_pb2.Signal.Name(message.signal).removeprefix("SIGNAL_")
            parts.append(f"{seat_name(message.seat)} {name}")
    line.append(" · ".join(parts))
    return line


def render_choices(choices: Sequence[Choice], *, my_turn: bool) -> RenderableType:
    """The numbered moves (only at the viewer's turn) and the ``s``-numbered messages."""
    moves = [c for c in choices if c.is_move]
    messages = [c for c in choices if not c.is_move]
    text = Text()
    if my_turn and moves:
        text.append("your move: ", style="bold yellow")
        text.append("   ".join(f"{c.key}) {c.text}" for c in moves))
    else:
        text.append("waiting for the others", style="dim")
    if messages:
        text.append("\nteam messages: ", style="bold")
        text.append("   ".join(f"{c.key}) {c.text}" for c in messages))
    text.append(
        "\nkeys: a number or s-number then Enter · ? explains · r redraw · q quit", style="dim"
    )
    return text


def render_screen(
    view: game_pb2.GameView,
    choices: Sequence[Choice],
    *,
    now: float,
    log: Sequence[str] = (),
    labels: Mapping[int, str] | None = None,
    notice: str = "",
    typed: str | None = None,
    accepted_by: str = "",
    summary: Sequence[str] = (),
    help_lines: Sequence[str] = (),
) -> RenderableType:
    """The whole screen of the terminal client: table, hand, signals, log, choices.

    ``log`` is the event log (its last lines are shown), ``notice`` a message
    to the player (a refused input...), ``typed`` the input line being typed
    (None when the terminal shows it itself), ``accepted_by`` as for
    :func:`render_table`, ``summary`` the hand just ended (shown until the
    player goes on), ``help_lines`` the choices explained (``?``).
    """
    my_turn = view.HasField("seat") and view.HasField("to_act") and view.to_act == view.seat
    parts: list[RenderableType] = [
        render_table(view, now=now, labels=labels, accepted_by=accepted_by),
        render_hand(view),
        render_signals(view),
    ]
    if log:
        parts.append(Panel(Text("\n".join(log)), title="events", title_align="left"))
    if summary:
        parts.append(
            Panel(Text("\n".join(summary), style="bold"), title="hand over", title_align="left")
        )
    if help_lines:
        parts.append(Panel(Text("\n".join(help_lines)), title="your choices", title_align="left"))
    if not view.finished:
        parts.append(render_choices(choices, my_turn=my_turn))
    if notice:
        parts.append(Text(notice, style="bold red"))
    if typed is not None:
        parts.append(Text(f"> {typed}▏", style="bold"))
    return Group(*parts)
