// cards.js: the two packs of the Truc family and a picture of each card,
// drawn here in SVG (no image files, no copied artwork): the rank in the
// corners and the suit's symbol in the middle.
//
// The Spanish pack (Truc y Flou, Catalan Truc) has swords, clubs (bastos),
// coins and cups, ranks 1-7, J (sota), N (caballo, the knight), K; the piquet
// pack (French, Sackson and partnership Truc) has hearts, diamonds, clubs and
// spades, ranks 7 8 9 T J Q K A. SUIT_CLUBS is the clubs of both: a card is
// read in its game's pack (proto/truc/v1/cards.proto).

const SVG = "http://www.w3.org/2000/svg";

/** The pack a rule set plays with: "spanish" or "piquet". */
export function packOf(ruleSet) {
  return ruleSet === "RULE_SET_FRENCH_TRUC" ||
    ruleSet === "RULE_SET_SACKSON_TRUC" ||
    ruleSet === "RULE_SET_PARTNERSHIP_TRUC"
    ? "piquet"
    : "spanish";
}

/** Rank enum name -> [corner text, name in words]. */
const RANKS = {
  RANK_ONE: ["1", "ace"],
  RANK_TWO: ["2", "2"],
  RANK_THREE: ["3", "3"],
  RANK_FOUR: ["4", "4"],
  RANK_FIVE: ["5", "5"],
  RANK_SIX: ["6", "6"],
  RANK_SEVEN: ["7", "7"],
  RANK_JACK: ["J", "jack"],
  RANK_KNIGHT: ["N", "knight"],
  RANK_KING: ["K", "king"],
  RANK_EIGHT: ["8", "8"],
  RANK_NINE: ["9", "9"],
  RANK_TEN: ["T", "10"],
  RANK_QUEEN: ["Q", "queen"],
  RANK_ACE: ["A", "ace"],
};

/** Suit enum name -> [notation, name in words, colour class]. */
const SUITS = {
  SUIT_SWORDS: ["Sw", "swords", "swords"],
  SUIT_COINS: ["Co", "coins", "coins"],
  SUIT_CUPS: ["Cu", "cups", "cups"],
  SUIT_HEARTS: ["He", "hearts", "red"],
  SUIT_DIAMONDS: ["Di", "diamonds", "red"],
  SUIT_SPADES: ["Sp", "spades", "black"],
};

function suitInfo(suit, pack) {
  if (suit === "SUIT_CLUBS") {
    return pack === "piquet" ? ["Cl", "clubs", "black"] : ["Cl", "clubs", "bastos"];
  }
  return SUITS[suit] || ["?", "?", "black"];
}

/** "7Co", "1Sw", "THe": the project's card notation. */
export function cardText(card) {
  const rank = RANKS[card.rank];
  return `${rank ? rank[0] : "?"}${suitInfo(card.suit, "spanish")[0]}`;
}

/** "the 7 of coins", "the ace of swords (the Espasa)" in `pack`. */
export function cardName(card, pack = "spanish") {
  const rank = RANKS[card.rank];
  const suit = suitInfo(card.suit, pack);
  let name = `the ${rank ? rank[1] : "?"} of ${suit[1]}`;
  if (pack === "spanish" && card.rank === "RANK_ONE") {
    if (card.suit === "SUIT_SWORDS") name += " (the Espasa)";
    if (card.suit === "SUIT_CLUBS") name += " (the Basto)";
  }
  return name;
}

/** Two cards are the same card. */
export function sameCard(a, b) {
  return Boolean(a && b && a.suit === b.suit && a.rank === b.rank);
}

function element(name, attributes = {}, children = []) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  for (const child of children) node.appendChild(child);
  return node;
}

/** The suit's symbol, drawn in a 20x20 box centred on 0,0. */
function symbol(suit, pack) {
  const kind = suit === "SUIT_CLUBS" ? (pack === "piquet" ? "club" : "baton") : suit;
  switch (kind) {
    case "SUIT_COINS":
      return element("g", { class: "suit-coins" }, [
        element("circle", { r: 9, class: "fill" }),
        element("circle", { r: 5.5, class: "line" }),
        element("circle", { r: 1.8, class: "line" }),
      ]);
    case "SUIT_CUPS":
      return element("g", { class: "suit-cups" }, [
        element("path", {
          class: "fill",
          d: "M-7,-9 L7,-9 Q7.5,0 1.6,2.5 L1.6,6 L5.5,8.5 L-5.5,8.5 L-1.6,6 L-1.6,2.5 Q-7.5,0 -7,-9 Z",
        }),
      ]);
    case "SUIT_SWORDS":
      return element("g", { class: "suit-swords" }, [
        element("path", { class: "fill", d: "M0,-11 L2,-7.5 L2,4 L-2,4 L-2,-7.5 Z" }),
        element("path", { class: "fill", d: "M-7,4 L7,4 L7,6.2 L-7,6.2 Z" }),
        element("path", { class: "fill", d: "M-1.2,6.2 L1.2,6.2 L1.2,10 L-1.2,10 Z" }),
      ]);
    case "baton":
      return element("g", { class: "suit-bastos" }, [
        element("path", { class: "fill", d: "M-2.4,10.5 L-4,-6 Q0,-12.5 4,-6 L2.4,10.5 Z" }),
        element("circle", { cx: -3.6, cy: -1, r: 1.4, class: "fill" }),
        element("circle", { cx: 3.4, cy: 3, r: 1.4, class: "fill" }),
      ]);
    case "SUIT_HEARTS":
      return element("path", {
        class: "fill suit-red",
        d: "M0,9 C-11,0 -9,-10 0,-4 C9,-10 11,0 0,9 Z",
      });
    case "SUIT_DIAMONDS":
      return element("path", { class: "fill suit-red", d: "M0,-10 L7.5,0 L0,10 L-7.5,0 Z" });
    case "SUIT_SPADES":
      return element("path", {
        class: "fill suit-black",
        d: "M0,-10 C-11,-1 -9,7 -1.2,3.5 L-3.5,10 L3.5,10 L1.2,3.5 C9,7 11,-1 0,-10 Z",
      });
    case "club":
      return element("g", { class: "suit-black" }, [
        element("circle", { cx: 0, cy: -4.8, r: 4.3, class: "fill" }),
        element("circle", { cx: -4.8, cy: 1.6, r: 4.3, class: "fill" }),
        element("circle", { cx: 4.8, cy: 1.6, r: 4.3, class: "fill" }),
        element("path", { class: "fill", d: "M-1.2,1 L1.2,1 L3.5,10 L-3.5,10 Z" }),
      ]);
    default:
      return element("text", { class: "rank", "text-anchor": "middle", y: 5 }, [
        document.createTextNode("?"),
      ]);
  }
}

function placed(node, x, y, scale) {
  node.setAttribute("transform", `translate(${x} ${y}) scale(${scale})`);
  return node;
}

/**
 * A card face as an <svg class="card ..."> element (60 x 90 user units; CSS
 * sets its size). `pack` from packOf(ruleSet).
 */
export function cardSvg(card, pack = "spanish") {
  const rank = RANKS[card.rank];
  const suit = suitInfo(card.suit, pack);
  const corner = rank ? rank[0] : "?";
  const svg = element("svg", {
    viewBox: "0 0 60 90",
    class: `card face suit-colour-${suit[2]}`,
    role: "img",
    "aria-label": cardName(card, pack),
    "data-card": cardText(card),
  });
  svg.appendChild(element("title", {}, [document.createTextNode(cardName(card, pack))]));
  svg.appendChild(element("rect", { x: 1, y: 1, width: 58, height: 88, rx: 6, class: "paper" }));
  const top = element("text", { x: 6, y: 16, class: "rank" }, [document.createTextNode(corner)]);
  const bottom = element("text", { x: 6, y: 16, class: "rank", transform: "rotate(180 30 45)" }, [
    document.createTextNode(corner),
  ]);
  svg.appendChild(top);
  svg.appendChild(bottom);
  svg.appendChild(placed(symbol(card.suit, pack), 10.5, 25, 0.45));
  svg.appendChild(placed(symbol(card.suit, pack), 30, 47, 1.5));
  return svg;
}

/** A card's back (a seat's hidden cards). */
export function cardBack() {
  return element("svg", { viewBox: "0 0 60 90", class: "card back", role: "img", "aria-label": "a card" }, [
    element("rect", { x: 1, y: 1, width: 58, height: 88, rx: 6, class: "back-paper" }),
    element("rect", { x: 7, y: 7, width: 46, height: 76, rx: 3, class: "back-frame" }),
    element("path", { d: "M30,20 L42,45 L30,70 L18,45 Z", class: "back-frame" }),
  ]);
}
