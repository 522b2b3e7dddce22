// Cards, teams and events in words, for the lines the client prints.

// Both packs (cards.proto): the Spanish suits and the piquet pack's French ones;
// SUIT_CLUBS is the clubs of both ("Cl"), read in the game's own pack.
const SUITS = {
  SUIT_SWORDS: 'Sw',
  SUIT_CLUBS: 'Cl',
  SUIT_COINS: 'Co',
  SUIT_CUPS: 'Cu',
  SUIT_HEARTS: 'He',
  SUIT_DIAMONDS: 'Di',
  SUIT_SPADES: 'Sp',
};
const RANKS = {
  RANK_ONE: '1',
  RANK_TWO: '2',
  RANK_THREE: '3',
  RANK_FOUR: '4',
  RANK_FIVE: '5',
  RANK_SIX: '6',
  RANK_SEVEN: '7',
  RANK_JACK: 'J',
  RANK_KNIGHT: 'N',
  RANK_KING: 'K',
  RANK_EIGHT: '8',
  RANK_NINE: '9',
  RANK_TEN: 'T',
  RANK_QUEEN: 'Q',
  RANK_ACE: 'A',
};

/** A card as the protocol writes it in text: "1Sw", "JCo"; "7He", "TSp" in the piquet pack. */
export function cardText(card) {
  return card ? `${RANKS[card.rank] ?? '?'}${SUITS[card.suit] ?? '?'}` : '?';
}

/** 'RULE_SET_FRENCH_TRUC' -> 'french_truc' (unspecified is Truc y Flou, as in the protocol). */
export function ruleSetName(ruleSet) {
  if (!ruleSet || ruleSet === 'RULE_SET_UNSPECIFIED') return 'truc_y_flou';
  return String(ruleSet).replace(/^RULE_SET_/, '').toLowerCase();
}

/** 'french_truc' -> 'RULE_SET_FRENCH_TRUC'. */
export function ruleSetValue(name) {
  return `RULE_SET_${name.toUpperCase()}`;
}

/** 'TEAM_A' -> 'team A'; no team -> 'nobody'. */
export function teamText(team) {
  return team === 'TEAM_A' ? 'team A' : team === 'TEAM_B' ? 'team B' : 'nobody';
}

/** Team A holds the even seats, team B the odd ones (at every table size). */
export function teamOfSeat(seat) {
  return seat % 2 === 0 ? 'TEAM_A' : 'TEAM_B';
}

/** 'CALL_RESTOU_Y_TROUCOU' -> 'restou y troucou'. */
export function callText(call) {
  return String(call).replace(/^CALL_/, '').replaceAll('_', ' ').toLowerCase();
}

/** An action in words: "play 7Sw", "call truc", "choose dealer 2". */
export function actionText(action) {
  const [kind] = Object.keys(action);
  const value = action[kind];
  switch (kind) {
    case 'play_card':
      return `play ${cardText(value)}`;
    case 'call':
      return `call ${callText(value)}`;
    case 'choose_dealer':
      return `choose dealer ${value}`;
    case 'cut_deck':
      return `cut ${value}`;
    default:
      return `${kind} ${value}`;
  }
}

const score = (s) => `${s?.team_a ?? 0}-${s?.team_b ?? 0}`;

/** Turns a seat's events into lines; holds the cards of the trick in progress. */
export class Narrator {
  /** @param ruleSet the game's rule set name ('truc_y_flou', 'french_truc', ...) */
  constructor(seat, ruleSet = 'truc_y_flou') {
    this.seat = seat;
    this.trick = [];
    // Truc y Flou plays manches and calls a tied trick pardes; the other rule
    // sets play games and call it spoiled (variants.md V1.4, V1.5).
    const family = ruleSet !== 'truc_y_flou';
    this.tied = family ? 'spoiled' : 'pardes';
    this.manche = family ? 'game' : 'manche';
  }

  who(seat) {
    return seat === this.seat ? `me (seat ${seat})` : `seat ${seat}`;
  }

  /** The line for one event, or null for those not worth a line. */
  line(event) {
    const e = event[event.kind];
    switch (event.kind) {
      case 'dealer_chosen':
        return `dealer: seat ${e.dealer}`;
      case 'hand_started':
        this.trick = [];
        return `-- hand ${e.hand_number} (${this.manche} ${e.manche}${e.belle ? ', belle' : ''}): dealer seat ${e.dealer}, eldest seat ${e.eldest}`;
      case 'cards_dealt':
        return e.seat === this.seat ? `my cards: ${e.cards.map(cardText).join(' ')}` : null;
      case 'called':
        return `${this.who(e.seat)} calls ${callText(e.call)}`;
      case 'declaration_settled':
        return `${e.contest === 'CONTEST_FLOR' ? 'flor' : 'embit'} settled: ${e.points} for ${teamText(e.team)}`;
      case 'stake_raised':
        return `stake now ${e.stake === 0 ? `the ${this.manche}` : e.stake}`;
      case 'card_played':
        this.trick.push(`${cardText(e.card)}(${e.seat === this.seat ? 'me' : e.seat})`);
        return null;
      case 'trick_completed': {
        const plays = this.trick.join(' ');
        this.trick = [];
        return `trick ${e.trick}: ${plays} -> ${e.winner === 'TEAM_UNSPECIFIED' ? this.tied : teamText(e.winner)}`;
      }
      case 'hand_ended': {
        const left = this.trick.join(' ');
        this.trick = [];
        return left ? `trick left unfinished: ${left}` : null;
      }
      case 'points_credited':
        return `${teamText(e.team)} +${e.points} (${String(e.reason).replace('CREDIT_REASON_', '').toLowerCase()}): ${score(e.scores)}`;
      case 'manche_ended':
        return `${this.manche} to ${teamText(e.winner)} ${score(e.scores)}; ${this.manche}s ${score(e.manches)}`;
      case 'match_ended':
        return `match over: ${teamText(e.winner)} won, ${this.manche}s ${score(e.manches)}`;
      case 'turn_timed_out':
        return `${this.who(e.seat)} timed out; the server played for it`;
      default:
        return null;
    }
  }
}
