// api.js: every call the web app makes to the public API of the gateway, and
// nothing else. The app is served by the gateway itself, so every URL here is
// same-origin: REST (fetch), Server-Sent Events (EventSource) and the Play
// session (WebSocket). Messages are the proto3 JSON mapping: lowerCamelCase
// fields, enums by name, 64-bit integers as strings (see /openapi.json).
//
// Errors: every refusal becomes an ApiError carrying the HTTP status, the
// machine-readable reason of the google.rpc.ErrorInfo (e.g. BAD_DISPLAY_NAME,
// NOT_YOUR_TURN) and the service's message, so the screens can show both.

/** A refusal of the API: `status` (HTTP), `reason` (ErrorInfo), `message`. */
export class ApiError extends Error {
  constructor(status, reason, message, retryAfterMs = 0) {
    super(message || reason || `HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.reason = reason || "UNKNOWN";
    this.retryAfterMs = retryAfterMs;
  }

  /** "BAD_DISPLAY_NAME: the name has a control character" (for people). */
  describe() {
    return `${this.reason}: ${this.message}`;
  }
}

/** The ErrorInfo of a google.rpc.Status JSON body: {reason, metadata}. */
function errorInfo(status) {
  for (const detail of (status && status.details) || []) {
    if (String(detail["@type"] || "").endsWith("google.rpc.ErrorInfo")) {
      return detail;
    }
  }
  return null;
}

/** An ApiError from a google.rpc.Status JSON body (REST, SSE or WebSocket). */
export function errorFromStatus(httpStatus, status) {
  const info = errorInfo(status);
  const retry = info && info.metadata ? Number(info.metadata.retry_after_ms || 0) : 0;
  return new ApiError(httpStatus, info ? info.reason : "", status ? status.message : "", retry);
}

/** A game or ticket name ("games/abc") as the path of its REST routes. */
function resource(name, kind) {
  const prefix = `${kind}/`;
  if (typeof name !== "string" || !name.startsWith(prefix) || name.includes("..")) {
    throw new ApiError(0, "BAD_NAME", `not a ${kind} name: ${name}`);
  }
  return `/v1/${prefix}${encodeURIComponent(name.slice(prefix.length))}`;
}

/** One REST call: JSON in, JSON out, an ApiError for anything but 2xx. */
async function call(method, path, { token, body, query } = {}) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const init = { method, headers, credentials: "omit", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let url = path;
  if (query) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined && value !== null && value !== "") params.set(key, String(value));
    }
    const text = params.toString();
    if (text) url += `?${text}`;
  }
  let response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    throw new ApiError(0, "NETWORK", `the gateway cannot be reached (${error.message})`);
  }
  const text = await response.text();
  let decoded = null;
  try {
    decoded = text ? JSON.parse(text) : {};
  } catch {
    decoded = null;
  }
  if (!response.ok) {
    if (decoded && typeof decoded === "object") throw errorFromStatus(response.status, decoded);
    throw new ApiError(response.status, `HTTP_${response.status}`, text.slice(0, 200));
  }
  if (decoded === null) throw new ApiError(response.status, "BAD_RESPONSE", "not JSON");
  return decoded;
}

// ------------------------------------------------------------------ the lobby

/** POST /v1/guests:signIn -> {player, token, expireTime, displayName}. */
export function signIn(displayName) {
  return call("POST", "/v1/guests:signIn", { body: { displayName } });
}

/** POST /v1/tickets -> {ticket}. `party`: the other members' player ids. */
export function createTicket(token, { options, party = [], isPrivate = false }) {
  return call("POST", "/v1/tickets", { token, body: { options, party, private: isPrivate } });
}

/** GET /v1/tickets/{t} -> {ticket}. */
export function getTicket(token, name) {
  return call("GET", resource(name, "tickets"), { token });
}

/** POST /v1/tickets/{t}:confirm -> {ticket}: a party member says yes. */
export function confirmTicket(token, name) {
  return call("POST", `${resource(name, "tickets")}:confirm`, { token, body: {} });
}

/** POST /v1/tickets/{t}:cancel -> {ticket}. */
export function cancelTicket(token, name) {
  return call("POST", `${resource(name, "tickets")}:cancel`, { token, body: {} });
}

/** POST /v1/streamTokens -> {token, expireTime}: a short-lived token for an EventSource URL. */
export function streamToken(token) {
  return call("POST", "/v1/streamTokens", { token, body: {} });
}

/** GET /v1/liveGames -> {games, nextPageToken}: games at public tables. */
export function listLiveGames(token, pageToken = "", pageSize = 10) {
  return call("GET", "/v1/liveGames", {
    token,
    query: { page_size: pageSize, page_token: pageToken },
  });
}

/** GET /v1/games -> {games, nextPageToken}: the caller's finished games. */
export function listGames(token, pageToken = "", pageSize = 10) {
  return call("GET", "/v1/games", { token, query: { page_size: pageSize, page_token: pageToken } });
}

/** POST /v1/games/{g}:spectate -> {token, expireTime, game}: a spectator grant. */
export function spectate(token, game) {
  return call("POST", `${resource(game, "games")}:spectate`, { token, body: {} });
}

// ------------------------------------------------------------------ the game

/** GET /v1/games/{g} -> {game}: the caller's view (and the log so far). */
export function getGame(token, game) {
  return call("GET", resource(game, "games"), { token });
}

/** POST /v1/games/{g}:submitAction -> {game, events}. */
export function submitAction(token, game, { action, etag, requestId }) {
  return call("POST", `${resource(game, "games")}:submitAction`, {
    token,
    body: { action, etag: etag || "", requestId },
  });
}

/** GET /v1/games/{g}:replay -> {steps, nextPageToken, latestVersion, finished}. */
export function replayPage(token, game, { pageToken = "", asSpectator = false, pageSize = 200 }) {
  return call("GET", `${resource(game, "games")}:replay`, {
    token,
    query: {
      page_size: pageSize,
      page_token: pageToken,
      as_spectator: asSpectator ? "true" : "",
    },
  });
}

/** Every step of a replay, page after page. */
export async function replay(token, game, { asSpectator = false } = {}) {
  const steps = [];
  let pageToken = "";
  let finished = false;
  for (let pages = 0; pages < 100; pages += 1) {
    const page = await replayPage(token, game, { pageToken, asSpectator });
    steps.push(...(page.steps || []));
    finished = Boolean(page.finished);
    pageToken = page.nextPageToken || "";
    if (!pageToken) break;
  }
  return { steps, finished };
}

// ------------------------------------------------------------------ streams

/**
 * Follows a Server-Sent Events route: calls `onData(json)` for each message,
 * `onEnd()` once the stream says `end`, `onError(ApiError)` when it fails for
 * good. `url()` gives the URL of each connection (its `?access_token=`: a
 * stream token fetched again before each reconnection, or a spectator grant).
 * Returns a function that closes the stream.
 */
export function followEvents(url, { onData, onEnd, onError }) {
  let source = null;
  let closed = false;
  let failures = 0;
  const stop = () => {
    closed = true;
    if (source) source.close();
  };
  const open = async () => {
    let address;
    try {
      address = await url();
    } catch (error) {
      if (!closed) onError(error);
      return;
    }
    if (closed) return;
    source = new EventSource(address);
    source.onmessage = (message) => {
      failures = 0;
      let data;
      try {
        data = JSON.parse(message.data);
      } catch {
        return;
      }
      onData(data);
    };
    source.addEventListener("end", () => {
      stop();
      if (onEnd) onEnd();
    });
    source.addEventListener("error", (event) => {
      if (closed) return;
      // `event: error` from the gateway carries a google.rpc.Status: final.
      if (event.data) {
        let status = null;
        try {
          status = JSON.parse(event.data);
        } catch {
          status = null;
        }
        stop();
        onError(errorFromStatus(0, status));
        return;
      }
      // The connection dropped (or its token expired): reconnect, with a
      // fresh URL, a few times before giving up.
      source.close();
      failures += 1;
      if (failures > 5) {
        stop();
        onError(new ApiError(0, "STREAM_FAILED", "the event stream keeps failing"));
        return;
      }
      setTimeout(() => {
        if (!closed) open();
      }, 400 * failures);
    });
  };
  open();
  return stop;
}

/** WatchTicket over SSE, with a stream token from the player's token. */
export function watchTicket(token, name, handlers) {
  const path = `${resource(name, "tickets")}:watch`;
  const url = async () => {
    const access = (await streamToken(token)).token;
    return `${path}?access_token=${encodeURIComponent(access)}`;
  };
  return followEvents(url, handlers);
}

/**
 * WatchGame over SSE. `urlToken()` gives the token for the URL: a stream token
 * for a player, the grant itself for a spectator. Each message is a
 * WatchGameResponse {version, events, game}; each connection resumes after
 * `lastVersion()`, so nothing comes twice and nothing is missed.
 */
export function watchGame(game, urlToken, handlers, lastVersion = () => "0") {
  const path = `${resource(game, "games")}:watch`;
  const url = async () => {
    const access = await urlToken();
    const after = encodeURIComponent(lastVersion());
    return `${path}?access_token=${encodeURIComponent(access)}&after_version=${after}`;
  };
  return followEvents(url, handlers);
}

/**
 * The Play session over a WebSocket (GET /v1/games/{g}:play): the first frame
 * is the token, the second `open` (resuming after `afterVersion`), then one
 * PlayResponse arrives per version and `send(action, etag)` sends actions
 * with a fresh requestId. Handlers: onResponse(PlayResponse), onRefused
 * (ApiError, requestId), onEnd() (close 1000: the match is over),
 * onFail(ApiError, opened) when the socket fails (opened: a frame came first).
 */
export class PlaySession {
  constructor(game, token, handlers) {
    this.game = game;
    this.token = token;
    this.handlers = handlers;
    this.socket = null;
    this.opened = false;
    this.closed = false;
  }

  start(afterVersion = "0") {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const url = `${scheme}//${location.host}${resource(this.game, "games")}:play`;
    let socket;
    try {
      socket = new WebSocket(url);
    } catch (error) {
      this.handlers.onFail(new ApiError(0, "WEBSOCKET", error.message), false);
      return;
    }
    this.socket = socket;
    let failure = null;
    socket.onopen = () => {
      socket.send(JSON.stringify({ token: this.token }));
      socket.send(JSON.stringify({ open: { afterVersion: String(afterVersion) } }));
    };
    socket.onmessage = (message) => {
      let frame;
      try {
        frame = JSON.parse(message.data);
      } catch {
        return;
      }
      if (frame.error) {
        failure = errorFromStatus(frame.httpStatus || 0, frame.error);
        return;
      }
      this.opened = true;
      if (frame.refused) {
        const refused = frame.refused;
        this.handlers.onRefused(
          new ApiError(0, refused.reason, refused.message),
          frame.requestId || "",
        );
        return;
      }
      if (frame.repeated) return;
      this.handlers.onResponse(frame);
    };
    socket.onclose = (event) => {
      this.socket = null;
      if (this.closed) return;
      if (event.code === 1000) {
        this.closed = true;
        this.handlers.onEnd();
        return;
      }
      const error =
        failure || new ApiError(0, event.reason || "WEBSOCKET_CLOSED", `closed ${event.code}`);
      this.handlers.onFail(error, this.opened, event.code);
    };
  }

  /** Sends one action; its requestId (a UUID), so an answer can be matched. */
  send(action, etag) {
    const requestId = crypto.randomUUID();
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) {
      throw new ApiError(0, "WEBSOCKET_CLOSED", "the session is not open");
    }
    this.socket.send(JSON.stringify({ action: { action, etag: etag || "", requestId } }));
    return requestId;
  }

  get ready() {
    return Boolean(this.socket && this.socket.readyState === WebSocket.OPEN && this.opened);
  }

  close() {
    this.closed = true;
    if (this.socket) this.socket.close(1000);
  }
}

/** The rule sets the service offers: the RuleSet enum of /openapi.json. */
export async function ruleSets() {
  const fallback = [
    "RULE_SET_TRUC_Y_FLOU",
    "RULE_SET_FRENCH_TRUC",
    "RULE_SET_SACKSON_TRUC",
    "RULE_SET_PARTNERSHIP_TRUC",
    "RULE_SET_CATALAN_TRUC",
  ];
  try {
    const response = await fetch("/openapi.json", { cache: "no-store" });
    const document = await response.json();
    const schemas = (document.components && document.components.schemas) || {};
    const schema = schemas["truc.v1.RuleSet"];
    const names = (schema && schema.enum) || [];
    const offered = names.filter((name) => name !== "RULE_SET_UNSPECIFIED");
    return offered.length ? offered : fallback;
  } catch {
    return fallback;
  }
}

/** The player's guide (markdown text). */
export async function guide() {
  const response = await fetch("/app/guide.md", { cache: "no-store" });
  if (!response.ok) throw new ApiError(response.status, "GUIDE_NOT_FOUND", "no guide served");
  return response.text();
}
