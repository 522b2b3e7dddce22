// words.js: the game in words. A Narrator tells each event (truc.v1.Event in
// its JSON form) as one line, with the players' display names; explain()
// says in one line what a legal action does, for the action buttons.
//
// Scores are always told team A first, then team B.

import { cardName, packOf } from "./cards.js";

/** "TEAM_A" -> "A". */
export function teamLetter(team) {
  return team === "TEAM_A" ? "A" : team === "TEAM_B" ? "B" : "";
}

/** The team of a seat: even seats are team A. */
export function teamOfSeat(seat) {
  return seat % 2 === 0 ? "TEAM_A" : "TEAM_B";
}

/** "Truc y Flou", "French Truc", ... */
export function ruleSetName(ruleSet) {
  return (
    {
      RULE_SET_UNSPECIFIED: "Truc y Flou",
      RULE_SET_TRUC_Y_FLOU: "Truc y Flou",
      RULE_SET_FRENCH_TRUC: "French Truc",
      RULE_SET_SACKSON_TRUC: "Sackson Truc",
      RULE_SET_PARTNERSHIP_TRUC: "Partnership Truc",
      RULE_SET_CATALAN_TRUC: "Catalan Truc",
    }[ruleSet] || ruleSet
  );
}

/** A manche is a "game" in the other rule sets (variants.md). */
export function mancheWord(ruleSet) {
  return ruleSet === "RULE_SET_TRUC_Y_FLOU" || ruleSet === "RULE_SET_UNSPECIFIED"
    ? "manche"
    : "game";
}

/** "TRUC", "MI FALTA": a call as the rules name it, readable. */
export function callName(call) {
  return String(call || "").replace(/^CALL_/, "").replaceAll("_", " ");
}

const SIGNALS = {
  SIGNAL_ESPASA: "I hold the Espasa (ace of swords)",
  SIGNAL_BASTO: "I hold the Basto (ace of clubs)",
  SIGNAL_MANILLA_SW: "I hold the 7 of swords",
  SIGNAL_MANILLA_CO: "I hold the 7 of coins",
  SIGNAL_TRES: "I hold a 3",
  SIGNAL_DUS: "I hold a 2",
  SIGNAL_SEVEN: "a smile: I hold a 7",
  SIGNAL_EIGHT: "a wink: I hold an 8",
  SIGNAL_ACE: "a shrug: I hold an ace",
  SIGNAL_AS: "I hold an ace",
};

const DIRECTIVES = {
  DIRECTIVE_LET_THEM_TAKE_IT: "let them take this trick",
  DIRECTIVE_PLAY_HIGH: "play high",
  DIRECTIVE_PLAY_LOW: "play low",
  DIRECTIVE_EMBIDE: "declare the embit",
  DIRECTIVE_TRUC: "call truc",
  DIRECTIVE_STAY_QUIET: "stay quiet",
  DIRECTIVE_PLAY_SEVEN: "play a 7 next, if you hold one (binding)",
  DIRECTIVE_LEAVE_IT_TO_ME: "leave it to me: play one of your lowest cards next (binding)",
};

/** A signal in words. */
export function signalWords(signal) {
  return SIGNALS[signal] || String(signal).replace(/^SIGNAL_/, "");
}

/** A directive in words. */
export function directiveWords(directive) {
  return DIRECTIVES[directive] || String(directive).replace(/^DIRECTIVE_/, "");
}

const CREDIT_REASONS = {
  CREDIT_REASON_EMBIT: "embit",
  CREDIT_REASON_FLOR: "flor",
  CREDIT_REASON_FLOR_TAMBIEN: "flor tambien",
  CREDIT_REASON_BONUS: "bonus",
  CREDIT_REASON_HAND: "the hand",
  CREDIT_REASON_FOLD: "fold",
};

const HAND_ENDS = {
  HAND_END_TRICKS: "on tricks",
  HAND_END_FOLD: "by a fold",
  HAND_END_ALL_PARDES: "every trick spoiled",
  HAND_END_MANCHE_OVER: "the manche is over",
};

function score(pair) {
  const a = (pair && pair.teamA) || 0;
  const b = (pair && pair.teamB) || 0;
  return `${a}–${b}`;
}

function points(n) {
  return n === 1 ? "1 point" : `${n} points`;
}

/**
 * Tells a game's events in order. `nameOf(seat)` gives a seat's display name.
 * It remembers what a line needs from earlier ones: the call an answer
 * answers, the cards of the trick (to name the Espasa or Basto of a bonus),
 * the credits of the hand (for the hand's result line).
 */
export class Narrator {
  constructor(ruleSet, nameOf) {
    this.ruleSet = ruleSet || "RULE_SET_TRUC_Y_FLOU";
    this.pack = packOf(this.ruleSet);
    this.nameOf = nameOf;
    this.pending = null;
    this.lastCaller = null;
    this.trickCards = [];
    this.lastTrickCards = [];
    this.handCredits = [];
  }

  who(seat) {
    return this.nameOf(seat);
  }

  /** The lines of one event (usually one, none for what a reader need not see). */
  lines(event) {
    const line = this.describe(event);
    return line ? [line] : [];
  }

  describe(event) {
    const kind = Object.keys(event).find((key) => key !== "version");
    const e = event[kind];
    switch (kind) {
      case "drawCard":
        return `${this.who(e.seat)} drew ${cardName(e.card, this.pack)} for the first deal`;
      case "dealerChosen":
        return e.seat === undefined
          ? `${this.who(e.dealer)} deals first`
          : `${this.who(e.seat)} won the draw and named ${this.who(e.dealer)} first dealer`;
      case "handStarted":
        this.pending = null;
        this.handCredits = [];
        this.trickCards = [];
        return (
          `Hand ${e.handNumber} (${e.belle ? "the deciding " + mancheWord(this.ruleSet) : mancheWord(this.ruleSet) + " " + e.manche}):` +
          ` ${this.who(e.dealer)} deals, ${this.who(e.eldest)} leads`
        );
      case "deckCut":
        return `${this.who(e.seat)} cut the pack at ${e.position}`;
      case "cardsDealt": {
        const held = (e.cards || []).map((c) => cardName(c, this.pack)).join(", ");
        const extra = [];
        if (e.flor !== undefined) extra.push(`flor ${e.flor}`);
        if (e.embit !== undefined) extra.push(`embit ${e.embit}`);
        return `${this.who(e.seat)} got ${held}${extra.length ? ` (${extra.join(", ")})` : ""}`;
      }
      case "dealsExhausted":
        return "No deal left";
      case "called":
        return this.called(e);
      case "declarationSettled": {
        const what = e.contest === "CONTEST_FLOR" ? "Flor" : "Embit";
        const shown = (e.shown || [])
          .map((s) => `${this.who(s.seat)} ${s.hasDeclaration ? s.value : "nothing"}`)
          .join(" vs ");
        const team = teamLetter(e.team);
        if (!team) return `${what} settled: nobody scores${shown ? ` (${shown})` : ""}`;
        return `${what} to team ${team}: +${e.points}${e.winsManche ? " (wins the manche)" : ""}${shown ? ` (${shown})` : ""}`;
      }
      case "florShowdown":
        return `Flor showdown to team ${teamLetter(e.winner) || "nobody"}`;
      case "embitVoided":
        return `Embit voided by flor (team ${teamLetter(e.team)}'s ${points(e.points)} cancelled)`;
      case "stakeRaised": {
        const by = this.lastCaller;
        const team = by === null ? "" : ` by team ${teamLetter(teamOfSeat(by))}`;
        const worth = e.stake === 0 ? (this.ruleSet === "RULE_SET_TRUC_Y_FLOU" ? "the manche" : "the game") : points(e.stake);
        return `${callName(e.call)} accepted${team}: the hand is worth ${worth}`;
      }
      case "cardPlayed":
        this.trickCards.push(e.card);
        return `${this.who(e.seat)} played ${cardName(e.card, this.pack)}`;
      case "trickCompleted": {
        this.lastTrickCards = this.trickCards;
        this.trickCards = [];
        const team = teamLetter(e.winner);
        if (!team) return `Trick ${e.trick} spoiled (pardes): nobody wins it`;
        const by = e.winningSeat !== undefined ? ` (${this.who(e.winningSeat)})` : "";
        return `Trick ${e.trick} to team ${team}${by}`;
      }
      case "pointsCredited": {
        const reason = this.creditReason(e.reason);
        this.handCredits.push({ team: e.team, points: e.points, reason });
        return `Team ${teamLetter(e.team)} +${e.points} (${reason}): ${score(e.scores)}`;
      }
      case "handEnded":
        return this.handEnded(e);
      case "mancheEnded":
        return (
          `${mancheWord(this.ruleSet) === "game" ? "Game" : "Manche"} to team ${teamLetter(e.winner)}, ` +
          `${score(e.scores)}; ${mancheWord(this.ruleSet)}s won ${score(e.manches)}`
        );
      case "matchEnded":
        return `Team ${teamLetter(e.winner)} wins the match (${score(e.manches)} in ${mancheWord(this.ruleSet)}s)`;
      case "signalSent":
        return `${this.who(e.seat)} signalled: ${signalWords(e.signal)}`;
      case "directiveSent":
        return `${this.who(e.seat)} told the team: ${directiveWords(e.directive)}`;
      case "turnTimedOut":
        return `${this.who(e.seat)}'s time ran out: the house chose to ${explainShort(e.action, this.pack)}`;
      default:
        return null;
    }
  }

  /** "bonus: Espasa", "the hand", ... */
  creditReason(reason) {
    if (reason !== "CREDIT_REASON_BONUS") return CREDIT_REASONS[reason] || "points";
    const cards = [...this.lastTrickCards, ...this.trickCards];
    const names = [];
    if (cards.some((c) => c.suit === "SUIT_SWORDS" && c.rank === "RANK_ONE")) names.push("Espasa");
    if (cards.some((c) => c.suit === "SUIT_CLUBS" && c.rank === "RANK_ONE")) names.push("Basto");
    return names.length ? names.join(" and ") : "bonus";
  }

  called(e) {
    const who = this.who(e.seat);
    const team = teamLetter(teamOfSeat(e.seat));
    const call = e.call;
    const pending = this.pending;
    this.lastCaller = e.seat;
    const answers = ["CALL_ACCEPT", "CALL_FOLD", "CALL_REFUSE", "CALL_PASS"];
    if (pending && answers.includes(call)) {
      this.pending = null;
      const asked = `${this.who(pending.seat)}'s ${callName(pending.call).toLowerCase()}`;
      if (call === "CALL_ACCEPT") return `${who} (team ${team}) accepted ${asked}`;
      if (call === "CALL_FOLD") return `${who} (team ${team}) folded to ${asked}`;
      if (call === "CALL_REFUSE") return `${who} (team ${team}) refused the redeal`;
      return `${who} (team ${team}) passed`;
    }
    if (call === "CALL_PASS") return `${who} (team ${team}) passed`;
    if (call === "CALL_FOLD") return `${who} (team ${team}) folded: the hand is conceded`;
    this.pending = { seat: e.seat, call };
    return `${who} (team ${team}) called ${callName(call).toLowerCase()}`;
  }

  handEnded(e) {
    const team = teamLetter(e.winner);
    const mine = this.handCredits.filter((c) => !team || teamLetter(c.team) === team);
    const gains = mine.map((c) => `+${c.points} (${c.reason})`).join(", ");
    const others = this.handCredits.filter((c) => team && teamLetter(c.team) !== team);
    const theirs = others.map((c) => `team ${teamLetter(c.team)} +${c.points} (${c.reason})`);
    let how = HAND_ENDS[e.how] || "";
    if (e.how === "HAND_END_MANCHE_OVER" && !team) {
      return `Hand ${e.handNumber} stops here: the ${mancheWord(this.ruleSet)} is over`;
    }
    if (e.how === "HAND_END_MANCHE_OVER") how = `the ${mancheWord(this.ruleSet)} is over`;
    if (!team) return `Hand ${e.handNumber}: nobody wins it${how ? ` (${how})` : ""}`;
    let line = `Hand ${e.handNumber} to team ${team}${gains ? `: ${gains}` : ""}`;
    if (theirs.length) line += `; ${theirs.join(", ")}`;
    return how ? `${line} — ${how}` : line;
  }

  /** The hand's credits so far, as {team, points, reason} (the result panel). */
  credits() {
    return [...this.handCredits];
  }
}

// ------------------------------------------------------------------ actions

/** The words of an action in a few words: "play the 7 of coins", "call truc". */
export function explainShort(action, pack = "spanish") {
  if (!action) return "do nothing";
  if (action.playCard) return `play ${cardName(action.playCard, pack)}`;
  if (action.call) return `call ${callName(action.call).toLowerCase()}`;
  if (action.chooseDealer !== undefined) return `name seat ${action.chooseDealer} dealer`;
  if (action.cutDeck !== undefined) return `cut ${action.cutDeck} cards`;
  if (action.signal) return `signal: ${signalWords(action.signal)}`;
  if (action.directive) return `direct: ${directiveWords(action.directive)}`;
  return "act";
}

/** The next rung of a stake, in words ("2 points"). */
function nextStake(view) {
  const stake = view.stake || 1;
  if (view.ruleSet === "RULE_SET_SACKSON_TRUC") return points(stake * 2);
  if (view.ruleSet === "RULE_SET_CATALAN_TRUC") return points(stake + 1);
  return points(stake === 1 ? 2 : stake + 2);
}

const TRUC_LADDER = {
  CALL_TRUC: 2,
  CALL_RETRUC: 3,
  CALL_BALOU_QUATRO: 4,
  CALL_BALOU_SEIZ: 6,
};

/**
 * An action button's label and its one-line explanation, for `view` (the
 * viewer's GameView): {label, help}.
 */
export function explain(action, view, nameOf = (seat) => `seat ${seat}`) {
  const pack = packOf(view.ruleSet);
  const family = view.ruleSet !== "RULE_SET_TRUC_Y_FLOU" && view.ruleSet !== "RULE_SET_UNSPECIFIED";
  const prompt = view.prompt;
  if (action.playCard) {
    const leading = !(view.currentTrick && (view.currentTrick.plays || []).length);
    return {
      label: `Play ${cardName(action.playCard, pack)}`,
      help: leading ? "Lead this card to the trick" : "Play this card to the trick: the highest card takes it",
    };
  }
  if (action.chooseDealer !== undefined) {
    return {
      label: `Name ${nameOf(action.chooseDealer)} dealer`,
      help: "You won the draw: choose who deals the first hand (the seat after the dealer leads)",
    };
  }
  if (action.cutDeck !== undefined) {
    return { label: `Cut ${action.cutDeck}`, help: "Cut the pack: this many cards go under" };
  }
  if (action.signal) {
    return { label: `Signal: ${signalWords(action.signal)}`, help: "Tell your team (only they see it)" };
  }
  if (action.directive) {
    return {
      label: `Directive: ${directiveWords(action.directive)}`,
      help: "Advise your team (only they see it)",
    };
  }
  const call = action.call;
  const label = callName(call).toLowerCase();
  const help = callHelp(call, view, family);
  const title = label.charAt(0).toUpperCase() + label.slice(1);
  if (call === "CALL_ACCEPT" && prompt === "PROMPT_REDEAL_ANSWER") return { label: "Accept the redeal", help };
  return { label: family && call === "CALL_RAISE" ? `Raise to ${nextStake(view)}` : title, help };
}

function callHelp(call, view, family) {
  const prompt = view.prompt;
  switch (call) {
    case "CALL_TRUC":
      if (family) return "Call truc: raise the hand's stake to 2 points; the other side accepts or folds";
      return "Call truc: raise the hand's stake to 2 points; the other team accepts, refuses or raises";
    case "CALL_RETRUC":
      if (family) return "Call retruc: raise the hand's stake to 3 points; the other side accepts or folds";
      return "Raise the truc to 3 points; the other team accepts, refuses or raises again";
    case "CALL_BALOU_QUATRO":
      return "Raise the truc to 4 points; the other team accepts, refuses or raises again";
    case "CALL_BALOU_SEIZ":
      return "Raise the truc to 6 points; the other team accepts, refuses or raises again";
    case "CALL_BALOU_PARTIDO":
      return "Raise the truc to the whole manche: whoever wins this hand wins the manche";
    case "CALL_RAISE":
      return `Raise the hand's stake to ${nextStake(view)}; your opponent accepts or folds`;
    case "CALL_MON_RESTE":
      if (prompt === "PROMPT_MON_RESTE_ANSWER") return "Accept: this hand decides the whole game";
      return "Mon reste: stake what you still need to win the game on this hand; they fold or accept";
    case "CALL_PROPOSE_REDEAL":
      return "Propose a redeal: new cards for both, if the dealer accepts";
    case "CALL_REFUSE":
      return "Refuse the redeal: play goes on with these cards";
    case "CALL_ACCEPT":
      if (prompt === "PROMPT_REDEAL_ANSWER") return "Accept the redeal: three new cards each";
      if (prompt === "PROMPT_EMBIT_ANSWER") return "Accept the embit raise: the showdown decides it";
      if (prompt === "PROMPT_FLOR_CHALLENGER") return "Accept the flor raise: the flors are compared";
      return `Accept: the hand is played for the raised stake${view.trucCall && TRUC_LADDER[view.trucCall.call] ? ` (${points(TRUC_LADDER[view.trucCall.call])})` : ""}`;
    case "CALL_FOLD":
      if (prompt === "PROMPT_TURN") return "Concede the hand: the other side scores the stake";
      if (prompt === "PROMPT_EMBIT_ANSWER") return "Give up the embit: the challengers score it";
      return "Refuse: the other side scores what the hand was worth before the raise";
    case "CALL_EMBIDE":
      return "Declare an embit (two cards of a suit): the other team passes or challenges";
    case "CALL_MI_FALTA":
      return "Declare the embit for what your team still needs to win the manche";
    case "CALL_RESTOU_Y_TROUCOU":
      return "Declare the embit and truc at once: the other team passes or challenges";
    case "CALL_FLOR":
      return "Declare your flor (three cards of a suit): worth 3 points unless challenged";
    case "CALL_PASS":
      return "Pass: let the declaration stand without a challenge";
    case "CALL_CANTAR":
      return "Challenge the embit: the values are compared in a showdown";
    case "CALL_U_AOUTE":
      return "Challenge the embit and raise it by 1 point";
    case "CALL_DUS_DE_MES":
      return "Challenge the embit and raise it by 2 points";
    case "CALL_DETZ_DE_MES":
      return "Challenge the embit and raise it by 10 points";
    case "CALL_RESTOU":
      return "Challenge the embit for what your team still needs to win the manche";
    case "CALL_FLOR_TAMBIEN":
      return "Answer with your own flor: the flors are compared at the end of the hand";
    case "CALL_ALIMIDOU_CON_FLOR":
      return "Challenge the flor with your own flor and raise it";
    case "CALL_ALIMIDOU_CANTAR":
      return "Take up the flor challenge: the flors are compared";
    case "CALL_ALIBARESTOU_CON_FLOR":
      return "Raise the flor challenge again: the flors decide the manche";
    default:
      return "";
  }
}
