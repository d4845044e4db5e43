// The embedded reference server: a complete implementation of the hosted LM API on
// node:http (byte-level control of the wire for defects and variants), listening on
// 127.0.0.1 only. This module owns start/close and the order every request goes
// through: authentication, overload, rate limit, then routing.
import http from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { resolveOptions, type ReferenceOptions } from './options.ts';
import { createKeyRing } from './keys.ts';
import { createBrain } from './brains.ts';
import { createLimiter, hintStyle, rateLimitHeaders } from './rate-limit.ts';
import type { ServerState } from './state.ts';
import { ClientGone, RequestContext, sendBody, sendEmpty } from './request-context.ts';
import { ApiError, overloaded, serverError, writeError } from './errors.ts';
import { authenticate } from './auth.ts';
import { matchRoute, type RouteMatch } from './routes.ts';
import { handleBrainChat, handleChatCompletions } from './chat.ts';
import { handleListModels, handleRetrieveModel, SERVICE_MODELS } from './models.ts';
import { handleUnavailable } from './unavailable.ts';
import { startEngine } from './engine-runtime.ts';
import { startEngineControl } from './engine-changes.ts';
import { goesAway } from './goes-away.ts';
import { limitAsStreamEvent } from './limit-stream.ts';
import { routedPath } from './route-spelling.ts';

export type { ReferenceOptions, LatencyOptions, RateWindow, ReceivedRequest } from './options.ts';
export { referenceOptionsFromEnv } from './options.ts';

export interface ReferenceServer {
  /** http://127.0.0.1:PORT/v1 */
  url: string;
  keys: { main: string; limited: string; rateLimit: string };
  brainId: string;
  models: string[];
  close(): Promise<void>;
  stats(): { requests: number; inFlight: number };
  /** With the engine model: its control port (run-time changes, reference/engine-changes.ts), outside the API. */
  controlUrl?: string;
}

export async function startReferenceServer(opts: ReferenceOptions = {}): Promise<ReferenceServer> {
  const resolved = resolveOptions(opts);
  const state: ServerState = {
    opts: resolved,
    keys: createKeyRing(resolved.rateLimit),
    brain: createBrain(),
    // Stryker disable next-line ObjectLiteral,ConditionalExpression,EqualityOperator,StringLiteral: [gate] ratelimit-never-recovers; killed: suite
    limiter: createLimiter({ neverRecover: resolved.defect === 'ratelimit-never-recovers', account: resolved.rateLimit.account, bucket: resolved.rateLimit.bucket }),
    counters: { requests: 0, inFlight: 0, chatRequests: 0, jsonCompletions: 0, streams: 0 },
    live: new Set(),
    shuttingDown: false,
  };
  // Stryker disable next-line all: [unreached]
  if (resolved.engine) state.engine = await startEngine(resolved.engine);

  const sockets = new Set<Socket>();
  const record = opts.onRequest;
  const server = http.createServer((req, res) => {
    // Stryker disable next-line all: [not-api] onRequest
    record?.({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers } });
    if (resolved.defect === 'target-dies-mid-run' && goesAway(state.counters.requests + 1, server, sockets)) return;
    onRequest(state, req, res);
  });
  // keep-alive-timeout (legal): node advertises "Keep-Alive: timeout=1" and closes idle connections after it.
  if (resolved.variants.has('keep-alive-timeout')) server.keepAliveTimeout = 1000;
  // Stryker disable next-line BlockStatement,StringLiteral: [not-api] close()
  server.on('connection', (socket) => {
    // Small SSE writes must leave at once (split-writes, latency measurements).
    // Stryker disable next-line BooleanLiteral: [not-api] Nagle
    socket.setNoDelay(true);
    sockets.add(socket);
    // Stryker disable next-line StringLiteral,ArrowFunction: [not-api] close()
    socket.once('close', () => sockets.delete(socket));
  });
  // Stryker disable all: [not-sent] bad HTTP
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });
  // Stryker restore all

  await new Promise<void>((resolve, reject) => {
    // Stryker disable next-line StringLiteral: [not-api] listen
    server.once('error', reject);
    // Stryker disable next-line ObjectLiteral,StringLiteral: [not-api] listen
    server.listen({ port: resolved.port, host: '127.0.0.1', backlog: 2048 }, () => {
      // Stryker disable next-line StringLiteral: [not-api] listen
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  // Stryker disable next-line all: [unreached] rehearsal control
  const control = state.engine ? await startEngineControl(state, { server, sockets, port }) : undefined;

  let closing: Promise<void> | undefined;
  // Stryker disable all: [not-api] close()
  const close = (): Promise<void> =>
    (closing ??= new Promise<void>((resolve) => {
      // Ends every delay and hanging stream, then kills the sockets: never waits on a client.
      state.shuttingDown = true;
      for (const abort of [...state.live]) abort();
      state.engine?.model.close();
      void control?.close();
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
    }));
  // Stryker restore all

  return {
    url: `http://127.0.0.1:${port}/v1`,
    keys: { main: state.keys.main.value, limited: state.keys.limited.value, rateLimit: state.keys.rateLimit.value },
    brainId: state.brain.id,
    // Stryker disable next-line ArrayDeclaration: [not-api] banner
    models: [...SERVICE_MODELS],
    close,
    stats: () => ({ requests: state.counters.requests, inFlight: state.counters.inFlight }),
    ...(control ? { controlUrl: control.url } : {}),
  };
}

function onRequest(state: ServerState, req: http.IncomingMessage, res: http.ServerResponse): void {
  // Stryker disable next-line UpdateOperator: [not-api] stats
  state.counters.requests++;
  // Stryker disable next-line UpdateOperator: [overload] overload count
  state.counters.inFlight++;
  // Stryker disable next-line StringLiteral,ArrowFunction,UpdateOperator: [overload] overload count
  res.once('close', () => state.counters.inFlight--);
  const ctx = new RequestContext(req, res, state);
  // Stryker disable next-line ArrowFunction: [unreached] write error
  const destroy = () => res.destroy();
  handle(ctx)
    .catch((err: unknown) => {
      // Stryker disable next-line ConditionalExpression,LogicalOperator: [equiv] client gone
      if (err instanceof ClientGone || ctx.aborted) return;
      if (err instanceof ApiError) return writeError(ctx, err);
      // A bug in the reference itself: still an error body, and loud on stderr.
      // Stryker disable next-line StringLiteral: [not-api] stderr
      console.error('[reference] internal error:', err);
      // Stryker disable next-line StringLiteral: [no-500] ERR-2
      return writeError(ctx, serverError('Internal error in the reference server.'));
    })
    .catch(destroy);
}

async function handle(ctx: RequestContext): Promise<void> {
  // Outside the base URL (/v1) the spec asks nothing; a plain-text 404 there is legal.
  if (ctx.variant('outside-base-plain-404') && ctx.path !== '/v1' && !ctx.path.startsWith('/v1/')) {
    return sendBody(ctx, 404, 'text/plain', 'Not Found');
  }
  // route-unanchored: a brain or model route's path anywhere in the path is that route.
  // route-trailing-slash: one trailing slash after a route's path is the route.
  const path = ctx.defect('route-unanchored') ? (/\/v1\/(?:brains\/[^/]+\/chat|models\/[^/]+)(?=\/|$)/.exec(ctx.path)?.[0] ?? ctx.path)
    : ctx.variant('route-trailing-slash') && /^\/v1\/.+\/$/.test(ctx.path) ? ctx.path.slice(0, -1) : ctx.path;
  const match = matchRoute(routedPath(ctx, path), ctx.defect('brain-route-missing'));

  // auth-after-validation: the defect checks the request before the caller.
  if (ctx.defect('auth-after-validation') && (await validateBeforeAuth(ctx, match))) return;
  // The streaming-path defects: a stream: true request goes through other code before the key.
  const streamAuth = ctx.defect('stream-auth-near-miss-accepted') || ctx.defect('stream-validated-before-auth');
  const streaming = streamAuth && (await asksForStream(ctx, match));
  if (streaming && ctx.defect('stream-validated-before-auth') && (await validateBeforeAuth(ctx, match))) return;

  const auth = authenticate(ctx, streaming);
  if (!auth.ok) {
    if (ctx.defect('auth-401-as-event-stream') && (await asksForStream(ctx, match))) auth.error.withForm('sse');
    // stream-401-plain-text: the streaming path refuses with a text/plain "Unauthorized".
    // Stryker disable next-line all: [unreached] stream-401-plain-text AUTH-5
    if (ctx.defect('stream-401-plain-text') && (await asksForStream(ctx, match))) auth.error.withForm('text');
    throw auth.error;
  }
  ctx.key = auth.key;
  // A target that misbehaves toward client libraries only.
  if (ctx.defect('client-libraries-500') && ctx.fromClientLibrary()) throw serverError('Internal error.');

  const { state } = ctx;
  // Stryker disable next-line BlockStatement,ConditionalExpression,EqualityOperator: [overload] ERR-4; killed: suite
  if (state.counters.inFlight > state.opts.overloadInFlight) {
    if (ctx.defect('overload-500')) throw serverError('Internal error: too many requests in flight.');
    throw ctx.defect('overload-503-no-body') ? overloaded().withForm('empty') : overloaded();
  }

  // no-rate-limit: no budget is drawn and none advertised.
  if (ctx.variant('no-rate-limit')) { await dispatch(ctx, match); return; }
  const decision = state.limiter.take(auth.key);
  const noHeaders = ctx.defect('ratelimit-no-retry-after');
  // Stryker disable next-line BlockStatement: [no-throttle] LIM-1
  if (!decision.allowed) {
    if (ctx.defect('ratelimit-drops-connection')) {
      ctx.req.socket.destroy();
      return;
    }
    if (ctx.defect('ratelimit-as-500')) throw serverError('Internal error.');
    // Stryker disable next-line all: [gate] ratelimit-stream-200-error LIM-1 EV-3
    if (ctx.defect('ratelimit-stream-200-error') && (await asksForStream(ctx, match))) return sendBody(ctx, 200, 'text/event-stream', limitAsStreamEvent());
    const err = new ApiError(
      429,
      'rate_limit_error',
      'rate_limit_exceeded',
      // Stryker disable all: [msg-free] ERR-3
      decision.scope === 'account'
        ? `Rate limit reached for this account (all its keys): ${decision.limit} requests per ${state.opts.rateLimit.account?.windowMs} ms. Retry after the advertised wait.`
        : state.opts.rateLimit.bucket && auth.key.name !== 'rateLimit'
          ? `Rate limit reached for this API key: bursts of ${decision.limit} requests, ${state.opts.rateLimit.bucket.refillPerSecond} per second after them. Retry after the advertised wait.`
          : `Rate limit reached for this API key: ${decision.limit} requests per ${auth.key.limit.windowMs} ms. Retry after the advertised wait.`,
      // Stryker restore all
      null,
      noHeaders ? {} : rateLimitHeaders(decision, hintStyle(ctx)),
    );
    if (ctx.defect('ratelimit-429-plain-text')) err.withForm('text');
    if (ctx.defect('ratelimit-429-no-body')) err.withForm('empty');
    throw err;
  }
  if (!noHeaders) Object.assign(ctx.extraHeaders, rateLimitHeaders(decision, hintStyle(ctx)));

  await dispatch(ctx, match);
}

async function dispatch(ctx: RequestContext, { route, methods }: RouteMatch): Promise<void> {
  if (route.kind === 'unknown' || route.kind === 'unavailable') {
    return handleUnavailable(ctx, route.kind === 'unknown' ? 'unknown' : route.what);
  }
  // Stryker disable next-line BlockStatement,ConditionalExpression: [not-sent] method
  if (!methods.includes(ctx.method)) {
    // Stryker disable all: [not-sent] method
    const allow = [...methods, 'OPTIONS'].join(', ');
    // An authenticated OPTIONS just learns the methods; browsers' preflights never get here (no key).
    if (ctx.method === 'OPTIONS') return sendEmpty(ctx, 204, { Allow: allow });
    throw new ApiError(405, 'invalid_request_error', 'method_not_allowed', `Method ${ctx.method} is not allowed on ${ctx.path}; use ${methods.join(' or ')}.`, null, { Allow: allow });
    // Stryker restore all
  }
  switch (route.kind) {
    case 'models':
      return handleListModels(ctx);
    // Stryker disable next-line ConditionalExpression: [not-sent] GET /models/{id}
    case 'model':
      return handleRetrieveModel(ctx, route.id);
    case 'chat':
      return handleChatCompletions(ctx);
    case 'brain-chat':
      return handleBrainChat(ctx, route.id);
  }
}

/** auth-after-validation: answers 404s and request errors before looking at the key. */
// Stryker disable all: [gate] auth-after-validation stream-validated-before-auth +2 AUTH-4
async function validateBeforeAuth(ctx: RequestContext, { route, methods }: RouteMatch): Promise<boolean> {
  if (route.kind === 'unknown' || route.kind === 'unavailable') {
    await handleUnavailable(ctx, route.kind === 'unknown' ? 'unknown' : route.what);
    return true;
  }
  if (!methods.includes(ctx.method)) return false;
  if (route.kind === 'chat') await handleChatCompletions(ctx, 'prevalidate');
  if (route.kind === 'brain-chat') await handleBrainChat(ctx, route.id, 'prevalidate');
  return false;
}

/** auth-401-as-event-stream and the streaming-path defects: whether the (unauthenticated) request body asked for a stream. */
async function asksForStream(ctx: RequestContext, { route }: RouteMatch): Promise<boolean> {
  if (route.kind !== 'chat' && route.kind !== 'brain-chat') return false;
  try {
    const body = JSON.parse((await ctx.body()).toString('utf8')) as { stream?: unknown } | null;
    return body?.stream === true;
  } catch {
    return false;
  }
}
// Stryker restore all
