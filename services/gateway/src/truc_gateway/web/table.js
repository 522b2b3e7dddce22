// table.js: draws a GameView (the JSON of truc.v1.GameView) as a card table:
// the seats around it with names, team colours and marks, the hidden hands as
// card backs, the trick being played and the ones done, the scores (team A
// first), the stake and the calls, and the viewer's own hand as pictures.
// A spectator's view has no `seat` and no hand: the same drawing, seat 0 at
// the bottom.

import { cardBack, cardSvg, packOf } from "./cards.js";
import { h } from "./dom.js";
import { callName, mancheWord, ruleSetName, teamLetter } from "./words.js";

/** Where each seat sits, counted from the viewer's (at the bottom). */
const PLACES = {
  2: ["bottom", "top"],
  4: ["bottom", "right", "top", "left"],
  6: ["bottom", "bottom-right", "top-right", "top", "top-left", "bottom-left"],
};

/** A seat's name at the table: its display name, else its player id. */
export function seatName(view, seat) {
  const info = (view.seats || []).find((s) => s.seat === seat);
  if (info && info.displayName) return info.displayName;
  if (info && info.player) return info.player;
  return `Seat ${seat}`;
}

function teamClass(team) {
  return team === "TEAM_A" ? "team-a" : "team-b";
}

function seatBox(view, info, place) {
  const marks = [];
  if (info.seat === view.seat) marks.push(h("span", { class: "mark you" }, "you"));
  if (info.captain) marks.push(h("span", { class: "mark", title: "captain" }, "captain"));
  if (info.governor) marks.push(h("span", { class: "mark", title: "governor: answers raises" }, "governor"));
  if (info.seat === view.dealer && view.phase === "PHASE_PLAY") marks.push(h("span", { class: "mark" }, "dealer"));
  if (info.absent) marks.push(h("span", { class: "mark absent", title: "the house plays for this seat" }, "away"));
  const acting = view.toAct === info.seat && !view.finished;
  const backs = [];
  const hidden = info.seat === view.seat ? 0 : Math.max(0, (info.handSize || 0) - (info.shown || []).length);
  for (let i = 0; i < hidden; i += 1) backs.push(cardBack());
  const pack = packOf(view.ruleSet);
  const shown = (info.shown || []).map((card) => cardSvg(card, pack));
  return h(
    "div",
    {
      class: `seat place-${place} ${teamClass(info.team)}${acting ? " acting" : ""}`,
      dataset: { testid: "seat", seat: info.seat },
    },
    h("div", { class: "seat-name", dataset: { testid: "seat-name" } }, seatName(view, info.seat)),
    h("div", { class: "seat-team" }, `team ${teamLetter(info.team)}`, ...marks),
    h(
      "div",
      { class: "seat-cards", dataset: { testid: "hand-size" }, title: `${info.handSize || 0} cards` },
      ...backs,
      ...shown,
    ),
    acting ? h("div", { class: "seat-acting" }, "to act") : null,
  );
}

function trickView(view, trick, className, testid) {
  const pack = packOf(view.ruleSet);
  return h(
    "div",
    { class: className, dataset: { testid } },
    ...(trick.plays || []).map((play) =>
      h(
        "figure",
        { class: `played ${teamClass(play.seat % 2 === 0 ? "TEAM_A" : "TEAM_B")}` },
        cardSvg(play.card, pack),
        h("figcaption", {}, seatName(view, play.seat)),
      ),
    ),
  );
}

/** The line about the call waiting for an answer, the stake, the declarations. */
function callState(view) {
  const lines = [];
  const call = view.trucCall;
  if (call && call.call && call.call !== "CALL_UNSPECIFIED") {
    lines.push(
      `${seatName(view, call.caller)} called ${callName(call.call).toLowerCase()}: ` +
        `${seatName(view, call.answerer)} to answer`,
    );
  } else if (view.stakeCall && view.stakeCall !== "CALL_UNSPECIFIED") {
    // last_raiser is the team that CALLED the accepted raise; the other side accepted it.
    const team = teamLetter(view.lastRaiser);
    lines.push(`${callName(view.stakeCall).toLowerCase()}${team ? ` called by team ${team}` : ""}, accepted`);
  }
  if (view.monReste) lines.push("mon reste: this hand decides the game");
  if (view.redealProposed) lines.push("a redeal was proposed this hand");
  if (view.instruction && view.instruction !== "DIRECTIVE_UNSPECIFIED") {
    lines.push(`bound by ${view.instruction.replace(/^DIRECTIVE_/, "").toLowerCase().replaceAll("_", " ")}`);
  }
  return lines;
}

function declarations(view) {
  const lines = [];
  const embit = view.embit;
  if (embit && embit.call && embit.call !== "CALL_UNSPECIFIED") {
    let line = `${callName(embit.call).toLowerCase()} by ${seatName(view, embit.opener)}`;
    if (embit.challenge && embit.challenge !== "CALL_UNSPECIFIED") {
      line += `, ${callName(embit.challenge).toLowerCase()}`;
      if (embit.challenger !== undefined) line += ` by ${seatName(view, embit.challenger)}`;
    }
    const result = embit.result;
    if (result && result.team && result.team !== "TEAM_UNSPECIFIED") {
      line += ` → team ${teamLetter(result.team)} +${result.points}`;
    }
    lines.push(`Embit: ${line}`);
  }
  for (const flor of view.flors || []) {
    let line = `flor of ${seatName(view, flor.declarer)}`;
    if (flor.challenge && flor.challenge !== "CALL_UNSPECIFIED") line += `, ${callName(flor.challenge).toLowerCase()}`;
    if (flor.result && flor.result.team && flor.result.team !== "TEAM_UNSPECIFIED") {
      line += ` → team ${teamLetter(flor.result.team)} +${flor.result.points}`;
    }
    lines.push(`Flor: ${line}`);
  }
  if (view.embitValue !== undefined || view.florValue !== undefined) {
    const mine = [];
    if (view.embitValue !== undefined) mine.push(`embit ${view.embitValue}`);
    if (view.florValue !== undefined) mine.push(`flor ${view.florValue}`);
    lines.push(`Your declaration values: ${mine.join(", ")}`);
  }
  return lines;
}

/** "José María to play" / "Your turn: ..." / "Match over". */
export function turnLine(view) {
  if (view.finished || view.phase === "PHASE_MATCH_OVER") return "The match is over";
  if (view.toAct === undefined) return "Nobody to act";
  if (view.toAct === view.seat) return "Your turn";
  return `${seatName(view, view.toAct)} to act`;
}

/** The scoreboard: team A first, always. */
export function scoreLine(view) {
  const s = view.scores || {};
  const m = view.manches || {};
  const word = mancheWord(view.ruleSet);
  return `Team A ${s.teamA || 0} – Team B ${s.teamB || 0} · ${word}s ${m.teamA || 0}–${m.teamB || 0}`;
}

/** Draws `view` into `container` (replacing what was there). */
export function drawTable(container, view) {
  const count = view.seatCount || (view.seats || []).length || 2;
  const places = PLACES[count] || PLACES[6];
  const base = view.seat === undefined ? 0 : view.seat;
  const seats = (view.seats || []).map((info) =>
    seatBox(view, info, places[(info.seat - base + count) % count] || "top"),
  );
  const options = view.options || {};
  const stake = view.stake === 0 ? `the ${mancheWord(view.ruleSet)}` : `${view.stake || 1}`;
  const centre = h(
    "div",
    { class: "table-centre" },
    trickView(view, view.currentTrick || {}, "trick current", "trick"),
    h(
      "div",
      { class: "tricks-done", dataset: { testid: "tricks" } },
      ...(view.tricks || []).map((trick, index) =>
        h(
          "span",
          { class: `trick-done ${trick.winner === "TEAM_A" ? "team-a" : trick.winner === "TEAM_B" ? "team-b" : "pardes"}` },
          `trick ${index + 1}: ${teamLetter(trick.winner) ? `team ${teamLetter(trick.winner)}` : "pardes"}`,
        ),
      ),
    ),
  );
  const pack = packOf(view.ruleSet);
  const hand =
    view.seat === undefined
      ? null
      : h(
          "div",
          { class: "my-hand", dataset: { testid: "hand" } },
          ...(view.hand || []).map((card) => cardSvg(card, pack)),
        );
  const info = h(
    "div",
    { class: "table-info" },
    h("div", { class: "scores", dataset: { testid: "scores" } }, scoreLine(view)),
    h(
      "div",
      { class: "hand-line" },
      `${ruleSetName(view.ruleSet)} · hand ${view.handNumber || 1} · to ${options.targetScore || "the target"} · `,
      h("span", { dataset: { testid: "stake" } }, `stake ${stake}`),
    ),
    h("div", { class: "turn", dataset: { testid: "turn" } }, turnLine(view), " ", h("span", { class: "timer", dataset: { testid: "turn-timer" } })),
    h("div", { class: "call-state", dataset: { testid: "call-state" } }, ...callState(view).map((line) => h("div", {}, line))),
    h("div", { class: "declarations", dataset: { testid: "declarations" } }, ...declarations(view).map((line) => h("div", {}, line))),
  );
  const felt = h("div", { class: `felt seats-${count}`, dataset: { testid: "table" } }, ...seats, centre);
  container.replaceChildren(...[info, felt, hand].filter(Boolean));
}

/** "12 s" left before the deadline (RFC 3339), "" when there is none. */
export function timerText(view, now = Date.now()) {
  if (!view || !view.deadline || view.finished || view.toAct === undefined) return "";
  const left = Math.max(0, Math.ceil((Date.parse(view.deadline) - now) / 1000));
  return Number.isFinite(left) ? `${left} s left` : "";
}
