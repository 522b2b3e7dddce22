// The truc.v1 protocol, loaded from the repository's .proto files at run time
// (no generated code), and small promise wrappers over grpc-js calls.

import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The repository's protocol: proto/truc/v1/*.proto. */
export const PROTO_ROOT = path.resolve(here, '..', '..', 'proto');

/**
 * How proto-loader turns messages into JavaScript objects, each option chosen:
 * - keepCase: field names as the .proto files spell them (legal_actions, to_act),
 *   the names the protocol's documentation and every other language use.
 * - longs: Number: the only int64 fields are game versions, which count one
 *   game's actions and stay far below 2^53.
 * - enums: String: enum values by name ('PHASE_MATCH_OVER'), readable in logs;
 *   requests may use the names too.
 * - defaults: true: proto3 scalars missing on the wire read as their zero value
 *   (finished: false, stake: 0). proto3 `optional` fields (to_act, seat,
 *   winning_seat) keep their presence: they stay undefined when absent, so
 *   "nobody to act" is not confused with seat 0.
 * - oneofs: true: each oneof gets a property naming the member that is set
 *   (action.kind === 'play_card', event.kind === 'trick_completed').
 * Imports from outside truc/v1: google/protobuf/timestamp.proto (and
 * descriptor.proto, which annotations.proto imports) ship with proto-loader
 * (protobufjs' bundled well-known types); google/api/annotations.proto and
 * http.proto, the REST mapping's options (grpc-js ignores them), are vendored
 * in proto/google/api/ and found through includeDirs.
 */
export const LOADER_OPTIONS = Object.freeze({
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
});

function protoFiles() {
  return readdirSync(path.join(PROTO_ROOT, 'truc', 'v1'))
    .filter((file) => file.endsWith('.proto'))
    .sort()
    .map((file) => `truc/v1/${file}`);
}

const definition = protoLoader.loadSync(protoFiles(), LOADER_OPTIONS);

/** The loaded package: truc.v1.GameService, truc.v1.LobbyService, ... */
export const truc = grpc.loadPackageDefinition(definition).truc.v1;

/** A plaintext client of one service ('GameService' or 'LobbyService') at host:port. */
export function connect(service, address) {
  return new truc[service](address, grpc.credentials.createInsecure());
}

/** Call metadata carrying `authorization: Bearer <token>` (none without a token). */
export function bearer(token) {
  const metadata = new grpc.Metadata();
  if (token) metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

/** One unary call as a promise, with a deadline. */
export function unary(client, method, request, { token, seconds = 10 } = {}) {
  return new Promise((resolve, reject) => {
    client[method](
      request,
      bearer(token),
      { deadline: Date.now() + seconds * 1000 },
      (error, response) => (error ? reject(error) : resolve(response)),
    );
  });
}

/** One server-streaming call (a Readable: iterate it with for await). */
export function serverStream(client, method, request, { token, seconds = 0 } = {}) {
  const options = seconds > 0 ? { deadline: Date.now() + seconds * 1000 } : {};
  return client[method](request, bearer(token), options);
}

/** The value names of one of the protocol's enums ('RuleSet' -> ['RULE_SET_UNSPECIFIED', ...]). */
export function enumNames(name) {
  return truc[name].type.value.map((value) => value.name);
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export { grpc };
