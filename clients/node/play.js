#!/usr/bin/env node
// Signs in as a guest, queues alone, and plays the seat it is given to the end
// of the match (the lobby fills the other seats with its bots); or plays a seat
// of a game that exists already (--join, with that seat's game token). It plays
// over a Play session (one bidirectional stream for the whole match) unless
// --transport unary asks for SubmitAction calls and a WatchGame stream.
//
//   node clients/node/play.js --lobby HOST:PORT --game HOST:PORT [--rule-set french_truc]
//   node clients/node/play.js --game HOST:PORT[,HOST:PORT...] --join games/ID --token TOKEN
//
// Exit status: 0 when the match finished, 1 on an error, 2 on bad arguments,
// 3 when --timeout passed first.

import { parseArgs } from 'node:util';

import { describe } from './errors.js';
import { createTicket, signInGuest, stateText, waitMatched } from './lobby.js';
import { connect, enumNames } from './protocol.js';
import { SeatPlayer } from './seat.js';
import { SessionPlayer } from './session.js';
import { ruleSetName, ruleSetValue, teamOfSeat, teamText } from './words.js';

// The rule sets and trick orders the protocol has (game.proto), by name.
const RULE_SETS = enumNames('RuleSet')
  .filter((value) => value !== 'RULE_SET_UNSPECIFIED')
  .map(ruleSetName);
const TRICK_ORDERS = enumNames('TrickOrder')
  .filter((value) => value !== 'TRICK_ORDER_UNSPECIFIED')
  .map((value) => value.replace(/^TRICK_ORDER_/, '').toLowerCase());

const TRANSPORTS = ['session', 'unary'];

const USAGE = `usage: node play.js --lobby HOST:PORT --game HOST:PORT[,HOST:PORT...] [options]
       node play.js --game HOST:PORT[,...] --join games/ID --token TOKEN [options]
  --game ADDRESSES       the game service; with several replicas (comma
                         separated) a session that breaks (UNAVAILABLE) is
                         reopened on the next one
  --transport NAME       session (default): one Play stream for the whole
                         match; unary: SubmitAction calls and WatchGame (the
                         first address only)
  --join NAME            play a seat of this game (created by the lobby or a
                         test) instead of queueing; --token is that seat's
                         game token, which names the player
  --name NAME            display name (default "node")
  --rule-set NAME        the game to queue for (default truc_y_flou): one of
                         ${RULE_SETS.join(', ')}
  --target-score N       points that win a manche or game (rule option; default:
                         the rule set's own)
  --manches-to-win N     manches or games that win the match (rule option;
                         default 2)
  --trick-order NAME     French, Sackson and partnership Truc: ${TRICK_ORDERS.join(' or ')}
  --seats N              Catalan Truc: 4 or 2
  --timeout SECONDS      give up after this long (default 600)
  --watch-seconds S      deadline of each Play (or WatchGame) stream; the
                         client resumes after it (default 0: none)
  --drop-answers N       session: cut the stream when the answer to every N-th
                         action arrives, before reading it, then reopen it and
                         resend that action with its request id (default 0:
                         never)
  --trace                session: a line per message (its versions, events
                         and request id)
  --think-ms MS          pause before each action (default 0)
  --stale-first          send the first action with an outdated etag, to show
                         the ABORTED / re-read path`;

function usage(status) {
  console.error(USAGE);
  process.exit(status);
}

function options() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        lobby: { type: 'string' },
        game: { type: 'string' },
        join: { type: 'string' },
        token: { type: 'string' },
        name: { type: 'string', default: 'node' },
        'rule-set': { type: 'string', default: 'truc_y_flou' },
        'target-score': { type: 'string', default: '0' },
        'manches-to-win': { type: 'string', default: '0' },
        'trick-order': { type: 'string' },
        seats: { type: 'string', default: '0' },
        timeout: { type: 'string', default: '600' },
        'watch-seconds': { type: 'string', default: '0' },
        'think-ms': { type: 'string', default: '0' },
        'stale-first': { type: 'boolean', default: false },
        transport: { type: 'string', default: 'session' },
        'drop-answers': { type: 'string', default: '0' },
        trace: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    console.error(`error: ${error.message}`);
    usage(2);
  }
  if (values.help) usage(0);
  const numbers = [
    ...['target-score', 'manches-to-win', 'seats', 'timeout', 'watch-seconds', 'think-ms'],
    'drop-answers',
  ];
  const joining = values.join !== undefined;
  const bad =
    !values.game ||
    (joining ? !values.token || values.lobby : !values.lobby) ||
    numbers.some((k) => !(Number(values[k]) >= 0)) ||
    !RULE_SETS.includes(values['rule-set']) ||
    !TRANSPORTS.includes(values.transport) ||
    !Number.isInteger(Number(values['drop-answers'])) ||
    values.game.split(',').some((address) => !address) ||
    (values['trick-order'] !== undefined && !TRICK_ORDERS.includes(values['trick-order']));
  if (bad) usage(2);
  return values;
}

/** The ticket's RuleOptions: zero values mean the rule set's defaults. */
function ruleOptions(args) {
  const rules = {
    rule_set: ruleSetValue(args['rule-set']),
    target_score: Number(args['target-score']),
    manches_to_win: Number(args['manches-to-win']),
    seats: Number(args.seats),
  };
  if (args['trick-order']) rules.trick_order = `TRICK_ORDER_${args['trick-order'].toUpperCase()}`;
  return rules;
}

/** Queues at the lobby; returns the game's name and this seat's game token. */
async function queue(args, log) {
  const lobby = connect('LobbyService', args.lobby);
  const me = await signInGuest(lobby, args.name);
  log(`signed in as ${args.name}: player ${me.player}`);
  const queued = await createTicket(lobby, me.token, ruleOptions(args));
  log(`ticket ${queued.name}: ${stateText(queued.state)} (${args['rule-set']})`);
  const ticket = await waitMatched(lobby, me.token, queued.name, log, queued.state);
  const bots = ticket.table.filter((a) => a.bot).map((a) => a.seat);
  log(
    `matched into ${ticket.game}: seat ${ticket.seat} (${teamText(ticket.team)}),` +
      ` bots in seats ${bots.join(', ') || 'none'}`,
  );
  lobby.close();
  return { name: ticket.game, token: ticket.game_token };
}

async function main() {
  const args = options();
  const log = (line) => console.log(line);
  const timer = setTimeout(() => {
    console.error(`timeout: no match end after ${args.timeout} s`);
    process.exit(3);
  }, Number(args.timeout) * 1000);

  const seat =
    args.join !== undefined ? { name: args.join, token: args.token } : await queue(args, log);
  const games = args.game.split(',').map((address) => connect('GameService', address));
  const common = { log, thinkMs: Number(args['think-ms']), staleFirst: args['stale-first'] };
  const player =
    args.transport === 'session'
      ? new SessionPlayer(games, seat.name, seat.token, {
          ...common,
          streamSeconds: Number(args['watch-seconds']),
          dropAnswers: Number(args['drop-answers']),
          trace: args.trace,
        })
      : new SeatPlayer(games[0], seat.name, seat.token, {
          ...common,
          watchSeconds: Number(args['watch-seconds']),
        });
  const began = Date.now();
  const final = await player.run();
  const seconds = ((Date.now() - began) / 1000).toFixed(1);
  for (const game of games) game.close();
  clearTimeout(timer);
  const mine = teamOfSeat(player.seat);
  const manches = `${final.manches?.team_a ?? 0}-${final.manches?.team_b ?? 0}`;
  if (player instanceof SessionPlayer) {
    log(
      `played in ${seconds} s (transport session): ${player.actions} actions of mine,` +
        ` ${player.resumes} session resumes, ${player.refusals} refused`,
    );
    log(player.summary());
  } else {
    log(
      `played in ${seconds} s (transport unary): ${player.actions} actions of mine,` +
        ` ${player.resumes} watch resumes, ${player.rereads} re-reads`,
    );
  }
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
