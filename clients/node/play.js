#!/usr/bin/env node
// Signs in as a guest, queues alone, and plays the seat it is given to the end
// of the match (the lobby fills the other seats with its bots).
//
//   node clients/node/play.js --lobby HOST:PORT --game HOST:PORT
//
// Exit status: 0 when the match finished, 1 on an error, 2 on bad arguments,
// 3 when --timeout passed first.

import { parseArgs } from 'node:util';

import { describe } from './errors.js';
import { createTicket, signInGuest, stateText, waitMatched } from './lobby.js';
import { connect } from './protocol.js';
import { SeatPlayer } from './seat.js';
import { teamOfSeat, teamText } from './words.js';

const USAGE = `usage: node play.js --lobby HOST:PORT --game HOST:PORT [options]
  --name NAME            display name (default "node")
  --target-score N       points that win a manche (rule option; default 25)
  --manches-to-win N     manches that win the match (rule option; default 2)
  --timeout SECONDS      give up after this long (default 600)
  --watch-seconds S      deadline of each WatchGame stream; the client resumes
                         after it (default 0: none)
  --think-ms MS          pause before each action (default 0)
  --stale-first          send the first action with an outdated etag, to show
                         the ABORTED / re-read path`;

function options() {
  const { values } = parseArgs({
    options: {
      lobby: { type: 'string' },
      game: { type: 'string' },
      name: { type: 'string', default: 'node' },
      'target-score': { type: 'string', default: '0' },
      'manches-to-win': { type: 'string', default: '0' },
      timeout: { type: 'string', default: '600' },
      'watch-seconds': { type: 'string', default: '0' },
      'think-ms': { type: 'string', default: '0' },
      'stale-first': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const numbers = ['target-score', 'manches-to-win', 'timeout', 'watch-seconds', 'think-ms'];
  if (values.help || !values.lobby || !values.game || numbers.some((k) => !(Number(values[k]) >= 0))) {
    console.error(USAGE);
    process.exit(values.help ? 0 : 2);
  }
  return values;
}

async function main() {
  const args = options();
  const log = (line) => console.log(line);
  const timer = setTimeout(() => {
    console.error(`timeout: no match end after ${args.timeout} s`);
    process.exit(3);
  }, Number(args.timeout) * 1000);

  const lobby = connect('LobbyService', args.lobby);
  const game = connect('GameService', args.game);
  const me = await signInGuest(lobby, args.name);
  log(`signed in as ${args.name}: player ${me.player}`);
  const rules = {
    target_score: Number(args['target-score']),
    manches_to_win: Number(args['manches-to-win']),
  };
  const queued = await createTicket(lobby, me.token, rules);
  log(`ticket ${queued.name}: ${stateText(queued.state)}`);
  const ticket = await waitMatched(lobby, me.token, queued.name, log, queued.state);
  const bots = ticket.table.filter((a) => a.bot).map((a) => a.seat);
  log(
    `matched into ${ticket.game}: seat ${ticket.seat} (${teamText(ticket.team)}),` +
      ` bots in seats ${bots.join(', ') || 'none'}`,
  );
  lobby.close();

  const player = new SeatPlayer(game, ticket.game, ticket.game_token, {
    log,
    watchSeconds: Number(args['watch-seconds']),
    thinkMs: Number(args['think-ms']),
    staleFirst: args['stale-first'],
  });
  const began = Date.now();
  const final = await player.run();
  const seconds = ((Date.now() - began) / 1000).toFixed(1);
  game.close();
  clearTimeout(timer);
  const mine = teamOfSeat(player.seat);
  const manches = `${final.manches?.team_a ?? 0}-${final.manches?.team_b ?? 0}`;
  log(
    `played in ${seconds} s: ${player.actions} actions of mine,` +
      ` ${player.resumes} watch resumes, ${player.rereads} re-reads`,
  );
  log(
    `result: ${teamText(final.winner)} won the match ${manches};` +
      ` I (seat ${player.seat}, ${teamText(mine)}) ${final.winner === mine ? 'won' : 'lost'}`,
  );
  return final.finished ? 0 : 1;
}

main().then(
  (status) => process.exit(status),
  (error) => {
    console.error(`error: ${describe(error)}`);
    process.exit(1);
  },
);
