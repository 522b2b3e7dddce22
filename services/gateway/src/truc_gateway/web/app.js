// app.js: the screens of the web app and the little state they share. The
// URL's hash is the route, so any screen can be opened (or shared) directly:
//
//   #lobby                  choose a rule set and options, queue, live and past games
//   #ticket=tickets/T       follow a ticket (a party member confirms it here)
//   #play=games/G           play your seat (WebSocket session, else REST + SSE)
//   #watch=games/G          watch a public game as a spectator
//   #replay=games/G         step through a game
//   #guide                  the player's guide (How to play)
//
// The sign-in (a guest with a display name) is kept in sessionStorage: it
// lasts as long as the tab, and each tab may be another player.

import * as api from "./api.js";
import { h, fill } from "./dom.js";
import { render as renderMarkdown } from "./markdown.js";
import { drawTable, scoreLine, seatName, timerText } from "./table.js";
import { Narrator, explain, mancheWord, ruleSetName, teamLetter } from "./words.js";

const root = document.getElementById("app");
const who = document.getElementById("who");
const HAND_RESULT_MS = 6000;

// ------------------------------------------------------------------ state

const store = {
  get session() {
    try {
      const saved = JSON.parse(sessionStorage.getItem("truc.session") || "null");
      if (saved && saved.expireTime && Date.parse(saved.expireTime) < Date.now()) return null;
      return saved;
    } catch {
      return null;
    }
  },
  set session(value) {
    if (value) sessionStorage.setItem("truc.session", JSON.stringify(value));
    else sessionStorage.removeItem("truc.session");
    showWho();
  },
  /** The ticket's game token for a game (the lobby's, naming the caller). */
  gameToken(game) {
    return sessionStorage.getItem(`truc.game.${game}`);
  },
  setGameToken(game, token) {
    sessionStorage.setItem(`truc.game.${game}`, token);
  },
  grant(game) {
    const saved = sessionStorage.getItem(`truc.grant.${game}`);
    return saved ? JSON.parse(saved) : null;
  },
  setGrant(game, grant) {
    sessionStorage.setItem(`truc.grant.${game}`, JSON.stringify(grant));
  },
};

/** What the screen left running (streams, timers): stopped on the next route. */
let running = [];
function onLeave(stop) {
  running.push(stop);
}
function leave() {
  for (const stop of running.splice(0)) {
    try {
      stop();
    } catch {
      // a stream already closed
    }
  }
}

/** An error in words: the service's reason and message, never a blank screen. */
function errorBox(error, testid = "error") {
  const reason = error && error.reason ? error.reason : "ERROR";
  const message = error && error.message ? error.message : String(error);
  return h("div", { class: "error", role: "alert", dataset: { testid } }, h("strong", {}, reason), ": ", message);
}

function showWho() {
  const session = store.session;
  if (!session) {
    fill(who);
    return;
  }
  fill(
    who,
    h("span", { dataset: { testid: "whoami" }, title: session.player }, session.displayName),
    " ",
    h("button", { class: "link", type: "button", onclick: () => { store.session = null; location.hash = "#lobby"; route(); } }, "sign out"),
  );
}

// ------------------------------------------------------------------ routing

function parseHash() {
  const hash = decodeURIComponent(location.hash.replace(/^#/, ""));
  const [key, ...rest] = hash.split("=");
  return { key: key || "lobby", value: rest.join("=") };
}

function route() {
  leave();
  const { key, value } = parseHash();
  if (key === "guide" || key.startsWith("guide/")) {
    guideScreen(key.slice("guide/".length));
    return;
  }
  if (!store.session) {
    signInScreen();
    return;
  }
  if (key === "ticket" && value) ticketScreen(value);
  else if (key === "play" && value) playScreen(value);
  else if (key === "watch" && value) watchScreen(value);
  else if (key === "replay" && value) replayScreen(value);
  else lobbyScreen();
}

window.addEventListener("hashchange", route);

// ------------------------------------------------------------------ sign in

function signInScreen() {
  const input = h("input", {
    id: "display-name",
    name: "displayName",
    maxlength: 64,
    autocomplete: "nickname",
    required: true,
    dataset: { testid: "display-name" },
  });
  const problem = h("div", { class: "problem" });
  const form = h(
    "form",
    { class: "panel sign-in", dataset: { testid: "sign-in" } },
    h("h1", {}, "Truc at the table"),
    h("p", {}, "Sign in as a guest: your name is what the other players see at the table."),
    h("label", { for: "display-name" }, "Your name"),
    input,
    h("button", { type: "submit", dataset: { testid: "sign-in-button" } }, "Sign in"),
    problem,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    fill(problem);
    try {
      const signed = await api.signIn(input.value);
      store.session = {
        token: signed.token,
        player: signed.player,
        displayName: signed.displayName || input.value.trim(),
        expireTime: signed.expireTime,
      };
      route();
    } catch (error) {
      fill(problem, errorBox(error, "sign-in-error"));
    }
  });
  fill(root, form);
  input.focus();
}

// ------------------------------------------------------------------ the lobby

/** Each rule set's own options (RuleOptions in game.proto; 0 means its default). */
const OPTIONS = {
  RULE_SET_TRUC_Y_FLOU: ["targetScore", "manchesToWin", "playOutAllTricks", "periqueTrickRank", "aceValue", "responder", "cut"],
  RULE_SET_FRENCH_TRUC: ["targetScore", "manchesToWin", "playOutAllTricks", "trickOrder"],
  RULE_SET_SACKSON_TRUC: ["targetScore", "manchesToWin", "playOutAllTricks", "trickOrder"],
  RULE_SET_PARTNERSHIP_TRUC: ["targetScore", "manchesToWin", "playOutAllTricks", "trickOrder"],
  RULE_SET_CATALAN_TRUC: ["seats", "targetScore", "manchesToWin", "playOutAllTricks"],
};

const DEFAULT_TARGET = {
  RULE_SET_TRUC_Y_FLOU: 25,
  RULE_SET_FRENCH_TRUC: 12,
  RULE_SET_SACKSON_TRUC: 16,
  RULE_SET_PARTNERSHIP_TRUC: 12,
  RULE_SET_CATALAN_TRUC: 12,
};

const TEAM_SIZE = {
  RULE_SET_TRUC_Y_FLOU: 3,
  RULE_SET_FRENCH_TRUC: 1,
  RULE_SET_SACKSON_TRUC: 1,
  RULE_SET_PARTNERSHIP_TRUC: 2,
  RULE_SET_CATALAN_TRUC: 2,
};

function choice(id, label, values) {
  return [
    h("label", { for: id }, label),
    h("select", { id, dataset: { testid: id } }, ...values.map(([value, text]) => h("option", { value }, text))),
  ];
}

function optionField(name, ruleSet) {
  switch (name) {
    case "targetScore":
      return [
        h("label", { for: "opt-target-score" }, "Points to win"),
        h("input", {
          id: "opt-target-score",
          type: "number",
          min: 1,
          max: 250,
          placeholder: String(DEFAULT_TARGET[ruleSet] || ""),
          dataset: { testid: "opt-target-score" },
        }),
      ];
    case "manchesToWin":
      return [
        h("label", { for: "opt-manches-to-win" }, `${mancheWord(ruleSet).replace(/^./, (c) => c.toUpperCase())}s to win the match`),
        h("input", { id: "opt-manches-to-win", type: "number", min: 1, max: 9, placeholder: "2", dataset: { testid: "opt-manches-to-win" } }),
      ];
    case "playOutAllTricks":
      return [
        h("label", { class: "check" }, h("input", { id: "opt-play-out-all-tricks", type: "checkbox", dataset: { testid: "opt-play-out-all-tricks" } }), " play out all three tricks"),
      ];
    case "periqueTrickRank":
      return choice("opt-perique-trick-rank", "Périques in tricks", [
        ["PERIQUE_TRICK_RANK_UNSPECIFIED", "lowest (default)"],
        ["PERIQUE_TRICK_RANK_NATURAL", "natural"],
        ["PERIQUE_TRICK_RANK_TOP", "top"],
      ]);
    case "aceValue":
      return choice("opt-ace-value", "An ace in declarations counts", [
        ["0", "0 (default)"],
        ["1", "1"],
      ]);
    case "responder":
      return choice("opt-responder", "Who answers calls", [
        ["RESPONDER_UNSPECIFIED", "the captain (default)"],
        ["RESPONDER_CALLER", "the called seat"],
      ]);
    case "cut":
      return choice("opt-cut", "Cutting the pack", [
        ["CUT_MODE_UNSPECIFIED", "automatic (default)"],
        ["CUT_MODE_CUTTER", "the cutter cuts"],
      ]);
    case "trickOrder":
      return choice("opt-trick-order", "Trick order", [
        ["TRICK_ORDER_UNSPECIFIED", "7 8 A K Q J T 9 (default)"],
        ["TRICK_ORDER_SEVEN_ACE", "7 A K Q J T 9 8"],
      ]);
    case "seats":
      return choice("opt-seats", "Seats", [
        ["4", "four (two partnerships)"],
        ["2", "two (one against one)"],
      ]);
    default:
      return [];
  }
}

/** The RuleOptions JSON of the form: only what was set (zero is the default). */
function readOptions(form, ruleSet) {
  const options = { ruleSet };
  const value = (id) => form.querySelector(`#${id}`);
  for (const name of OPTIONS[ruleSet] || []) {
    if (name === "targetScore" || name === "manchesToWin") {
      const id = name === "targetScore" ? "opt-target-score" : "opt-manches-to-win";
      const text = value(id).value.trim();
      if (text) options[name] = Number(text);
    } else if (name === "playOutAllTricks") {
      if (value("opt-play-out-all-tricks").checked) options.playOutAllTricks = true;
    } else if (name === "aceValue") {
      const chosen = Number(value("opt-ace-value").value);
      if (chosen) options.aceValue = chosen;
    } else if (name === "seats") {
      options.seats = Number(value("opt-seats").value);
    } else {
      const id = `opt-${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      const chosen = value(id).value;
      if (!chosen.endsWith("_UNSPECIFIED")) options[name] = chosen;
    }
  }
  return options;
}

function seatsLine(table) {
  return (table || []).map((a) => a.displayName || (a.bot ? `Bot ${a.seat}` : a.player)).join(", ");
}

async function lobbyScreen() {
  const session = store.session;
  const ruleSelect = h("select", { id: "rule-set", dataset: { testid: "rule-set" } });
  const optionsBox = h("fieldset", { class: "options", dataset: { testid: "options" } });
  const party = h("input", { id: "party", placeholder: "player ids, separated by commas", dataset: { testid: "party" } });
  const problem = h("div", { class: "problem" });
  const form = h(
    "form",
    { class: "panel new-table", dataset: { testid: "new-table" } },
    h("h2", {}, "A new table"),
    h("label", { for: "rule-set" }, "Game"),
    ruleSelect,
    optionsBox,
    h("label", { class: "check" }, h("input", { id: "private", type: "checkbox", dataset: { testid: "private" } }), " private table (not listed, nobody can watch)"),
    h("label", { for: "party" }, "Play with friends (their player ids; empty: alone)"),
    party,
    h("p", { class: "hint" }, "Your player id, for a friend's party: ", h("code", { dataset: { testid: "my-player-id" } }, session.player)),
    h("button", { type: "submit", dataset: { testid: "queue" } }, "Find a table"),
    problem,
  );
  const drawOptions = () => {
    const ruleSet = ruleSelect.value;
    fill(optionsBox, h("legend", {}, `${ruleSetName(ruleSet)} options`), ...(OPTIONS[ruleSet] || []).flatMap((name) => optionField(name, ruleSet)));
    party.disabled = TEAM_SIZE[ruleSet] === 1;
    party.placeholder = TEAM_SIZE[ruleSet] === 1 ? "one against one: no party" : `up to ${TEAM_SIZE[ruleSet] - 1} player ids, separated by commas`;
  };
  ruleSelect.addEventListener("change", drawOptions);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    fill(problem);
    const ruleSet = ruleSelect.value;
    const members = party.disabled ? [] : party.value.split(/[\s,]+/).filter(Boolean);
    try {
      const created = await api.createTicket(session.token, {
        options: readOptions(form, ruleSet),
        party: members,
        isPrivate: form.querySelector("#private").checked,
      });
      location.hash = `#ticket=${created.ticket.name}`;
    } catch (error) {
      fill(problem, errorBox(error, "queue-error"));
    }
  });

  const live = h("ul", { class: "games", dataset: { testid: "live-games" } });
  const liveMore = h("button", { type: "button", class: "secondary", dataset: { testid: "live-more" }, hidden: true }, "More");
  const liveProblem = h("div", { class: "problem" });
  let liveToken = "";
  const loadLive = async (reset) => {
    if (reset) {
      liveToken = "";
      fill(live);
    }
    fill(liveProblem);
    try {
      const page = await api.listLiveGames(session.token, liveToken);
      for (const game of page.games || []) {
        live.appendChild(
          h(
            "li",
            { dataset: { testid: "live-game", game: game.name } },
            h("span", { class: "game-title" }, ruleSetName(game.ruleSet)),
            " ",
            h("span", { class: "game-seats" }, seatsLine(game.table)),
            " ",
            h("button", { type: "button", dataset: { testid: "watch" }, onclick: () => { location.hash = `#watch=${game.name}`; } }, "Watch"),
          ),
        );
      }
      if (!live.children.length) live.appendChild(h("li", { class: "empty" }, "No public game is being played right now."));
      liveToken = page.nextPageToken || "";
      liveMore.hidden = !liveToken;
    } catch (error) {
      fill(liveProblem, errorBox(error, "live-error"));
    }
  };
  liveMore.addEventListener("click", () => loadLive(false));

  const mine = h("ul", { class: "games", dataset: { testid: "my-games" } });
  const mineMore = h("button", { type: "button", class: "secondary", hidden: true, dataset: { testid: "my-more" } }, "More");
  const mineProblem = h("div", { class: "problem" });
  let mineToken = "";
  const loadMine = async () => {
    fill(mineProblem);
    try {
      const page = await api.listGames(session.token, mineToken);
      for (const game of page.games || []) {
        const result = game.winner === "TEAM_UNSPECIFIED" ? "no winner" : game.winner === game.team ? "won" : "lost";
        mine.appendChild(
          h(
            "li",
            { dataset: { testid: "my-game", game: game.name } },
            h("span", { class: "game-title" }, `${ruleSetName(game.ruleSet)}: ${result}`),
            " ",
            h("span", { class: "game-seats" }, seatsLine(game.table)),
            " ",
            h("button", { type: "button", dataset: { testid: "replay" }, onclick: () => { location.hash = `#replay=${game.name}`; } }, "Replay"),
          ),
        );
      }
      if (!mine.children.length) mine.appendChild(h("li", { class: "empty" }, "No finished game yet."));
      mineToken = page.nextPageToken || "";
      mineMore.hidden = !mineToken;
    } catch (error) {
      fill(mineProblem, errorBox(error, "my-games-error"));
    }
  };
  mineMore.addEventListener("click", loadMine);

  fill(
    root,
    form,
    h(
      "section",
      { class: "panel" },
      h("h2", {}, "Live games ", h("button", { type: "button", class: "secondary", dataset: { testid: "live-refresh" }, onclick: () => loadLive(true) }, "Refresh")),
      live,
      liveMore,
      liveProblem,
    ),
    h("section", { class: "panel" }, h("h2", {}, "My finished games"), mine, mineMore, mineProblem),
  );
  for (const name of await api.ruleSets()) ruleSelect.appendChild(h("option", { value: name }, ruleSetName(name)));
  drawOptions();
  loadLive(true);
  loadMine();
}

// ------------------------------------------------------------------ a ticket

const TICKET_STATES = {
  TICKET_STATE_AWAITING_CONFIRMATION: "waiting for the party to confirm",
  TICKET_STATE_QUEUED: "looking for players",
  TICKET_STATE_MATCHED: "seated: the game starts",
  TICKET_STATE_CANCELLED: "cancelled",
  TICKET_STATE_EXPIRED: "expired",
};

function ticketScreen(name) {
  const session = store.session;
  const box = h("section", { class: "panel ticket", dataset: { testid: "ticket" } });
  const problem = h("div", { class: "problem" });
  fill(root, box, problem);
  let ticket = null;
  let stopWatch = null;

  const countdown = h("span", { dataset: { testid: "bots-countdown" } });
  const tick = () => {
    if (!ticket || ticket.state !== "TICKET_STATE_QUEUED" || !ticket.botsTime) {
      countdown.textContent = "";
      return;
    }
    const left = Math.max(0, Math.ceil((Date.parse(ticket.botsTime) - Date.now()) / 1000));
    countdown.textContent = left > 0 ? `bots fill the empty seats in ${left} s` : "bots are taking the empty seats";
  };
  const timer = setInterval(tick, 250);
  onLeave(() => clearInterval(timer));

  const draw = () => {
    const me = (ticket.members || []).find((m) => m.player === session.player);
    const link = `${location.origin}${location.pathname}#ticket=${ticket.name}`;
    const live = ticket.state === "TICKET_STATE_AWAITING_CONFIRMATION" || ticket.state === "TICKET_STATE_QUEUED";
    fill(
      box,
      h("h2", {}, `${ruleSetName(ticket.ruleSet)} · ${ticket.seatCount || ""} seats${ticket.private ? " · private" : ""}`),
      h("p", { dataset: { testid: "ticket-state", state: ticket.state } }, TICKET_STATES[ticket.state] || ticket.state),
      h(
        "ul",
        { class: "members" },
        ...(ticket.members || []).map((m) =>
          h(
            "li",
            { dataset: { testid: "ticket-member", confirmed: m.confirmed ? "yes" : "no" } },
            m.confirmed ? "✓ " : "… ",
            m.displayName || m.player,
            m.player === ticket.leader ? " (leader)" : "",
            m.confirmed ? "" : " — not confirmed yet",
          ),
        ),
      ),
      ticket.state === "TICKET_STATE_QUEUED"
        ? h("p", {}, h("span", { dataset: { testid: "players-waiting" } }, `${ticket.playersWaiting || 0} waiting for this table`), " · ", countdown)
        : null,
      ticket.state === "TICKET_STATE_AWAITING_CONFIRMATION"
        ? h("p", { class: "hint" }, "Send this link to the other members: ", h("code", { dataset: { testid: "ticket-link" } }, link))
        : null,
      me && !me.confirmed && ticket.state === "TICKET_STATE_AWAITING_CONFIRMATION"
        ? h("button", { type: "button", dataset: { testid: "confirm" }, onclick: confirm }, "Confirm: I join this party")
        : null,
      live ? h("button", { type: "button", class: "secondary", dataset: { testid: "cancel" }, onclick: cancel }, "Cancel") : null,
      live ? null : h("a", { href: "#lobby" }, "Back to the lobby"),
    );
    tick();
    if (ticket.state === "TICKET_STATE_MATCHED" && ticket.game) {
      if (ticket.gameToken) store.setGameToken(ticket.game, ticket.gameToken);
      location.hash = `#play=${ticket.game}`;
    }
  };
  const update = (next) => {
    ticket = next;
    draw();
  };
  async function confirm() {
    fill(problem);
    try {
      update((await api.confirmTicket(session.token, name)).ticket);
      watch();
    } catch (error) {
      fill(problem, errorBox(error));
    }
  }
  async function cancel() {
    fill(problem);
    try {
      update((await api.cancelTicket(session.token, name)).ticket);
    } catch (error) {
      fill(problem, errorBox(error));
    }
  }
  const watch = () => {
    if (stopWatch) stopWatch();
    stopWatch = api.watchTicket(session.token, name, {
      onData: (message) => {
        if (message.ticket) update(message.ticket);
      },
      onEnd: () => {},
      onError: (error) => fill(problem, errorBox(error)),
    });
    onLeave(() => stopWatch && stopWatch());
  };
  (async () => {
    try {
      update((await api.getTicket(session.token, name)).ticket);
      watch();
    } catch (error) {
      fill(box, h("h2", {}, "Ticket"), errorBox(error), h("a", { href: "#lobby" }, "Back to the lobby"));
    }
  })();
}

// ------------------------------------------------------------------ the table

/**
 * What the table screens share: the view, the log, the hand result and the
 * final result. `apply(message)` takes a WatchGameResponse or PlayResponse.
 */
class GameScreen {
  constructor(game, { spectator = false } = {}) {
    this.game = game;
    this.spectator = spectator;
    this.view = null;
    this.version = 0;
    this.narrator = null;
    this.lastManche = null;
    this.tableArea = h("div", { class: "table-area", dataset: { testid: "table-area" } }, h("p", {}, "Opening the table…"));
    this.handResult = h("div", { class: "result hand-result", hidden: true, dataset: { testid: "hand-result" } });
    this.finalResult = h("div", { class: "result final-result", hidden: true, dataset: { testid: "final-result" } });
    this.moves = h("div", { class: "moves", dataset: { testid: "moves" } });
    this.messages = h("div", { class: "messages", dataset: { testid: "messages" } });
    this.signals = h("ul", { class: "signals", dataset: { testid: "signals" } });
    this.log = h("ol", { class: "log", dataset: { testid: "log" } });
    this.problem = h("div", { class: "problem", dataset: { testid: "game-problem" } });
    this.status = h("div", { class: "status", dataset: { testid: "connection" } });
    this.resultTimer = null;
    const timer = setInterval(() => this.tick(), 250);
    onLeave(() => clearInterval(timer));
    onLeave(() => clearTimeout(this.resultTimer));
  }

  layout(title) {
    const side = [
      h("section", { class: "panel" }, h("h3", {}, "Your moves"), this.moves),
      h("section", { class: "panel" }, h("h3", {}, "Team messages"), this.messages, this.signals),
    ];
    fill(
      root,
      h("div", { class: "game-head" }, h("h2", {}, title), this.status),
      this.problem,
      this.handResult,
      this.finalResult,
      h(
        "div",
        { class: "game-grid" },
        this.tableArea,
        h("div", { class: "game-side" }, ...(this.spectator ? [] : side), h("section", { class: "panel" }, h("h3", {}, "Game log"), this.log)),
      ),
    );
  }

  nameOf(seat) {
    return this.view ? seatName(this.view, seat) : `Seat ${seat}`;
  }

  /** One message of the stream: new events and the view after them. */
  apply(message) {
    const version = Number(message.version || 0);
    if (version && version <= this.version) return;
    if (version) this.version = version;
    if (message.game && message.game.seats) this.view = message.game;
    if (!this.view) return;
    if (!this.narrator) this.narrator = new Narrator(this.view.ruleSet, (seat) => this.nameOf(seat));
    for (const event of message.events || []) this.narrate(event);
    this.draw();
  }

  narrate(event) {
    for (const line of this.narrator.lines(event)) {
      this.log.appendChild(h("li", { dataset: { testid: "log-line" } }, line));
    }
    this.log.scrollTop = this.log.scrollHeight;
    if (event.mancheEnded) this.lastManche = event.mancheEnded;
    if (event.handEnded) this.showHandResult(event.handEnded);
  }

  showHandResult(ended) {
    const line = this.narrator.handEnded(ended);
    fill(
      this.handResult,
      h("strong", {}, line),
      h("div", { dataset: { testid: "hand-result-scores" } }, this.view ? scoreLine(this.view) : ""),
      h("button", { type: "button", dataset: { testid: "next-hand" }, onclick: () => this.hideHandResult() }, "Next hand"),
    );
    this.handResult.hidden = false;
    clearTimeout(this.resultTimer);
    this.resultTimer = setTimeout(() => this.hideHandResult(), HAND_RESULT_MS);
  }

  hideHandResult() {
    this.handResult.hidden = true;
  }

  /** The match's final scores: the last manche's (team A first). */
  finalScores() {
    const view = this.view;
    const history = view.history || [];
    const last = this.lastManche ? this.lastManche.scores : history.length ? history[history.length - 1].scores : view.scores;
    return { scores: last || {}, manches: view.manches || {} };
  }

  draw() {
    const view = this.view;
    drawTable(this.tableArea, view);
    this.tick();
    if (view.finished) {
      const { scores, manches } = this.finalScores();
      const winner = teamLetter(view.winner);
      fill(
        this.finalResult,
        h("strong", {}, winner ? `Team ${winner} wins the match` : "The match is over"),
        h(
          "div",
          { dataset: { testid: "final-scores" } },
          `Final score: Team A ${scores.teamA || 0} – Team B ${scores.teamB || 0} · ${mancheWord(view.ruleSet)}s ${manches.teamA || 0}–${manches.teamB || 0}`,
        ),
        h("a", { href: "#lobby" }, "Back to the lobby"),
      );
      this.finalResult.hidden = false;
    }
    if (!this.spectator) this.drawActions();
  }

  tick() {
    const timer = this.tableArea.querySelector("[data-testid=turn-timer]");
    if (timer && this.view) timer.textContent = timerText(this.view);
  }

  /** Buttons for GameView.legalMoves, and the team messages in their own panel. */
  drawActions() {
    const view = this.view;
    const isMessage = (a) => a.signal !== undefined || a.directive !== undefined;
    // Before legal_moves existed only legal_actions did: keep the moves of it.
    // (a service without the split sends them empty: fall back to legalActions).
    const split = (view.legalMoves || []).length || (view.legalMessages || []).length;
    const moves = split ? view.legalMoves || [] : (view.legalActions || []).filter((a) => !isMessage(a));
    const messages = split ? view.legalMessages || [] : (view.legalActions || []).filter(isMessage);
    const mine = view.toAct === view.seat ? moves : [];
    const button = (action, testid) => {
      const { label, help } = explain(action, view, (seat) => this.nameOf(seat));
      return h(
        "button",
        {
          type: "button",
          class: `action ${action.playCard ? "play" : "call"}`,
          dataset: { testid, kind: Object.keys(action)[0] },
          title: help,
          onclick: (event) => this.act(action, event.currentTarget),
        },
        h("span", { class: "action-label" }, label),
        h("span", { class: "action-help", dataset: { testid: "action-help" } }, help),
      );
    };
    fill(
      this.moves,
      view.finished ? h("p", {}, "The match is over.") : mine.length ? null : h("p", { class: "hint" }, view.toAct === undefined ? "Nobody is to act." : `Waiting for ${this.nameOf(view.toAct)}…`),
      ...mine.map((action) => button(action, "move")),
    );
    fill(this.messages, ...messages.map((action) => button(action, "message")));
    fill(
      this.signals,
      ...(view.signals || []).map((m) =>
        h("li", { dataset: { testid: "team-message" } }, `${this.nameOf(m.seat)}: `, m.signal ? `signal — ${explain({ signal: m.signal }, view).label.replace(/^Signal: /, "")}` : `directive — ${explain({ directive: m.directive }, view).label.replace(/^Directive: /, "")}`),
      ),
    );
  }

  /** Sends an action (the screens below say how). */
  act() {}

  disableActions() {
    for (const node of [...this.moves.querySelectorAll("button"), ...this.messages.querySelectorAll("button")]) node.disabled = true;
  }

  refused(error) {
    fill(this.problem, errorBox(error, "action-error"));
    if (this.view) this.drawActions();
  }
}

function playScreen(game) {
  const session = store.session;
  const token = store.gameToken(game) || session.token;
  const screen = new GameScreen(game);
  screen.layout("Your table");
  let playSession = null;
  let mode = "socket";
  let stopWatch = null;
  let socketTries = 0;

  const setStatus = (text) => fill(screen.status, text);
  const startSocket = () => {
    socketTries += 1;
    playSession = new api.PlaySession(game, token, {
      onResponse: (response) => {
        setStatus("live (WebSocket session)");
        fill(screen.problem);
        screen.apply(response);
      },
      onRefused: (error) => screen.refused(error),
      onEnd: () => setStatus("the match is over"),
      onFail: (error, opened, code) => {
        // The service refused the session itself: falling back would not help.
        if ([4400, 4401, 4403, 4404].includes(code)) {
          fill(screen.problem, errorBox(error));
          setStatus("closed");
          return;
        }
        if (opened && socketTries < 3) {
          setTimeout(() => startSocket(), 300);
          return;
        }
        startFallback(error);
      },
    });
    playSession.start(String(screen.version));
  };
  const startFallback = (why) => {
    mode = "rest";
    setStatus(`live (REST + SSE: the WebSocket failed, ${why.reason})`);
    stopWatch = api.watchGame(
      game,
      async () => (await api.streamToken(session.token)).token,
      {
        onData: (message) => screen.apply(message),
        onEnd: () => setStatus("the match is over"),
        onError: (error) => fill(screen.problem, errorBox(error)),
      },
      () => String(screen.version),
    );
  };
  onLeave(() => {
    if (playSession) playSession.close();
    if (stopWatch) stopWatch();
  });

  screen.act = async (action) => {
    fill(screen.problem);
    screen.disableActions();
    const etag = screen.view ? screen.view.etag : "";
    try {
      if (mode === "socket" && playSession && playSession.ready) {
        playSession.send(action, etag);
      } else {
        // The SSE stream brings the new version (and its events) to everyone.
        await api.submitAction(token, game, { action, etag, requestId: crypto.randomUUID() });
      }
    } catch (error) {
      screen.refused(error);
    }
  };
  startSocket();
}

async function spectatorToken(game) {
  const saved = store.grant(game);
  if (saved && Date.parse(saved.expireTime) > Date.now() + 60_000) return saved.token;
  const grant = await api.spectate(store.session.token, game);
  store.setGrant(game, { token: grant.token, expireTime: grant.expireTime });
  return grant.token;
}

function watchScreen(game) {
  const screen = new GameScreen(game, { spectator: true });
  screen.layout("Watching");
  fill(screen.status, h("span", { dataset: { testid: "spectating" } }, "spectator: you see what everyone sees, no hand"));
  const stop = api.watchGame(
    game,
    () => spectatorToken(game),
    {
      onData: (message) => screen.apply(message),
      onEnd: () => fill(screen.status, h("span", { dataset: { testid: "spectating" } }, "spectator: the match is over")),
      onError: (error) => fill(screen.problem, errorBox(error)),
    },
    () => String(screen.version),
  );
  onLeave(stop);
}

// ------------------------------------------------------------------ replays

function replayScreen(game) {
  const session = store.session;
  const box = h("div", { class: "replay-controls panel", dataset: { testid: "replay" } });
  const screen = new GameScreen(game, { spectator: true });
  screen.layout("Replay");
  root.insertBefore(box, root.children[1]);
  const asSpectator = h("input", { type: "checkbox", id: "as-spectator", dataset: { testid: "as-spectator" } });
  let steps = [];
  let lines = [];
  let at = 0;
  let playing = null;

  const slider = h("input", { type: "range", min: 0, max: 0, value: 0, dataset: { testid: "step-slider" } });
  const label = h("span", { dataset: { testid: "step-label" } });
  const playButton = h("button", { type: "button", dataset: { testid: "play-pause" } }, "Play");
  const show = (index) => {
    at = Math.max(0, Math.min(steps.length - 1, index));
    slider.value = String(at);
    const step = steps[at];
    label.textContent = `step ${at + 1} / ${steps.length} (version ${step.version})`;
    screen.view = step.game;
    screen.lastManche = null;
    fill(screen.log);
    for (let i = 0; i <= at; i += 1) {
      for (const line of lines[i]) screen.log.appendChild(h("li", { dataset: { testid: "log-line" } }, line));
      for (const event of steps[i].events || []) if (event.mancheEnded) screen.lastManche = event.mancheEnded;
    }
    screen.log.scrollTop = screen.log.scrollHeight;
    screen.finalResult.hidden = true;
    screen.draw();
  };
  const stopPlaying = () => {
    clearInterval(playing);
    playing = null;
    playButton.textContent = "Play";
  };
  playButton.addEventListener("click", () => {
    if (playing) {
      stopPlaying();
      return;
    }
    playButton.textContent = "Pause";
    playing = setInterval(() => {
      if (at >= steps.length - 1) stopPlaying();
      else show(at + 1);
    }, 700);
  });
  onLeave(stopPlaying);
  slider.addEventListener("input", () => show(Number(slider.value)));
  const controls = [
    h("button", { type: "button", dataset: { testid: "step-first" }, onclick: () => show(0) }, "First"),
    h("button", { type: "button", dataset: { testid: "step-back" }, onclick: () => show(at - 1) }, "◀ Back"),
    playButton,
    h("button", { type: "button", dataset: { testid: "step-forward" }, onclick: () => show(at + 1) }, "Forward ▶"),
    h("button", { type: "button", dataset: { testid: "step-last" }, onclick: () => show(steps.length - 1) }, "Last"),
  ];

  const load = async () => {
    fill(box, h("p", {}, "Loading the replay…"));
    stopPlaying();
    const wanted = asSpectator.checked;
    let result;
    try {
      // The player's own token first (their seat's view), else a spectator grant.
      const token = store.gameToken(game) || session.token;
      try {
        result = await api.replay(token, game, { asSpectator: wanted });
      } catch (error) {
        if (error.status !== 403) throw error;
        result = await api.replay(await spectatorToken(game), game, {});
      }
    } catch (error) {
      fill(box, errorBox(error, "replay-error"), h("a", { href: "#lobby" }, "Back to the lobby"));
      return;
    }
    steps = result.steps.filter((step) => step.game && step.game.seats);
    if (!steps.length) {
      fill(box, h("p", {}, "Nothing to replay yet."));
      return;
    }
    const last = steps[steps.length - 1].game;
    const narrator = new Narrator(last.ruleSet, (seat) => seatName(last, seat));
    lines = steps.map((step) => (step.events || []).flatMap((event) => narrator.lines(event)));
    slider.max = String(steps.length - 1);
    fill(
      box,
      h("div", { class: "controls" }, ...controls),
      slider,
      h("div", { class: "controls" }, label, " ", h("label", { class: "check" }, asSpectator, " as a spectator saw it")),
    );
    show(0);
  };
  asSpectator.addEventListener("change", load);
  load();
}

// ------------------------------------------------------------------ the guide

async function guideScreen(anchor) {
  const article = h("article", { class: "panel guide", dataset: { testid: "guide" } }, h("p", {}, "Loading the guide…"));
  fill(root, article);
  try {
    fill(article, renderMarkdown(await api.guide()));
    if (anchor) {
      const target = document.getElementById(anchor);
      if (target) target.scrollIntoView();
    }
  } catch (error) {
    fill(article, errorBox(error, "guide-error"));
  }
}

showWho();
route();
