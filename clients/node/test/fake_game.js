// A scripted GameService.Play for the session client's tests: a two-seat game
// in memory whose seat 1 the fake plays itself, served by one or more grpc-js
// servers (replicas sharing the game). It follows the protocol's rules for a
// session (one message per version, or several versions coalesced; request ids
// on the version an action produced; `refused`; `repeated`; OK after the last
// version) and can misbehave on cue: refuse actions, coalesce, break a stream.

import grpc from '@grpc/grpc-js';

import { truc } from '../protocol.js';

export const NAME = 'games/fake';
const CARD = { suit: 'SUIT_HEARTS', rank: 'RANK_SEVEN' };

export class FakeGame {
  /**
   * @param script {start (versions that exist before any session: 1..start),
   *   last (the version that finishes the match), turns (who acts at versions
   *   start, start + 1, ..., in a cycle), coalesceBot (seat 1 plays all its
   *   turns at once and its versions go out in one message),
   *   refuse (refusals for the first actions received: [{code, reason,
   *   metadata}], null for none), breakAfterApplying (the numbers of the
   *   actions received after which the stream ends UNAVAILABLE, the action
   *   applied but not answered), gapAt (a version never sent: the next message
   *   skips it), repliesFirst (a reopened session sends its first versions
   *   only after 20 ms: an action resent at once is answered `repeated` before
   *   the version it made arrives again), anonymous (the numbers of the
   *   actions received whose versions go out without their request id, as the
   *   real service's versions read from the log do)}
   */
  constructor({
    start = 3,
    last = 15,
    turns = [0, 1],
    coalesceBot = false,
    refuse = [],
    breakAfterApplying = [],
    gapAt = 0,
    repliesFirst = false,
    anonymous = [],
  } = {}) {
    this.start = start;
    this.last = last;
    this.turns = turns;
    this.coalesceBot = coalesceBot;
    this.refuse = [...refuse];
    this.breakAfterApplying = new Set(breakAfterApplying);
    this.gapAt = gapAt;
    this.repliesFirst = repliesFirst;
    this.anonymous = new Set(anonymous);
    this.submitted = []; // SubmitAction calls: their request ids
    this.versions = []; // versions[v - 1] = {events, requestId}
    this.applied = new Map(); // request id -> the version it produced
    this.received = []; // every action received: {request_id, etag, at (ms)}
    this.opens = []; // every open: {replica, after_version}
    this.sessions = new Set();
    this.servers = [];
    for (let v = 1; v <= start; v++) {
      const events = [{ version: v, hand_started: { hand_number: v } }];
      this.versions.push({ events, requestId: '' });
    }
  }

  get version() {
    return this.versions.length;
  }

  toAct(version) {
    if (version >= this.last) return undefined;
    return this.turns[(version - this.start) % this.turns.length];
  }

  view(version) {
    const finished = version >= this.last;
    const toAct = this.toAct(version);
    return {
      name: NAME,
      seat: 0,
      phase: finished ? 'PHASE_MATCH_OVER' : 'PHASE_PLAY',
      to_act: toAct,
      legal_actions: toAct === 0 ? [{ play_card: CARD }] : [],
      finished,
      winner: finished ? 'TEAM_A' : 'TEAM_UNSPECIFIED',
      etag: String(version),
      rule_set: 'RULE_SET_FRENCH_TRUC',
      seat_count: 2,
    };
  }

  /** One more version: a card played by `seat`. */
  advance(seat, requestId = '') {
    const version = this.version + 1;
    const event = { version, card_played: { seat, card: CARD, trick: 1 } };
    this.versions.push({ events: [event], requestId });
    return version;
  }

  /** Seat 1's move, if it is to act (all its moves in a row with coalesceBot). */
  botMoves() {
    while (this.toAct(this.version) === 1) {
      this.advance(1);
      if (!this.coalesceBot) break;
    }
  }

  /** Starts one replica: a grpc-js server on a free port; resolves its address. */
  async serve() {
    const replica = this.servers.length;
    const server = new grpc.Server();
    server.addService(truc.GameService.service, {
      Play: (call) => this.play(call, replica),
      SubmitAction: (call, done) => this.submitAction(call.request, done),
    });
    this.servers.push(server);
    const port = await new Promise((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    return `127.0.0.1:${port}`;
  }

  stop() {
    for (const server of this.servers) server.forceShutdown();
  }

  /** Every open session sends what it has not sent yet. */
  flushAll() {
    for (const session of this.sessions) session.flush();
  }

  play(call, replica) {
    const game = this;
    const session = {
      sent: null, // the last version sent; null until opened
      flush() {
        if (this.sent === null || this.sent < 0 || call.writableEnded) return;
        while (this.sent < game.version) {
          let from = this.sent + 1;
          if (from === game.gapAt) {
            // Misbehave: never send this version (wait for the next one and skip it).
            if (game.version === from) return;
            from += 1;
          }
          // One message per version, except what came together (all that a
          // session opened behind has missed, the bot's moves in a row), up to
          // and including the first made by the seat: as the real service does,
          // every action is answered by its own message.
          let to = game.coalesceBot || from === 1 ? game.version : from;
          const own = game.versions.findIndex((v, i) => i >= from - 1 && v.requestId);
          if (own >= 0) to = Math.min(to, own + 1);
          const covered = game.versions.slice(from - 1, to);
          call.write({
            version: to,
            from_version: from,
            events: covered.flatMap((v) => v.events),
            game: game.view(to),
            // Strictly the request id of the action that produced `version`.
            request_id: covered.at(-1).requestId,
          });
          this.sent = to;
          if (to >= game.last) {
            call.end();
            return;
          }
        }
      },
    };
    call.on('data', (request) => {
      if (session.sent === null) {
        if (!request.open) return call.emit('error', { code: grpc.status.INVALID_ARGUMENT });
        const after = request.open.after_version;
        this.opens.push({ replica, after_version: after });
        const start = () => {
          session.sent = after;
          this.sessions.add(session);
          session.flush();
        };
        if (this.repliesFirst && after > 0) {
          session.sent = -1; // opened, not yet sending
          setTimeout(start, 20);
        } else {
          start();
        }
        return;
      }
      this.action(call, session, request.action);
    });
    const close = () => this.sessions.delete(session);
    call.on('cancelled', close);
    call.on('finish', close);
    call.on('error', close);
  }

  action(call, session, { request_id: id, etag }) {
    if (call.writableEnded) return; // after the match's last version: nothing to answer
    this.received.push({ request_id: id, etag, at: Date.now() });
    const number = this.received.length;
    const answer = (fields) => call.write({ version: this.version, request_id: id, ...fields });
    if (this.applied.has(id)) {
      return call.write({ version: this.applied.get(id), request_id: id, repeated: true });
    }
    const scripted = this.refuse.shift();
    if (scripted) return answer({ refused: { message: 'scripted', metadata: {}, ...scripted } });
    if (this.toAct(this.version) !== 0) {
      const code = grpc.status.FAILED_PRECONDITION;
      return answer({ refused: { code, reason: 'NOT_YOUR_TURN' } });
    }
    if (etag !== String(this.version)) {
      return answer({ refused: { code: grpc.status.ABORTED, reason: 'STALE_ETAG' } });
    }
    this.applied.set(id, this.advance(0, this.anonymous.has(number) ? '' : id));
    if (this.breakAfterApplying.has(number)) {
      this.sessions.delete(session);
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'scripted break' });
      setTimeout(() => this.moveBot(), 20);
      return;
    }
    if (this.coalesceBot) this.botMoves();
    this.flushAll();
    if (!this.coalesceBot) setTimeout(() => this.moveBot(), 5);
  }

  /** SubmitAction: only what a retry needs (an applied request id's version). */
  submitAction({ request_id: id, etag }, done) {
    this.submitted.push(id);
    if (this.applied.has(id)) return done(null, { game: this.view(this.applied.get(id)) });
    const stale = etag !== String(this.version);
    done({ code: stale ? grpc.status.ABORTED : grpc.status.FAILED_PRECONDITION, details: 'no' });
  }

  moveBot() {
    this.botMoves();
    this.flushAll();
  }
}
