"""Terminal play: a human takes one seat of a match, bots take the others.

``truc play --lobby HOST:PORT --game HOST:PORT [--ruleset NAME]`` (or ``make
run PLAY=1 [RULESET=NAME]``, which starts the services first) signs the human in
as a guest, queues a ticket for a table of the rule set (``truc_y_flou``, six
seats, by default; ``french_truc`` and ``sackson_truc`` two; ``partnership_truc``
four; ``catalan_truc`` four, or two with ``--seats 2``) through the lobby,
queues ``--bots`` bot guests the same way (all the other seats unless said;
each a
:class:`~truc_bots.BotPlayer` with a
:class:`~truc_bots.HeuristicPolicy`, as :mod:`truc_client.demo` does),
and once the lobby seats them plays the human's seat through
:class:`~truc_client.client.TrucClient`:

* the seat plays over one ``Play`` session (:meth:`TrucClient.session
  <truc_client.client.TrucClient.session>`) for the whole match: every
  version comes in on it, in order, and the human's actions go out on it (a
  broken stream resumes by itself); stdin is read in a thread, so the table,
  the event log and the turn timer keep moving while the human thinks;
* at the human's turn the legal actions are offered as choices
  (:mod:`truc_client.choices`): ``1``, ``2``... for moves, ``s1``... for team
  signals and directives (any time of a hand), ``?`` explains each choice in
  a line (:mod:`truc_client.explanations`), ``r`` redraws, ``q`` quits;
  an input that is not a choice is refused with a message and asked again;
* the seats show the players' display names (``--name``, by default ``$USER``
  or ``Guest``; the others' from the lobby's seating and the views, bots as
  ``Bot {seat}``), and so does the narration; every server-provided string is
  made :func:`~truc_client.narration.printable` first;
* the draw for the first deal is told (each captain's card, who drew the lower
  and so names the dealer), and when the human names the dealer the prompt
  says why;
* at the end of each hand a summary (credits, the accepted stake, the scores
  in A-B order) is shown and play pauses: on a terminal until Enter (at most
  30 s, less when the human's next turn is running), otherwise
  ``--hand-pause`` seconds (1.5 by default);
* an action is sent with the view's etag: if the game moved on
  (:class:`~truc_client.client.StaleView`) or the turn passed (the service
  acted by default after the deadline: ``TurnTimedOut``), the choices are
  refreshed and the human chooses again.

On a terminal the screen (:func:`truc_client.table.render_screen`) is redrawn
in place at least once a second and the line being typed is shown in it; when
stdout is not a terminal (a pipe, a file, a test) the same tables and the
events are printed as plain text, with one ``> your move`` line per decision.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import contextlib
import os
import sys
import termios
import threading
import time
import tty
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Final, TextIO

import grpc
from rich.console import Console, RenderableType
from rich.live import Live
from truc.v1 import game_pb2, game_service_pb2_grpc, lobby_pb2

from truc_bots import BotPlayer, HeuristicPolicy
from truc_protocol.convert import options_from_proto
from truc_protocol.display_names import display_name_problem, normalized_display_name
from truc_protocol.errors import InvalidArgument
from truc_rules.registry import seat_count

from .choices import Choice, choices_for, find_choice
from .client import GameSession, StaleView, TrucClient, TrucError, game_version, is_over
from .explanations import draw_text
from .narration import (
    Narrator,
    is_family,
    printable,
    rule_set_name,
    score_text,
    seat_label,
    seat_name,
    team_name,
)
from .table import games_word, render_screen, seconds_left

__all__ = [
    "RULE_SETS",
    "add_arguments",
    "add_rule_arguments",
    "checked_options",
    "default_name",
    "main",
    "option_problem",
    "play",
    "rule_options",
    "run",
    "table_seats",
]

_LOG_LINES: Final = 12
_WARN_AT: Final = (10, 5)
"""Seconds left at which plain output reminds the human of the timer."""
_ENTER_WAIT: Final = 30.0
"""On a terminal, the longest a hand's summary waits for Enter."""
_TURN_MARGIN: Final = 8
"""Seconds of the human's running turn the pause leaves them."""


def default_name() -> str:
    """``$USER`` if it is a display name, else ``Guest``."""
    user = os.environ.get("USER", "").strip()
    return user if user and printable(user) == user and len(user) <= 32 else "Guest"


class Keyboard:
    """stdin, read in a daemon thread, handed to the event loop as complete lines.

    With ``edit`` (a live terminal in cbreak mode, no echo) it also keeps the
    line being typed in :attr:`typed` and calls ``on_change`` as it changes, so
    the screen can show it; Backspace edits it, Ctrl-D is end of input. The
    thread never touches the loop's state itself: it hands each chunk over with
    ``call_soon_threadsafe``. End of input is a ``None`` line.
    """

    def __init__(self, fd: int, *, edit: bool, on_change: Callable[[], None]) -> None:
        self._fd = fd
        self.edit = edit
        """Keys one by one (cbreak): this keyboard keeps the typed line itself."""
        self.on_change = on_change
        """Called when :attr:`typed` changes."""
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self.typed = ""
        self._pending = ""

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        threading.Thread(target=self._read, args=(loop,), name="stdin", daemon=True).start()

    def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while True:
            try:
                chunk = os.read(self._fd, 1024)
            except OSError:
                chunk = b""
            text = decoder.decode(chunk, final=not chunk)
            try:
                loop.call_soon_threadsafe(self._feed, text, not chunk)
            except RuntimeError:  # the loop is closed: the program is ending
                return
            if not chunk:
                return

    def _feed(self, text: str, eof: bool) -> None:
        if not self.edit:
            self._pending += text
            *complete, self._pending = self._pending.split("\n")
            for line in complete:
                self.lines.put_nowait(line.rstrip("\r"))
        else:
            for char in text:
                if char in "\r\n":
                    self.lines.put_nowait(self.typed)
                    self.typed = ""
                elif char in "\x7f\b":
                    self.typed = self.typed[:-1]
                elif char == "\x04":
                    eof = True
                    break
                elif char.isprintable():
                    self.typed += char
            self.on_change()
        if eof:
            if self._pending:
                self.lines.put_nowait(self._pending)
                self._pending = ""
            self.lines.put_nowait(None)


@contextlib.contextmanager
def _cbreak(fd: int) -> Iterator[None]:
    """The terminal in cbreak mode (keys one by one, no echo) until the block ends."""
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        new = termios.tcgetattr(fd)
        new[3] &= ~termios.ECHO
        termios.tcsetattr(fd, termios.TCSADRAIN, new)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _my_turn(view: game_pb2.GameView) -> bool:
    return view.HasField("seat") and view.HasField("to_act") and view.to_act == view.seat


def _keys(choices: Sequence[Choice], my_turn: bool) -> str:
    """The keys open now, e.g. ``1-4, s1-s2``."""
    parts = []
    moves = [c.key for c in choices if c.is_move] if my_turn else []
    messages = [c.key for c in choices if not c.is_move]
    for keys in (moves, messages):
        if keys:
            parts.append(keys[0] if len(keys) == 1 else f"{keys[0]}-{keys[-1]}")
    return ", ".join(parts)


class Seat:
    """The human's seat of one game: its session, the screen and the choices."""

    def __init__(
        self,
        session: GameSession,
        view: game_pb2.GameView,
        *,
        console: Console,
        live: bool,
        labels: dict[int, str],
        hand_pause: float = 1.5,
    ) -> None:
        self._session = session
        self._console = console
        self._live_mode = live
        self._live: Live | None = None
        self._labels = labels
        self._hand_pause = hand_pause
        self._summary: list[str] = []
        self._help: list[str] = []
        self._go_on: asyncio.Event | None = None
        self._log: deque[str] = deque(maxlen=200)
        self._notice = ""
        self._asked = False
        self._warned: set[int] = set()
        self.keyboard: Keyboard | None = None
        self.view = view
        self.version = game_version(view)
        self.choices = choices_for(view)
        self._narrator = Narrator(view.rule_set, names=labels, options=view.options)
        for event in view.events:
            self._record(event)
        self.view.ClearField("events")

    # ------------------------------------------------------------------ output

    def _say(self, line: str | RenderableType) -> None:
        """Print in plain mode (nothing on the live screen, which shows the log)."""
        if not self._live_mode:
            if isinstance(line, str):
                self._console.print(
                    line, markup=False, highlight=False, emoji=False, soft_wrap=True
                )
            else:
                self._console.print(line)

    def _record(self, event: game_pb2.Event) -> None:
        line = self._narrator.describe(event)
        if line is not None:
            self._log.append(line)
            self._say(line)

    def screen(self) -> RenderableType:
        """The whole screen; on a live terminal the log gets the rows left over."""
        typed = self.keyboard.typed if self.keyboard is not None and self._live_mode else None
        now = time.time()

        def draw(log_lines: int) -> RenderableType:
            return render_screen(
                self.view,
                self.choices,
                now=now,
                log=list(self._log)[-log_lines:] if log_lines > 0 else (),
                labels=self._labels,
                notice=self._notice,
                typed=typed,
                accepted_by=self._narrator.accepted_by,
                summary=self._summary,
                help_lines=self._help,
            )

        if not self._live_mode:
            return draw(_LOG_LINES)
        used = len(self._console.render_lines(draw(0), pad=False))
        return draw(self._console.height - used - 3)  # the log panel's borders, a spare row

    def redraw(self) -> None:
        """Live mode: draw the screen again (typing, a tick of the timer)."""
        if self._live is not None:
            self._live.update(self.screen(), refresh=True)

    def _show(self, *, force: bool = False) -> None:
        """After a change: redraw; in plain mode print the table and ask, once per decision."""
        if self._live_mode:
            self.redraw()
            return
        if not _my_turn(self.view):
            self._asked = False
            if force:
                self._console.print(self.screen())
            return
        if self._asked and not force:
            return
        self._asked = True
        self._warned.clear()
        self._console.print(self.screen())
        self._why()
        self._ask()

    def _why(self) -> None:
        """Naming the first dealer: say why this seat does."""
        if self.view.phase == game_pb2.PHASE_DRAW and _my_turn(self.view):
            self._say(f"why you: {draw_text(self.view)}")

    def _ask(self) -> None:
        left = seconds_left(self.view, time.time())
        timer = f" · ⏱ {left} s left" if left is not None else ""
        keys = _keys(self.choices, my_turn=True)
        self._say(f"> your move? type {keys} then Enter (? explains, r redraw, q quit){timer}")

    def _tell(self, notice: str) -> None:
        self._notice = notice
        self._say(f"! {notice}")

    # ------------------------------------------------------------------ state

    def _set_view(self, view: game_pb2.GameView, version: int, *, rewound: bool = False) -> None:
        """Show ``view`` if it is newer than the one shown, or if the game went
        back to it (``rewound``: the store lost its last writes)."""
        if version <= self.version and not rewound:
            return
        view.ClearField("events")
        self.view = view
        self.version = version
        self.choices = choices_for(view)
        self._notice = ""  # it was about the previous version
        self._help = []
        if view.phase == game_pb2.PHASE_DRAW and _my_turn(view) and self._live_mode:
            self._notice = f"why you: {draw_text(view)}"
        if not _my_turn(view):
            self._asked = False

    async def _watch(self) -> game_pb2.GameView:
        if is_over(self.view):
            return self.view
        # The session yields versions in order (several at once when coalesced),
        # and an older one only when the game went back (a Redis loss, marked
        # rewound): then it is the game's truth.
        async for update in self._session:
            kinds = [event.WhichOneof("kind") for event in update.events]
            last_hand = max((i for i, k in enumerate(kinds) if k == "hand_ended"), default=-1)
            for index, event in enumerate(update.events):
                self._record(event)
                # Every hand pauses but the match's last (a session that queued
                # versions hands them over as one update, over once the last is in).
                if kinds[index] == "hand_ended" and not (update.over and index == last_hand):
                    await self._hand_over(update.view)
            self._set_view(update.view, update.version, rewound=update.rewound)
            self._show()
            if update.over:
                return update.view
        return self.view

    async def _hand_over(self, next_view: game_pb2.GameView) -> None:
        """The hand's summary, then a pause: until Enter on a terminal (at most
        :data:`_ENTER_WAIT`, and never eating the human's next turn), else
        ``hand_pause`` seconds."""
        summary = self._narrator.hand_summary_lines()
        if self._live_mode:
            wait = _ENTER_WAIT
            left = seconds_left(next_view, time.time()) if _my_turn(next_view) else None
            if left is not None:
                wait = min(wait, max(0.0, left - _TURN_MARGIN))
            self._summary = [*summary, f"press Enter for the next hand (or wait {wait:.0f} s)"]
            self._go_on = asyncio.Event()
            self.redraw()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._go_on.wait(), wait)
            self._go_on = None
            self._summary = []
            self.redraw()
            return
        self._say("┄" * 40)
        for line in summary:
            self._say(f"  {line}")
        self._say("┄" * 40)
        if self._hand_pause > 0:
            await asyncio.sleep(self._hand_pause)

    def _explain(self) -> None:
        """``?``: each open choice with what it does (moves only at one's turn)."""
        mine = _my_turn(self.view)
        lines = [
            f"{c.key}) {c.text} — {c.explanation}" for c in self.choices if mine or not c.is_move
        ]
        if not lines:
            lines = ["nothing to choose now: wait for your turn"]
        if self.view.phase == game_pb2.PHASE_DRAW and mine:
            lines.insert(0, f"why you: {draw_text(self.view)}")
        self._help = lines
        for line in lines:
            self._say(f"? {line}")

    async def _tick(self) -> None:
        """Once a second: the live screen's timer; plain mode's reminders."""
        while True:
            await asyncio.sleep(1.0)
            if self._live_mode:
                self.redraw()
                continue
            left = seconds_left(self.view, time.time())
            if not _my_turn(self.view) or left is None:
                continue
            for mark in _WARN_AT:
                if left <= mark and mark not in self._warned:
                    self._warned.update(m for m in _WARN_AT if m >= left)
                    self._say(f"⏱ {left} s left to choose")
                    break

    # ------------------------------------------------------------------ input

    async def _handle(self, line: str) -> None:
        text = line.strip()
        if self._go_on is not None and not text:  # Enter: on to the next hand
            self._go_on.set()
            return
        if text == "?":
            self._explain()
            if _my_turn(self.view) and not self._live_mode:
                self._ask()
            self.redraw()
            return
        if not text:
            self._show(force=True)
            return
        if text.lower() == "r":
            self._notice = ""
            self._show(force=True)
            return
        choice = find_choice(self.choices, text)
        mine = _my_turn(self.view)
        if choice is None:
            keys = _keys(self.choices, mine)
            if text.isdigit() and not mine:
                self._tell(f"{text!r}: it is not your turn (messages: {keys or 'none'})")
            else:
                self._tell(f"{text!r} is not a choice: type one of {keys or 'r, q'}")
            if mine and not self._live_mode:
                self._ask()
            self.redraw()
            return
        self._notice = ""
        self._say(f"you: {choice.text}")
        sent = self.version
        try:
            update = await self._session.act(choice.action, etag=self.view.etag)
        except StaleView as stale:
            # Older than the version the etag named: that version was lost.
            behind = game_version(stale.view) < sent
            self._set_view(stale.view, game_version(stale.view), rewound=behind)
            self._tell("the game moved on before your choice arrived: choose again")
            self._asked = False
        except TrucError as error:
            current = self._session.view  # nothing changed: the session's view is current
            if current is not None:
                self._set_view(current, game_version(current))
            reason = printable(error.reason or error.code.name)
            self._tell(f"refused ({reason}): {printable(error.message)}")
            self._asked = False
        else:
            self._asked = False
            self._set_view(update.view, update.version)
        self._show()

    # ------------------------------------------------------------------ the session

    async def play(self, keyboard: Keyboard) -> game_pb2.GameView | None:
        """Play until the match ends (its final view) or the human quits (None)."""
        self.keyboard = keyboard
        if self._live_mode:
            self._live = Live(self.screen(), console=self._console, screen=True, auto_refresh=False)
        with self._live or contextlib.nullcontext():
            self._show(force=True)
            watcher = asyncio.create_task(self._watch())
            ticker = asyncio.create_task(self._tick())
            try:
                while True:
                    reading = asyncio.create_task(keyboard.lines.get())
                    await asyncio.wait({reading, watcher}, return_when=asyncio.FIRST_COMPLETED)
                    if watcher.done():
                        reading.cancel()
                        return watcher.result()
                    line = reading.result()
                    if line is None or line.strip().lower() == "q":
                        return None
                    await self._handle(line)
            finally:
                self._live = None
                for task in (watcher, ticker):
                    task.cancel()
                await asyncio.gather(watcher, ticker, return_exceptions=True)


async def _queue_bots(
    lobby: str, game: str, count: int, options: game_pb2.RuleOptions
) -> list[tuple[TrucClient, lobby_pb2.Ticket]]:
    bots = []
    for _ in range(count):
        client = TrucClient(lobby, game)
        await client.sign_in_guest("Bot")
        bots.append((client, await client.queue(options=options)))
    return bots


async def play(
    lobby: str,
    game: str,
    *,
    out: TextIO,
    stdin_fd: int,
    live: bool,
    name: str = "",
    bots: int | None = None,
    bot_think: float = 0.5,
    options: game_pb2.RuleOptions | None = None,
    seed: int = 7,
    seat_timeout: float = 120.0,
    hand_pause: float = 1.5,
) -> int:
    """Queue the human and ``bots`` bots (every other seat of the table of
    ``options``' rule set when None), then play the human's seat; 0 when done."""
    if live:
        console = Console(file=out, force_terminal=True)
    else:
        console = Console(file=out, force_terminal=False, color_system=None, width=100)

    def say(line: str) -> None:
        console.print(line, markup=False, highlight=False, emoji=False, soft_wrap=True)

    options = options or game_pb2.RuleOptions()
    seats = table_seats(options)
    bots = seats - 1 if bots is None else bots
    family = is_family(options.rule_set)
    bot_clients: list[tuple[TrucClient, lobby_pb2.Ticket]] = []
    players: list[asyncio.Task[game_pb2.GameView]] = []
    bots_seated: asyncio.Future[list[lobby_pb2.Ticket]] | None = None
    game_channel = grpc.aio.insecure_channel(game)
    stub: game_service_pb2_grpc.GameServiceAsyncStub = game_service_pb2_grpc.GameServiceStub(
        game_channel
    )
    human = TrucClient(lobby, game)
    seat: Seat | None = None
    keyboard = Keyboard(stdin_fd, edit=live and os.isatty(stdin_fd), on_change=lambda: None)
    keyboard.start()
    try:
        player = await human.sign_in_guest(name or default_name())
        me = printable(human.display_name, limit=32) or printable(player)
        ticket = await human.queue(options=options)
        say(f"signed in as {me} ({printable(player)}); queued {printable(ticket.name)}")
        bot_clients = await _queue_bots(lobby, game, bots, options)
        if bots:
            kind = "bot" if bots == 1 else "bots"
            say(
                f"{bots} {kind} queued the same way for {rule_set_name(options.rule_set)};"
                " waiting for the lobby to seat everyone"
            )
        # Every client follows its ticket from now on (the lobby seats followed tickets only).
        bots_seated = asyncio.gather(
            *(client.wait_until_seated(t.name, seat_timeout) for client, t in bot_clients)
        )
        seated_task = asyncio.create_task(human.wait_until_seated(ticket.name, seat_timeout))
        while not seated_task.done():
            reading = asyncio.create_task(keyboard.lines.get())
            await asyncio.wait({reading, seated_task}, return_when=asyncio.FIRST_COMPLETED)
            if not reading.done():
                reading.cancel()
                continue
            line = reading.result()
            if line is None or line.strip().lower() == "q":
                seated_task.cancel()
                with contextlib.suppress(TrucError):
                    await human.cancel(ticket.name)
                say("you left the queue")
                return 0
            say("not seated yet: q leaves the queue")
        seated = seated_task.result()
        tickets = await bots_seated
        policies = [HeuristicPolicy(seed + t.seat) for t in tickets]
        players = [
            asyncio.create_task(
                BotPlayer(stub, t.game, t.game_token, policy, think=bot_think).run()
            )
            for t, policy in zip(tickets, policies, strict=True)
        ]
        ours = {t.seat for t in tickets if t.game == seated.game}
        labels = {  # the bots queued here are guests: called by their seats
            a.seat: seat_label(a.seat, "", bot=True)
            if a.seat in ours
            else seat_label(a.seat, a.display_name, a.player, bot=a.bot)
            for a in seated.table
        }
        labels[seated.seat] = me
        game_name = printable(seated.game)
        say(f"seated in {game_name} at {seat_name(seated.seat)}, team {team_name(seated.team)}")
        for assignment in sorted(seated.table, key=lambda a: a.seat):
            role = "captain " if not family and assignment.seat in (0, 3) else ""
            who = labels.get(assignment.seat, "")
            say(f"   {role}{seat_name(assignment.seat)} {who}")
        if options.rule_set == game_pb2.RULE_SET_PARTNERSHIP_TRUC:
            say("   each hand the dealer and eldest govern their sides")
        view = await human.get_game(seated.game)  # the log so far, then the session after it
        async with human.session(seated.game, after_version=game_version(view)) as session:
            seat = Seat(
                session, view, console=console, live=live, labels=labels, hand_pause=hand_pause
            )
            keyboard.on_change = seat.redraw
            with _cbreak(stdin_fd) if keyboard.edit else contextlib.nullcontext():
                final = await seat.play(keyboard)
        if final is None:
            say("you left the table (the service plays your seat by default from now on)")
            return 0
        console.print(seat.screen())
        mine = final.seat % 2 if final.HasField("seat") else -1
        winner = team_name(final.winner)
        verdict = "your team wins" if final.winner - 1 == mine else "your team loses"
        won = score_text(final.manches, games_word(final))
        say(
            f"match over: team {winner} wins, {won}, after {final.hands_played}"
            f" hand{'s' if final.hands_played != 1 else ''}: {verdict}"
        )
        if players:  # they end with the match; one seated elsewhere is cancelled below
            await asyncio.wait(players, timeout=30)
        return 0
    finally:
        for task in players:
            task.cancel()
        await asyncio.gather(*players, return_exceptions=True)
        if bots_seated is not None:
            bots_seated.cancel()
            await asyncio.gather(bots_seated, return_exceptions=True)
        for client, _ in bot_clients:
            await client.close()
        await human.close()
        await game_channel.close(None)


def main(argv: Sequence[str] | None = None) -> int:
    """``truc play``: one human seat in the terminal against bots."""
    parser = argparse.ArgumentParser(
        prog="truc play", description="Take one seat of a match in the terminal."
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


RULE_SETS: Final = tuple(
    name.removeprefix("RULE_SET_").lower()
    for name, number in game_pb2.RuleSet.items()
    if number != game_pb2.RULE_SET_UNSPECIFIED
)
"""The names ``--ruleset`` takes: ``truc_y_flou``, ``french_truc``, ..."""
_TRICK_ORDERS: Final = {
    name.removeprefix("TRICK_ORDER_").lower(): number
    for name, number in game_pb2.TrickOrder.items()
    if number != game_pb2.TRICK_ORDER_UNSPECIFIED
}


def table_seats(options: game_pb2.RuleOptions) -> int:
    """Seats at a table of these options: 6, 4 or 2 (the engine's count)."""
    return seat_count(options_from_proto(options))


def _enum_names(enum: object, prefix: str) -> dict[str, int]:
    return {
        name.removeprefix(prefix).lower(): number
        for name, number in enum.items()  # type: ignore[attr-defined]
        if not name.endswith("_UNSPECIFIED")
    }


_PERIQUES: Final = _enum_names(game_pb2.PeriqueTrickRank, "PERIQUE_TRICK_RANK_")
_RESPONDERS: Final = _enum_names(game_pb2.Responder, "RESPONDER_")
_CUTS: Final = _enum_names(game_pb2.CutMode, "CUT_MODE_")


def rule_options(
    rule_set: str = "truc_y_flou",
    *,
    target_score: int = 0,
    manches: int = 0,
    seats: int = 0,
    trick_order: str = "",
    perique_trick_rank: str = "",
    play_out_all_tricks: bool = False,
    ace_value: int = 0,
    responder: str = "",
    cut: str = "",
) -> game_pb2.RuleOptions:
    """The options of a table of ``rule_set`` (0, False and "": the rule set's
    own). Truc y Flou's leave ``rule_set`` unset, as clients did before the
    others. Not validated here: :func:`checked_options` does."""
    options = game_pb2.RuleOptions(
        target_score=target_score,
        manches_to_win=manches,
        seats=seats,
        play_out_all_tricks=play_out_all_tricks,
        ace_value=ace_value,
    )
    if rule_set != "truc_y_flou":
        options.rule_set = game_pb2.RuleSet.Value("RULE_SET_" + rule_set.upper())
    if trick_order:
        options.trick_order = _TRICK_ORDERS[trick_order]
    if perique_trick_rank:
        options.perique_trick_rank = _PERIQUES[perique_trick_rank]  # type: ignore[assignment]
    if responder:
        options.responder = _RESPONDERS[responder]  # type: ignore[assignment]
    if cut:
        options.cut = _CUTS[cut]  # type: ignore[assignment]
    return options


def add_rule_arguments(parser: argparse.ArgumentParser) -> None:
    """The table's rule options (``truc play`` and ``make run``: one definition)."""
    rules = parser.add_argument_group("rule options (default: the rule set's own)")
    rules.add_argument(
        "--ruleset",
        default="truc_y_flou",
        choices=RULE_SETS,
        help="the game of the family (default truc_y_flou)",
    )
    rules.add_argument(
        "--target-score", type=int, default=0, help="points that win a manche (a game)"
    )
    rules.add_argument(
        "--manches", type=int, default=0, help="manches (games) to win the match (2)"
    )
    rules.add_argument("--seats", type=int, default=0, help="catalan_truc only: 4 (default) or 2")
    rules.add_argument(
        "--trick-order",
        default="",
        choices=tuple(_TRICK_ORDERS),
        help="french, sackson and partnership truc: the trick order (seven_eight)",
    )
    rules.add_argument(
        "--perique-trick-rank",
        default="",
        choices=tuple(_PERIQUES),
        help="truc_y_flou: where the periques rank in tricks (lowest)",
    )
    rules.add_argument(
        "--play-out-all-tricks",
        action="store_true",
        help="play all three tricks even once the hand is decided",
    )
    rules.add_argument(
        "--ace-value", type=int, default=0, choices=(0, 1), help="truc_y_flou: an ace in embits"
    )
    rules.add_argument(
        "--responder",
        default="",
        choices=tuple(_RESPONDERS),
        help="truc_y_flou: who answers a truc raise (captain)",
    )
    rules.add_argument(
        "--cut", default="", choices=tuple(_CUTS), help="truc_y_flou: who cuts (automatic)"
    )


def checked_options(args: argparse.Namespace) -> tuple[game_pb2.RuleOptions, int]:
    """The rule options of parsed :func:`add_rule_arguments`, and the table's
    seats; :class:`~truc_protocol.errors.InvalidArgument` naming the option
    when the rule set has no such option or refuses the value (the engine's
    own check, as the service makes it)."""
    options = rule_options(
        args.ruleset,
        target_score=args.target_score,
        manches=args.manches,
        seats=args.seats,
        trick_order=args.trick_order,
        perique_trick_rank=args.perique_trick_rank,
        play_out_all_tricks=args.play_out_all_tricks,
        ace_value=args.ace_value,
        responder=args.responder,
        cut=args.cut,
    )
    return options, table_seats(options)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``truc play`` (shared with ``truc_client.cli``)."""
    parser.add_argument("--lobby", default="localhost:50052", metavar="HOST:PORT")
    parser.add_argument("--game", default="localhost:50051", metavar="HOST:PORT")
    parser.add_argument("--name", default="", help="your display name (default: $USER, else Guest)")
    add_rule_arguments(parser)
    parser.add_argument(
        "--bots", type=int, default=None, help="bots to queue with you (default: every other seat)"
    )
    parser.add_argument("--bot-think", type=float, default=0.6, help="seconds a bot waits")
    parser.add_argument("--seed", type=int, default=7, help="the bots' seed")
    parser.add_argument(
        "--plain", action="store_true", help="plain output even on a terminal (no live screen)"
    )
    parser.add_argument(
        "--hand-pause",
        type=float,
        default=1.5,
        help="plain output: seconds to pause on each hand's summary (a terminal waits for Enter)",
    )


def option_problem(error: InvalidArgument) -> str:
    """An options refusal in the words of the command line: ``--target-score: ...``."""
    message = error.message
    field, _, rest = message.partition(": ")
    if field.startswith("options."):
        option = field.removeprefix("options.")
        flag = {"manches_to_win": "manches"}.get(option, option)
        return f"--{flag.replace('_', '-')}: {rest}"
    return message


def run(args: argparse.Namespace) -> int:
    """Play with parsed :func:`add_arguments` options."""
    try:
        options, seats = checked_options(args)
    except InvalidArgument as error:
        print(f"truc play: {option_problem(error)}", file=sys.stderr)
        return 2
    name = normalized_display_name(args.name)
    problem = display_name_problem(name) if name else None
    if problem is not None:
        print(f"truc play: --name: {problem}", file=sys.stderr)
        return 2
    if args.bots is not None and not 0 <= args.bots < seats:
        print(f"--bots: 0 to {seats - 1} at a table of {seats}", file=sys.stderr)
        return 2
    live = sys.stdout.isatty() and sys.stdin.isatty() and not args.plain
    try:
        return asyncio.run(
            play(
                args.lobby,
                args.game,
                out=sys.stdout,
                stdin_fd=sys.stdin.fileno(),
                live=live,
                name=name,
                bots=args.bots,
                bot_think=args.bot_think,
                options=options,
                seed=args.seed,
                hand_pause=max(0.0, args.hand_pause),
            )
        )
    except KeyboardInterrupt:
        return 130
    except TrucError as error:
        print(f"truc play: {printable(str(error))}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
