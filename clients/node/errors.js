// Reading a failed call's google.rpc.ErrorInfo: every truc error carries a
// google.rpc.Status in the grpc-status-details-bin trailer, whose details hold
// an ErrorInfo (domain "truc.v1") with a machine-readable reason.
//
// google/rpc/status.proto and error_details.proto are vendored in ./proto,
// verbatim from googleapis-common-protos (the version in constraints.txt); the
// test suite checks they still match. protobufjs (the library proto-loader is
// built on) decodes them; their google/protobuf imports are bundled with it.

import path from 'node:path';
import { fileURLToPath } from 'node:url';

import protobuf from 'protobufjs';

import { grpc } from './protocol.js';

const VENDORED = path.join(path.dirname(fileURLToPath(import.meta.url)), 'proto');
const ERROR_INFO_URL = 'type.googleapis.com/google.rpc.ErrorInfo';

const root = new protobuf.Root();
root.resolvePath = (_origin, target) =>
  path.isAbsolute(target) ? target : path.join(VENDORED, target);
root.loadSync(['google/rpc/status.proto', 'google/rpc/error_details.proto'], { keepCase: true });
const Status = root.lookupType('google.rpc.Status');
const ErrorInfo = root.lookupType('google.rpc.ErrorInfo');

/** The ErrorInfo of a failed call ({reason, domain, metadata}), or null if it has none. */
export function errorInfo(error) {
  const details = error?.metadata?.get?.('grpc-status-details-bin') ?? [];
  for (const bytes of details) {
    const status = Status.decode(bytes);
    for (const any of status.details) {
      if (any.type_url === ERROR_INFO_URL) {
        return ErrorInfo.toObject(ErrorInfo.decode(any.value), { defaults: true });
      }
    }
  }
  return null;
}

/** The ErrorInfo reason ('STALE_ETAG', 'NOT_SEATED', ...), or null. */
export function reasonOf(error) {
  return errorInfo(error)?.reason || null;
}

/** The status code's name ('ABORTED'). */
export function statusName(code) {
  return Object.keys(grpc.status).find((name) => grpc.status[name] === code) ?? String(code);
}

/** The wait a RESOURCE_EXHAUSTED (RATE_LIMITED) answer asks for, in ms, or null. */
export function retryAfterMs(error) {
  const value = errorInfo(error)?.metadata?.retry_after_ms;
  return value && /^\d+$/.test(value) ? Number(value) : null;
}

/** "ABORTED STALE_ETAG: the game is at version 12, ..." */
export function describe(error) {
  if (error?.code === undefined) return String(error?.message ?? error);
  const reason = reasonOf(error) ?? 'no ErrorInfo';
  return `${statusName(error.code)} ${reason}: ${error.details}`;
}

const RETRYABLE = new Set([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]);

/** Whether a stream that failed with this error may simply be resumed. */
export function isTransient(error) {
  return RETRYABLE.has(error?.code);
}
