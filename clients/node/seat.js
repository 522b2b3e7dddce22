// GameService: play one seat of a game to the end of the match.
//
// The client follows the game with WatchGame and acts whenever the newest
// version it knows asks its seat to act. The stream is resumed from the last
// version received when it drops (or reaches its deadline): versions must
// arrive one after the other, none missed and none twice, or the client stops.

import { randomUUID } from 'node:crypto';

import { describe, isTransient, reasonOf, retryAfterMs, statusName } from './errors.js';
import { chooseAction } from './policy.js';
import { grpc, serverStream, sleep, unary } from './protocol.js';
import { actionText, Narrator, ruleSetName } from './words.js';

export class ProtocolError extends Error {}

const REREAD = new Set([grpc.status.ABORTED, grpc.status.FAILED_PRECONDITION]);

/** The game version an etag names (the service's etags are its versions). */
function versionOf(view) {
  const version = Number(view.etag);
  if (!Number.isSafeInteger(version)) throw new ProtocolError(`etag ${view.etag} is no version`);
  return version;
}

export class SeatPlayer {
  /**
   * @param game a GameService client
   * @param name "games/{game}"
   * @param token the game token of the ticket
   * @param options {log, watchSeconds (0: no deadline on WatchGame), thinkMs (a
   *   pause before each action), staleFirst (send the first action with an
   *   outdated etag, to exercise the ABORTED path)}
   */
  constructor(
    game,
    name,
    token,
    { log = console.log, watchSeconds = 0, thinkMs = 0, staleFirst = false } = {},
  ) {
    this.game = game;
    this.name = name;
    this.token = token;
    this.log = log;
    this.watchSeconds = watchSeconds;
    this.thinkMs = thinkMs;
    this.staleFirst = staleFirst;
    this.seat = undefined;
    this.ruleSet = undefined; // the game's rule set, from its first view
    this.seen = 0; // the last version the watch delivered (or GetGame returned)
    this.newest = 0; // the newest version known from any answer
    this.final = null;
    this.actions = 0;
    this.resumes = 0;
    this.rereads = 0;
  }

  /** Plays until the match is over; returns the final view. */
  async run() {
    const view = await this.getGame();
    this.seat = view.seat;
    if (this.seat === undefined) throw new ProtocolError('GetGame gave no seat: not seated?');
    this.ruleSet = ruleSetName(view.rule_set);
    this.narrator = new Narrator(this.seat, this.ruleSet);
    const phase = view.phase.replace('PHASE_', '').toLowerCase();
    const table = `${this.ruleSet}, ${view.seat_count} seats`;
    this.log(
      `${this.name}: I hold seat ${this.seat} (${table}); phase ${phase}, version ${versionOf(view)}`,
    );
    for (const event of view.events) this.say(event);
    this.seen = versionOf(view);
    if (view.finished) return (this.final = view);
    await this.maybeAct(view, this.seen);
    let failures = 0;
    while (this.final === null) {
      const before = this.seen;
      try {
        await this.watch();
        if (this.final === null && this.seen === before) {
          // The stream ended with nothing new (a server draining, say): make sure
          // the match is not over already before watching again.
          const now = await this.getGame();
          if (now.finished) {
            for (const event of now.events) if (event.version > this.seen) this.say(event);
            this.final = now;
          } else {
            await sleep(Math.min(1000, 50 * ++failures));
          }
        }
      } catch (error) {
        if (!isTransient(error)) throw error;
        this.resumes += 1;
        this.log(`watch dropped (${statusName(error.code)}): resuming after version ${this.seen}`);
        // A stream that reached its own deadline resumes at once; a failing one backs off.
        failures = this.seen > before ? 0 : failures + 1;
        if (failures > 30) throw error;
        if (error.code !== grpc.status.DEADLINE_EXCEEDED) await sleep(Math.min(1000, 50 * failures));
      }
    }
    return this.final;
  }

  async watch() {
    const call = serverStream(
      this.game,
      'WatchGame',
      { name: this.name, after_version: this.seen },
      { token: this.token, seconds: this.watchSeconds },
    );
    for await (const change of call) {
      if (change.version !== this.seen + 1) {
        call.cancel();
        throw new ProtocolError(`version ${change.version} after ${this.seen}: a gap or a repeat`);
      }
      this.seen = change.version;
      for (const event of change.events) this.say(event);
      if (change.game.finished) {
        this.final = change.game;
        call.cancel();
        return;
      }
      await this.maybeAct(change.game, change.version);
    }
  }

  say(event) {
    const line = this.narrator.line(event);
    if (line) this.log(line);
  }

  async getGame() {
    const { game } = await unary(this.game, 'GetGame', { name: this.name }, { token: this.token });
    this.newest = Math.max(this.newest, versionOf(game));
    return game;
  }

  /** Acts if this view, at this version, is the newest known and asks this seat. */
  async maybeAct(view, version) {
    this.newest = Math.max(this.newest, version);
    if (version !== this.newest || view.finished || view.to_act !== this.seat) return;
    if (this.thinkMs > 0) await sleep(this.thinkMs);
    for (let attempt = 0; attempt < 10; attempt++) {
      const action = chooseAction(view);
      if (action === null) return;
      let etag = view.etag;
      if (this.staleFirst && this.actions === 0 && this.rereads === 0) etag = String(version - 1);
      try {
        const reply = await this.submit(action, etag);
        this.actions += 1;
        this.newest = Math.max(this.newest, versionOf(reply.game));
        return;
      } catch (error) {
        if (!REREAD.has(error.code)) throw error;
        // ABORTED (STALE_ETAG, CONFLICT): the game moved on; FAILED_PRECONDITION:
        // the rules refused it (the turn may have timed out). Re-read and decide again.
        this.rereads += 1;
        const why = `${statusName(error.code)} ${reasonOf(error)}`;
        this.log(`SubmitAction (${actionText(action)}): ${why}; re-reading the game`);
        view = await this.getGame();
        if (view.finished || view.to_act !== this.seat) return;
      }
    }
    throw new ProtocolError('SubmitAction kept failing');
  }

  /** SubmitAction, retried with the same request id while the service is unavailable. */
  async submit(action, etag) {
    const request = {
      name: this.name,
      action,
      etag,
      request_id: randomUUID(),
      response_view: 'RESPONSE_VIEW_MINIMAL',
    };
    for (let attempt = 0; ; attempt++) {
      try {
        return await unary(this.game, 'SubmitAction', request, { token: this.token });
      } catch (error) {
        const wait =
          error.code === grpc.status.RESOURCE_EXHAUSTED
            ? (retryAfterMs(error) ?? 500)
            : error.code === grpc.status.UNAVAILABLE
              ? Math.min(2000, 100 * 2 ** attempt)
              : null;
        if (wait === null || attempt >= 8) throw error;
        this.log(`SubmitAction ${describe(error)}: retrying in ${wait} ms`);
        await sleep(wait);
      }
    }
  }
}
