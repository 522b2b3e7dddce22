// GameService.Play: one seat played over one session (a bidirectional stream)
// for the whole match (play.js's default transport; seat.js is the unary one).
//
// The client opens the session with the last version it received (0 at
// first), then reads one message per new version of the game (the seat's view
// and the version's events; several versions coalesced into one message when
// the session fell behind: from_version < version) and sends its actions on
// the same stream, each with a fresh request id. The answer to an action is
// the version it made (carrying its request id), a refusal (the stream stays
// open) or, for an action sent again, `repeated`. Versions must arrive one
// after the other, none missed and none twice, or the client stops. A stream
// that breaks (UNAVAILABLE, a deadline) is reopened, on the next replica of the
// list, after the last version received, and the action still unanswered is
// sent again with the same request id: the service applies it at most once.
// Versions read back from the game's log (a resumed session) carry no request
// id: when versions past the one an action was sent on arrive without its
// answer, the client asks again with the same request id. An action left
// unanswered when the match ends (the stream ends with its last version) is
// settled with one SubmitAction carrying its request id.

import { randomUUID } from 'node:crypto';

import { describe, isTransient, statusName } from './errors.js';
import { chooseAction } from './policy.js';
import { bearer, grpc, sleep, unary } from './protocol.js';
import { actionText, Narrator, ruleSetName } from './words.js';

export class ProtocolError extends Error {}

/** The stream this client cut on purpose (--drop-answers): resumed like a broken one. */
class Dropped extends Error {}

/** Refusals after which the game has moved on or will: wait for a newer version. */
const RACES = new Set([grpc.status.ABORTED, grpc.status.FAILED_PRECONDITION]);

/** How long to wait before choosing again on the same version after the k-th race refusal. */
const raceBackoffMs = (k) => Math.min(1000, 50 * 2 ** k);

/** Consecutive refusals on one version after which the client gives up. */
const MAX_REFUSALS = 12;

/** Whether this view ends the session: the match is over, or (tests) no deal is left. */
function isOver(view) {
  return view.finished || view.phase === 'PHASE_NO_DEAL';
}

/**
 * A session's messages as a queue the game loop awaits, with a timeout: what
 * grpc-js emits ('data', 'end', 'error') becomes {message} | {end} | {error}.
 */
class Inbox {
  constructor(call) {
    this.items = [];
    this.waiter = null;
    this.closed = false; // the stream has ended (its last items may wait here still)
    const push = (item) => {
      if (!item.message) this.closed = true;
      this.items.push(item);
      if (this.waiter) this.waiter();
    };
    call.on('data', (message) => push({ message }));
    call.on('end', () => push({ end: true }));
    call.on('error', (error) => push({ error }));
  }

  /** The next item, or null after `ms` (Infinity: no timeout) with none. */
  async next(ms) {
    if (this.items.length === 0 && ms > 0) {
      await new Promise((resolve) => {
        const timer = Number.isFinite(ms) ? setTimeout(resolve, ms) : null;
        this.waiter = () => {
          if (timer) clearTimeout(timer);
          resolve();
        };
      });
      this.waiter = null;
    }
    return this.items.shift() ?? null;
  }
}

export class SessionPlayer {
  /**
   * @param games GameService clients, one per replica address; the session
   *   moves to the next one when its stream breaks
   * @param name "games/{game}"
   * @param token the game token of the ticket
   * @param options {log, thinkMs (a pause before each action), staleFirst (send
   *   the first action with an outdated etag: refused STALE_ETAG), streamSeconds
   *   (a deadline on each Play stream, after which the client resumes; 0: none),
   *   dropAnswers (N > 0: cut the stream when the answer to every N-th action
   *   arrives, before reading it, then resume and resend that action), trace (log
   *   every message: its versions, events and request id)}
   */
  constructor(
    games,
    name,
    token,
    {
      log = console.log,
      thinkMs = 0,
      staleFirst = false,
      streamSeconds = 0,
      dropAnswers = 0,
      trace = false,
    } = {},
  ) {
    if (games.length === 0) throw new Error('no GameService address');
    this.games = games;
    this.replica = 0; // which of `games` the session is on
    this.name = name;
    this.token = token;
    this.log = log;
    this.thinkMs = thinkMs;
    this.staleFirst = staleFirst;
    this.streamSeconds = streamSeconds;
    this.dropAnswers = dropAnswers;
    this.trace = trace;
    this.seat = undefined;
    this.ruleSet = undefined;
    this.narrator = null;
    this.seen = 0; // the last version received
    this.view = null; // the seat's view at `seen`
    this.final = null;
    this.pending = null; // the action sent and not answered: {request, version, text, number, ...}
    this.stream = null; // the open stream: {call, inbox}
    this.sent = 0; // actions sent (not counting resends)
    this.waitFor = 0; // act only once `seen` reaches this (the version a repeat named)
    this.notBefore = 0; // no action before this time (thinking, a back-off, a rate limit)
    this.thoughtAt = -1; // the version the pause before acting was taken for
    this.refusalsHere = 0; // consecutive refusals on the version `seen`
    // What the summary reports.
    this.actions = 0; // actions applied (answered by their version, or `repeated`)
    this.messages = 0; // version messages received
    this.coalesced = 0; // of which covered several versions
    this.versions = 0; // versions received (each exactly once)
    this.resumes = 0; // sessions reopened after the first
    this.resent = 0; // actions sent again after a reopening
    this.repeats = 0; // `repeated` answers
    this.refusals = 0; // refused actions
    this.settled = 0; // actions asked about with SubmitAction after the match ended
  }

  /** Plays until the match is over; returns the final view. */
  async run() {
    let failures = 0;
    while (this.final === null) {
      const before = this.seen;
      try {
        await this.session();
        if (this.final !== null) break;
        // The stream ended OK before the match's last version: the game may be
        // over already (a session opened after its last version ends at once).
        const now = await this.getGame();
        if (isOver(now) && Number(now.etag) <= this.seen) {
          this.final = now;
          break;
        }
        failures = this.seen > before ? 0 : failures + 1;
        if (failures > 30) throw new ProtocolError('the session keeps ending with nothing new');
        this.log(`session ended before the match did: reopening after version ${this.seen}`);
        await sleep(Math.min(1000, 50 * failures));
      } catch (error) {
        if (!(error instanceof Dropped) && !isTransient(error)) throw error;
        failures = this.seen > before ? 0 : failures + 1;
        if (failures > 30) throw error;
        const why = error instanceof Dropped ? error.message : statusName(error.code);
        if (!(error instanceof Dropped) && error.code === grpc.status.UNAVAILABLE) {
          // A replica that stops or dies: any other one serves the session.
          this.replica = (this.replica + 1) % this.games.length;
        }
        this.log(
          `session dropped (${why}): reopening after version ${this.seen}` +
            (this.games.length > 1 ? ` on replica ${this.replica}` : ''),
        );
        // A deadline or a deliberate cut resumes at once; a failing stream backs off.
        if (failures > 1) await sleep(Math.min(1000, 50 * failures));
      }
      this.resumes += 1;
    }
    if (this.pending !== null) await this.settle();
    return this.final;
  }

  /** One Play stream: open it, resend what is unanswered, play until it ends. */
  async session() {
    const seconds = this.streamSeconds;
    const options = seconds > 0 ? { deadline: Date.now() + seconds * 1000 } : {};
    const call = this.games[this.replica].Play(bearer(this.token), options);
    const inbox = new Inbox(call);
    this.stream = { call, inbox };
    try {
      const view = 'RESPONSE_VIEW_FULL';
      call.write({ open: { name: this.name, after_version: this.seen, response_view: view } });
      // Unanswered when the last stream broke: the same request id, so the
      // service applies it at most once (a retry of an applied one is `repeated`).
      if (this.pending !== null) this.resend('unanswered when the stream broke');
      for (;;) {
        const item = await inbox.next(inbox.closed ? 0 : this.act());
        if (item === null) continue; // time to act
        if (item.error) throw item.error;
        if (item.end) return;
        if (this.cuts(item.message)) {
          this.pending.cut = true;
          const { number } = this.pending;
          throw new Dropped(`cut on the answer to action ${number}, before reading it`);
        }
        this.receive(item.message);
        if (this.final !== null) return;
      }
    } finally {
      this.stream = null;
      call.cancel();
    }
  }

  /** Whether to cut the stream on this message (--drop-answers): the first answer
   * to every N-th action. */
  cuts(message) {
    const every = this.dropAnswers;
    if (every <= 0 || !this.isAnswer(message) || this.pending.cut) return false;
    return this.pending.number % every === 0;
  }

  /** Writes a request on the open stream (not once it has ended). */
  send(request) {
    if (this.stream !== null && !this.stream.inbox.closed) this.stream.call.write(request);
  }

  isAnswer(message) {
    return this.pending !== null && message.request_id === this.pending.request.request_id;
  }

  /** Handles one message of the session. */
  receive(message) {
    if (message.refused) return this.refused(message);
    if (message.repeated) return this.repeated(message);
    if (!message.game) {
      throw new ProtocolError(`a message without a view at version ${message.version}`);
    }
    const { version, from_version: from, events } = message;
    if (from !== this.seen + 1 || version < from) {
      throw new ProtocolError(`versions ${from}-${version} after ${this.seen}: a gap or a repeat`);
    }
    let last = from;
    for (const event of events) {
      if (event.version < last || event.version > version) {
        throw new ProtocolError(`event of version ${event.version} in versions ${from}-${version}`);
      }
      last = event.version;
    }
    this.messages += 1;
    this.versions += version - from + 1;
    if (from < version) this.coalesced += 1;
    if (this.trace) {
      const mine = message.request_id ? ` (mine: ${message.request_id})` : '';
      const listed = events.map((e) => `${e.kind}@${e.version}`).join(' ');
      this.log(`versions ${from}-${version}${mine}: ${listed}`);
    }
    if (this.narrator === null) this.seated(message.game, version);
    for (const event of events) this.say(event);
    this.seen = version;
    this.view = message.game;
    this.refusalsHere = 0;
    if (this.isAnswer(message)) {
      this.applied();
    } else if (this.pending !== null && version > this.pending.version && !isOver(message.game)) {
      // The game moved past the version the action was sent on, and this is not
      // its answer: the action made one of these versions (those read from the
      // game's log, as on a resumed session, carry no request id) or it will be
      // refused. Asking again with the same request id tells: `repeated` or a
      // refusal, never a second application (the etag is past, too).
      if (!this.pending.asked) this.resend(`versions ${from}-${version} did not answer it`);
    }
    if (isOver(message.game)) this.final = message.game;
  }

  /** Sends the unanswered action again on this stream, with its request id. */
  resend(why) {
    this.resent += 1;
    this.pending.asked = true;
    const { text, request } = this.pending;
    this.log(`resending ${text} (${why}; request ${request.request_id})`);
    this.send({ action: request });
  }

  /**
   * The match ended with an action unanswered (its answer was to come after the
   * last version, which ends the session): SubmitAction with the same request id
   * says whether it was applied (the original version's view) or not (refused:
   * the match is over, the etag past); it cannot apply anything now.
   */
  async settle() {
    const { request, text } = this.pending;
    const submit = { name: this.name, ...request, response_view: 'RESPONSE_VIEW_MINIMAL' };
    this.settled += 1;
    try {
      const reply = await unary(this.games[this.replica], 'SubmitAction', submit, {
        token: this.token,
      });
      this.log(`${text}: applied, at version ${reply.game.etag} (asked with its request id)`);
      this.applied();
    } catch (error) {
      this.log(`${text}: not applied (asked with its request id: ${describe(error)})`);
      this.pending = null;
    }
  }

  /** The first view: the seat, the rule set, a line about the table. */
  seated(view, version) {
    if (view.seat === undefined || view.seat === null) {
      throw new ProtocolError('the session gave no seat: not seated?');
    }
    this.seat = view.seat;
    this.ruleSet = ruleSetName(view.rule_set);
    this.narrator = new Narrator(this.seat, this.ruleSet);
    const phase = view.phase.replace('PHASE_', '').toLowerCase();
    const table = `${this.ruleSet}, ${view.seat_count} seats`;
    const where = `phase ${phase}, version ${version}`;
    this.log(`${this.name}: I hold seat ${this.seat} (${table}); ${where}`);
  }

  applied() {
    this.pending = null;
    this.actions += 1;
  }

  repeated(message) {
    if (!this.isAnswer(message)) return; // an answer to an action answered already
    this.repeats += 1;
    this.log(`${this.pending.text}: repeated (applied before, version ${message.version})`);
    this.applied();
    // The session has delivered, or will deliver, the version it produced.
    this.waitFor = Math.max(this.waitFor, message.version);
  }

  refused(message) {
    if (!this.isAnswer(message)) return;
    const { code, reason, metadata } = message.refused;
    const { text, version } = this.pending;
    this.pending = null;
    this.refusals += 1;
    const why = `${statusName(code)} ${reason || '?'}`;
    if (code === grpc.status.RESOURCE_EXHAUSTED) {
      const asked = metadata?.retry_after_ms ?? '';
      const after = /^\d+$/.test(asked) ? Number(asked) : 500;
      this.log(`Play (${text}): ${why}; acting again in ${after} ms`);
      this.notBefore = Date.now() + after;
    } else if (RACES.has(code)) {
      // STALE_ETAG, CONFLICT: the game moved on; NOT_YOUR_TURN and the rules'
      // refusals: the turn passed (timed out, say). A newer version is coming:
      // choose again on it; if none comes, choose again on this one, later.
      this.refusalsHere += 1;
      if (this.refusalsHere > MAX_REFUSALS) {
        throw new ProtocolError(`${MAX_REFUSALS} refusals at version ${this.seen}: ${why}`);
      }
      this.log(`Play (${text}): ${why}; choosing again on the next version`);
      if (this.seen === version) {
        this.notBefore = Date.now() + raceBackoffMs(this.refusalsHere - 1);
      }
    } else {
      throw new ProtocolError(`Play (${text}) refused: ${why}: ${message.refused.message}`);
    }
  }

  /**
   * Sends an action if the newest view asks this seat and nothing is in flight.
   * Returns how long the loop may wait for a message before calling again (ms).
   */
  act() {
    const view = this.view;
    if (this.final !== null || this.pending !== null || view === null) return Infinity;
    if (this.seen < this.waitFor || view.to_act !== this.seat) return Infinity;
    const now = Date.now();
    if (this.thoughtAt !== this.seen) {
      this.thoughtAt = this.seen;
      this.notBefore = Math.max(this.notBefore, now + this.thinkMs);
    }
    if (now < this.notBefore) return this.notBefore - now;
    const action = chooseAction(view);
    if (action === null) return Infinity;
    let etag = view.etag;
    if (this.staleFirst && this.sent === 0) etag = String(this.seen - 1);
    const request = { action, etag, request_id: randomUUID() };
    this.sent += 1;
    // asked: resent on this stream already; cut: --drop-answers cut its answer once.
    const text = actionText(action);
    const number = this.sent;
    this.pending = { request, version: this.seen, text, number, asked: false, cut: false };
    this.send({ action: request });
    return Infinity;
  }

  say(event) {
    const line = this.narrator.line(event);
    if (line) this.log(line);
  }

  async getGame() {
    const game = this.games[this.replica];
    const { game: view } = await unary(game, 'GetGame', { name: this.name }, { token: this.token });
    return view;
  }

  /** "14 messages for versions 1-31 (3 coalesced)" */
  summary() {
    return (
      `session: ${this.messages} messages for versions 1-${this.seen}` +
      ` (${this.versions} received, ${this.coalesced} coalesced), ${this.resumes} resumes,` +
      ` ${this.resent} resent, ${this.repeats} repeated, ${this.refusals} refused,` +
      ` ${this.settled} settled`
    );
  }
}
