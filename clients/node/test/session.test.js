// The session client (session.js) against a scripted Play service
// (fake_game.js): coalesced messages, refusals, a broken stream resumed on
// another replica, versions without their request id, a cut made by the
// client, and a gap it must refuse. Run with
// `node --test clients/node/test/session.test.js`; tests/node/test_node_sessions.py
// does, and plays real matches over sessions against the real services.

import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';

import { connect, grpc } from '../protocol.js';
import { ProtocolError, SessionPlayer } from '../session.js';
import { FakeGame, NAME } from './fake_game.js';

/** A test of its own, with a deadline: a client stuck waiting (for an answer
 * that never comes, say) fails it. */
const scenario = (name, fn) => test(name, { timeout: 15000 }, fn);

let running = [];

afterEach(() => {
  for (const { game, clients } of running) {
    for (const client of clients) client.close();
    game.stop();
  }
  running = [];
});

/** A fake game served by `replicas` servers, and a player of its seat 0 on them. */
async function table(script, options = {}, replicas = 1) {
  const game = new FakeGame(script);
  const addresses = [];
  for (let i = 0; i < replicas; i++) addresses.push(await game.serve());
  const clients = addresses.map((address) => connect('GameService', address));
  running.push({ game, clients });
  const lines = [];
  const log = (line) => lines.push(line);
  const player = new SessionPlayer(clients, NAME, 'a-token', { log, ...options });
  return { game, player, lines };
}

/** The seat's applied actions: each request id at most once, each a version of seat 0. */
function appliedOnce(game) {
  const seatVersions = game.versions.filter((v) => v.events.some((e) => e.card_played?.seat === 0));
  assert.equal(game.applied.size, seatVersions.length);
  return seatVersions.length;
}

scenario('plays to the end, one message per version, every version once', async () => {
  const { game, player } = await table({ start: 3, last: 15 });
  const final = await player.run();
  assert.equal(final.finished, true);
  assert.equal(player.seen, 15);
  assert.equal(player.versions, 15);
  // Versions 1-3 came together on opening (from_version 1, version 3); then one each.
  assert.equal(player.messages, 13);
  assert.equal(player.coalesced, 1);
  assert.equal(player.actions, appliedOnce(game));
  assert.equal(player.actions, 6);
  assert.deepEqual(
    [player.resumes, player.resent, player.repeats, player.refusals],
    [0, 0, 0, 0],
  );
  assert.deepEqual(game.opens, [{ replica: 0, after_version: 0 }]);
});

scenario('versions that came together: one message, every version and event once', async () => {
  // Seat 1 plays three turns in a row at once: they come in one message
  // (from_version < version); the seat's own versions each in a message of its
  // own, carrying the request id.
  const { game, player, lines } = await table(
    { start: 3, last: 19, turns: [0, 1, 1, 1], coalesceBot: true },
    { trace: true },
  );
  const final = await player.run();
  assert.equal(final.finished, true);
  assert.equal(player.versions, 19);
  assert.equal(player.actions, appliedOnce(game));
  assert.equal(player.actions, 4); // at versions 3, 7, 11 and 15
  assert.equal(player.coalesced, 1 + 4); // the opening (1-3) and each run of seat 1's
  assert.equal(player.messages, 1 + 4 + 4);
  const traced = lines
    .filter((line) => line.startsWith('versions '))
    .map((line) => line.split(' (')[0].split(':')[0]);
  assert.deepEqual(traced, [
    ...['versions 1-3', 'versions 4-4', 'versions 5-7', 'versions 8-8', 'versions 9-11'],
    ...['versions 12-12', 'versions 13-15', 'versions 16-16', 'versions 17-19'],
  ]);
  assert.ok(lines.includes('versions 9-11: card_played@9 card_played@10 card_played@11'));
  assert.equal(player.resent + player.repeats + player.refusals, 0);
});

scenario('refusals: a stale etag and NOT_YOUR_TURN choose again, RATE_LIMITED waits', async () => {
  const refuse = [
    null, // the first action reaches the rules: its etag is stale (--stale-first)
    { code: grpc.status.FAILED_PRECONDITION, reason: 'NOT_YOUR_TURN' },
    {
      code: grpc.status.RESOURCE_EXHAUSTED,
      reason: 'RATE_LIMITED',
      metadata: { retry_after_ms: '300' },
    },
  ];
  const { game, player, lines } = await table({ refuse }, { staleFirst: true });
  const final = await player.run();
  assert.equal(final.finished, true);
  assert.equal(player.refusals, 3);
  assert.ok(lines.some((l) => /: ABORTED STALE_ETAG; choosing again/.test(l)), lines.join('\n'));
  assert.ok(lines.some((l) => /: FAILED_PRECONDITION NOT_YOUR_TURN; choosing again/.test(l)));
  assert.ok(lines.some((l) => /: RESOURCE_EXHAUSTED RATE_LIMITED; acting again in 300 ms/.test(l)));
  // The first four actions were on version 3 (the stale one with etag 2).
  assert.deepEqual(
    game.received.slice(0, 4).map((r) => r.etag),
    ['2', '3', '3', '3'],
  );
  const rateLimited = game.received[2].at;
  assert.ok(game.received[3].at - rateLimited >= 290, 'the retry waited retry_after_ms');
  // Each refused action had its own request id, and the retry after it a new one.
  assert.equal(new Set(game.received.map((r) => r.request_id)).size, game.received.length);
  assert.equal(player.actions, appliedOnce(game));
});

for (const repliesFirst of [false, true]) {
  const order = repliesFirst ? '`repeated` first' : 'its version first';
  const title = `a broken stream is reopened on the next replica, the action resent (${order})`;
  scenario(title, async () => {
    // After applying the 2nd and the 5th action it receives (the 3rd is the 2nd
    // resent), a replica ends the stream UNAVAILABLE without answering.
    const script = { breakAfterApplying: [2, 5], repliesFirst };
    const { game, player, lines } = await table(script, {}, 2);
    const final = await player.run();
    assert.equal(final.finished, true);
    assert.equal(player.resumes, 2);
    assert.deepEqual(
      game.opens.map((o) => o.replica),
      [0, 1, 0],
    );
    // Each reopening resumed after the last version received, and each
    // unanswered action went again with its request id: answered by the version
    // it made (which carries the id) or `repeated`, and applied once.
    assert.deepEqual(
      game.opens.map((o) => o.after_version),
      [0, 5, 9],
    );
    assert.equal(player.resent, 2);
    assert.equal(player.repeats, repliesFirst ? 2 : 0);
    assert.equal(game.received[2].request_id, game.received[1].request_id);
    assert.equal(game.received[5].request_id, game.received[4].request_id);
    assert.equal(player.versions, 15);
    assert.equal(player.messages, 13);
    assert.equal(player.actions, appliedOnce(game));
    assert.equal(player.actions, 6);
    assert.ok(lines.some((l) => /session dropped \(UNAVAILABLE\).* on replica 1/.test(l)));
  });
}

scenario('its version without its request id: the action is asked again, `repeated`', async () => {
  // The seat's 2nd action makes version 6, which goes out without its request id.
  const { game, player, lines } = await table({ anonymous: [2] });
  const final = await player.run();
  assert.equal(final.finished, true);
  assert.deepEqual([player.resent, player.repeats, player.resumes], [1, 1, 0]);
  assert.ok(lines.includes('play 7He: repeated (applied before, version 6)'), lines.join('\n'));
  assert.equal(game.received[2].request_id, game.received[1].request_id);
  assert.equal(player.versions, 15);
  assert.equal(player.actions, appliedOnce(game));
  assert.equal(player.actions, 6);
});

scenario('the last version without its request id: SubmitAction settles the action', async () => {
  // The seat's 6th action (at version 13) makes the last version, without its
  // request id; the session ends with it, the action unanswered.
  const { game, player, lines } = await table({ last: 14, anonymous: [6] });
  const final = await player.run();
  assert.equal(final.finished, true);
  assert.equal(player.settled, 1);
  assert.deepEqual(game.submitted, [game.received[5].request_id]);
  assert.ok(lines.includes('play 7He: applied, at version 14 (asked with its request id)'));
  assert.equal(player.actions, appliedOnce(game));
  assert.equal(player.actions, 6);
});

scenario('--drop-answers: the client cuts its stream on an answer, resumes, no gap', async () => {
  const { game, player, lines } = await table({ start: 3, last: 21 }, { dropAnswers: 3 });
  const final = await player.run();
  assert.equal(final.finished, true);
  // The answers to its 3rd, 6th and 9th actions (versions 8, 14 and 20) were
  // cut before reading: each version still came once, in order.
  assert.equal(player.resumes, 3);
  assert.equal(player.resent, 3);
  assert.equal(player.versions, 21);
  assert.equal(player.actions, appliedOnce(game));
  assert.equal(player.actions, 9);
  assert.deepEqual(
    game.opens.map((o) => o.after_version),
    [0, 7, 13, 19],
  );
  const cut = 'session dropped (cut on the answer to action 6, before reading it)';
  assert.ok(lines.includes(`${cut}: reopening after version 13`), lines.join('\n'));
});

scenario('a gap in the versions stops the client', async () => {
  const { player } = await table({ start: 3, last: 15, gapAt: 6 });
  await assert.rejects(player.run(), (error) => {
    assert.ok(error instanceof ProtocolError);
    assert.match(error.message, /versions 7-7 after 5: a gap or a repeat/);
    return true;
  });
});
