// Raw HTTP exchanges for protocol checks, on undici rather than fetch, because a
// conformance tool must see what actually crossed the wire:
// - redirects are never followed (a 3xx is reported; the key never reaches another origin);
// - content-encoding is decoded explicitly (gzip, deflate, br are legal), anything else is reported;
// - bodies are capped (a huge body is cut off, never buffered whole);
// - one deadline covers headers plus the whole body or stream.
// HTTP-level trouble never throws: it comes back as `exchange.error`, so a test can
// turn it into a verdict that says what happened.
import { Client, request, type Dispatcher } from 'undici';
import diagnostics from 'node:diagnostics_channel';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { pipeline, Readable, Transform } from 'node:stream';
import { toCurl } from './curl.ts';
import { withExtraHeaders } from './extra-headers.ts';
import { createDispatcher, proxyFor } from './proxy.ts';
import { echoedSecretLabels, isCredentialHeader, maskAuthorization, redact, redactUrl } from '../run/redact.ts';
import { SseReader, type SseEvent, type SseProblem, type SseStats } from './sse-reader.ts';
import { DEFAULT_429_BUDGET, with429BackOff } from '../run/back-off.ts';
import type { Gate } from '../run/governor.ts';
import { retryDelayMs } from '../spec/retry-hints.ts';

// Re-exported: the 429 wait is read by lib/spec/retry-hints.ts, the one parser of retry hints.
export { retryDelayMs };

export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;
/**
 * Longest a pooled connection is kept idle, whatever Keep-Alive the server advertises.
 * A request that waited for the run's governor often finds its connection idle for
 * seconds; kept near the server's own timeout (Node's 5 s), a loaded machine reuses it
 * as the server closes it ("other side closed"), a failure of neither the target nor the
 * test. One second leaves seconds of margin; a new connection costs a handshake.
 */
export const POOLED_IDLE_MS = 1_000;
/** How long a stream may stay open after [DONE] before it counts as never closing. */
export const CLOSE_AFTER_DONE_MS = 5_000;
/** What a capped body keeps for the report, in characters. */
const HEAD_CHARS = 64 * 1024;

export type AuthSpec =
  | { key: string }              // Authorization: Bearer <key>
  | { header: string }           // Authorization: <header> verbatim (malformed-header tests)
  | 'none';

export interface RequestSpec {
  method: string;
  /** Path relative to the base URL (starts with '/'), or `{ root: '/v2/models' }` for a path from the origin. */
  path: string | { root: string };
  auth: AuthSpec;
  json?: unknown;
  /** Raw body text (invalid JSON tests); wins over `json`. */
  body?: string;
  headers?: Record<string, string>;
  /** Query parameters (AUTH-1 offers the key as ?api_key=); the URL shown in reports masks credential parameters. */
  query?: Record<string, string>;
  /**
   * Send the body with Transfer-Encoding: chunked (no Content-Length), in pieces, as clients
   * that stream their request bodies do (RFC 9112 §6.1: a server must accept it).
   */
  chunked?: boolean;
  /** Keep at most this much of this answer's body (default: the client's cap); a probe that judges statuses needs little. */
  maxBodyBytes?: number;
  /** Read the answer as a stream of server-sent events (the SDKs decide this from the request, so do we). */
  stream?: boolean;
  /** Wait and retry on 429 (Retry-After honoured). Default true; off for rate-limit and 429 checks. */
  retryOn429?: boolean;
  /**
   * Send on this dispatcher instead of the client's pool (SVC-8's one-connection probe).
   * Such a request is never re-sent after a reset: the probe judges exactly that.
   */
  connection?: Dispatcher;
  /**
   * The client goes away mid-answer (SVC-9's and SVC-10's probes): when `signal` aborts,
   * `afterMs` after the request went out (pacing waits not counted), or once a streamed
   * event passes `afterEvent`. The exchange ends with `cancelled`, no error.
   */
  cancel?: { signal?: AbortSignal; afterMs?: number; afterEvent?: (ev: SseEvent) => boolean };
}

export type TransportErrorKind =
  | 'timeout-headers' | 'timeout-body' | 'never-closed' | 'reset' | 'refused'
  | 'body-too-large' | 'bad-encoding' | 'other';

export interface StreamCapture {
  /** `read`: which read off the socket delivered the event (EV-13 counts them). */
  events: Array<SseEvent & { atMs: number; read?: number }>;
  problems: SseProblem[];
  stats: SseStats;
  /** Index in `events` of the [DONE] payload, if any. */
  doneIndex?: number;
  /** True when the response ended (the server closed it). */
  closed: boolean;
}

export interface Exchange {
  seq: number;
  request: { method: string; url: string; headers: Record<string, string>; body?: string };
  status?: number;
  headers: Record<string, string>;
  /** Media type of Content-Type, lower-cased, without parameters. */
  mediaType?: string;
  /** Decoded body text (streams: all of it, both capped at maxBodyBytes). */
  text?: string;
  json?: unknown;
  jsonError?: string;
  stream?: StreamCapture;
  error?: { kind: TransportErrorKind; message: string };
  ttfbMs?: number;
  durationMs: number;
  wireBytes: number;
  retries: Array<{ status: number; waitedMs: number }>;
  /** Time the request waited for the run's governor and advised 429 waits (not part of durationMs). */
  throttleWaitMs?: number;
  /** The answer is a 429 that outlasted the request's back-off budget: no verdict may rest on it. */
  throttledOut?: boolean;
  /** Names of known secrets seen in the response headers or body (AUTH-9). */
  keyEchoes: string[];
  curl: string;
  /** The request went out on a connection that had already carried a response (undefined: not known). */
  reusedConnection?: boolean;
  /** That connection: reused or new, idle since its previous response, and the Keep-Alive timeout that response advertised. */
  connection?: { reused: boolean; idleMs?: number; keepAliveTimeoutMs?: number };
  /**
   * The first attempt went out on a reused connection and failed before any byte of
   * response (the server had closed it): this exchange is the one re-send, on a new
   * connection. Evidence for SVC-8 (lib/spec/rules/connection-reuse.ts); the clause under test is judged on this answer.
   */
  reuseRetry?: ReuseRetry;
  /** The request's `cancel` fired: the client went away on purpose. */
  cancelled?: boolean;
}

export interface ReuseRetry {
  /** What the first attempt met (e.g. "connection reset before any response"). */
  error: string;
  /** seq of the failed first attempt (not logged: it got no answer). */
  firstSeq: number;
  /** How long the reused connection had been idle since its previous response. */
  idleMs?: number;
  /** The Keep-Alive timeout that previous response advertised. */
  keepAliveTimeoutMs?: number;
}

export interface ClientOptions {
  baseUrl: string;
  timeoutMs: number;
  maxBodyBytes?: number;
  /** Called once with every exchange send() made: each 429 it waited out, then the answer it returns. */
  onExchange?: (ex: Exchange) => void;
  /** Retry budget for 429s (lib/run/back-off.ts: at most 5 retries and 60 s of waiting per request). */
  retry429?: { maxRetries: number; maxTotalWaitMs: number };
  /** The run's governor (lib/run/governor.ts): every request that may be retried on 429 waits for its turn. */
  gate?: Gate;
}

let seqCounter = 0;

// Which of our requests went out on a connection that had already carried one, and
// how long that connection had been idle (undici's diagnostics channels: the request
// object, then the socket it is written on).
let tagging: number | undefined;
const seqOfRequest = new WeakMap<object, number>();
interface SocketUse { uses: number; lastEndAt?: number; keepAliveMs?: number }
const socketUse = new WeakMap<object, SocketUse>();
const sentOn = new Map<number, { socket: object; reused: boolean; idleMs?: number; keepAliveMs?: number }>();
diagnostics.subscribe('undici:request:create', (msg) => {
  if (tagging !== undefined) seqOfRequest.set((msg as { request: object }).request, tagging);
});
diagnostics.subscribe('undici:client:sendHeaders', (msg) => {
  const { request: req, socket } = msg as { request: object; socket: object };
  const use = socketUse.get(socket) ?? { uses: 0 };
  socketUse.set(socket, use);
  const seq = seqOfRequest.get(req);
  if (seq !== undefined) {
    sentOn.set(seq, {
      socket, reused: use.uses > 0, keepAliveMs: use.keepAliveMs,
      idleMs: use.lastEndAt === undefined ? undefined : Math.round(performance.now() - use.lastEndAt),
    });
  }
  use.uses++;
});

/** Keep-Alive: timeout=N (seconds) of a response, in ms. */
function keepAliveTimeoutMs(headers: Record<string, string>): number | undefined {
  const m = /(?:^|[,;\s])timeout=(\d+)/i.exec(headers['keep-alive'] ?? '');
  return m ? Number(m[1]) * 1000 : undefined;
}

export class HttpClient {
  readonly base: URL;
  private readonly dispatcher: Dispatcher;
  constructor(readonly options: ClientOptions) {
    this.base = new URL(options.baseUrl.replace(/\/+$/, '') + '/');
    this.dispatcher = this.newDispatcher();
  }

  async close(): Promise<void> {
    await this.dispatcher.destroy();
  }

  urlFor(path: RequestSpec['path'], query?: Record<string, string>): string {
    const url = typeof path === 'string'
      ? new URL(this.base.pathname.replace(/\/$/, '') + path, this.base.origin)
      : new URL(path.root, this.base.origin);
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.append(k, v);
    // Credentials only ever go to the configured origin.
    if (url.origin !== this.base.origin) throw new Error(`refusing to send a request to another origin: ${url.origin}`);
    return url.toString();
  }

  async send(spec: RequestSpec): Promise<Exchange> {
    const ex = await with429BackOff(
      async (retries) => {
        const ex = await this.onceOrAgain(spec);
        ex.retries = retries;
        return ex;
      },
      (ex) => ({ status: ex.status, headers: ex.headers }),
      {
        budget: this.options.retry429 ?? DEFAULT_429_BUDGET,
        enabled: spec.retryOn429 !== false,
        // SVC-8's one-connection probe counts its connections: it is not paced.
        gate: spec.connection ? undefined : this.options.gate,
        onRetry: (ex) => this.options.onExchange?.(ex), // the throttled answer is still an answer the run saw
        onDone: (ex, account) => {
          if (account.waitedMs > 0) ex.throttleWaitMs = account.waitedMs;
          if (account.throttledOut) ex.throttledOut = true;
        },
      },
    );
    this.options.onExchange?.(ex);
    return ex;
  }

  /**
   * One exchange; when it failed on a reused connection before any byte of response
   * (the server closed a keep-alive connection as we sent), sends it once more on a new
   * connection, as the pooling clients do, and records that on the exchange.
   */
  private async onceOrAgain(spec: RequestSpec): Promise<Exchange> {
    const ex = await this.once(spec, spec.connection ?? this.dispatcher);
    if (spec.connection || ex.status !== undefined || ex.error?.kind !== 'reset' || ex.reusedConnection !== true || ex.wireBytes > 0) return ex;
    const fresh = this.newDispatcher();
    try {
      const again = await this.once(spec, fresh);
      again.reuseRetry = {
        error: ex.error.message, firstSeq: ex.seq,
        idleMs: ex.connection?.idleMs, keepAliveTimeoutMs: ex.connection?.keepAliveTimeoutMs,
      };
      return again;
    } finally {
      await fresh.destroy().catch(() => {});
    }
  }

  /**
   * A dispatcher with this client's settings (connections to the target's origin only):
   * a plain Agent, or undici's ProxyAgent when HTTPS_PROXY/HTTP_PROXY apply (lib/http/proxy.ts).
   */
  newDispatcher(): Dispatcher {
    return createDispatcher(this.base, {
      // Our own deadline (AbortSignal) covers headers and body together; these are backstops.
      headersTimeout: this.options.timeoutMs + 1_000,
      bodyTimeout: this.options.timeoutMs + 1_000,
      connect: { timeout: Math.min(this.options.timeoutMs, 10_000) },
      keepAliveTimeout: POOLED_IDLE_MS,
      keepAliveMaxTimeout: POOLED_IDLE_MS,
    });
  }

  /** Requests to the target go through a forward proxy (HTTPS_PROXY/HTTP_PROXY, not bypassed by NO_PROXY). */
  get viaProxy(): boolean {
    return proxyFor(this.base) !== undefined;
  }

  /** One connection to the target's origin, with this client's settings: SVC-8 counts its connects and disconnects. */
  singleConnection(): Client {
    return new Client(this.base.origin, {
      headersTimeout: this.options.timeoutMs + 1_000,
      bodyTimeout: this.options.timeoutMs + 1_000,
      connect: { timeout: Math.min(this.options.timeoutMs, 10_000) },
      keepAliveTimeout: 30_000,
      // undici would itself drop a connection whose advertised Keep-Alive timeout is under
      // 2 s; the probe sends at once, so it keeps the connection as long as the server says.
      keepAliveTimeoutThreshold: 100,
      pipelining: 1,
    });
  }

  private async once(spec: RequestSpec, dispatcher: Dispatcher): Promise<Exchange> {
    const url = this.urlFor(spec.path, spec.query);
    const headers: Record<string, string> = {
      accept: spec.stream ? 'text/event-stream' : 'application/json',
      'accept-encoding': 'gzip, deflate, br',
      'user-agent': 'chatgate',
      // HEADERS of the run; a header the probe sets itself wins.
      ...withExtraHeaders(spec.headers ?? {}),
    };
    if (spec.auth !== 'none') headers.authorization = 'key' in spec.auth ? `Bearer ${spec.auth.key}` : spec.auth.header;
    let body: string | undefined = spec.body;
    if (body === undefined && spec.json !== undefined) body = JSON.stringify(spec.json);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    const ex: Exchange = {
      seq: ++seqCounter,
      request: { method: spec.method, url: redactUrl(url), headers: redactHeaders(headers), body: body === undefined ? undefined : redact(body) },
      headers: {},
      durationMs: 0,
      wireBytes: 0,
      retries: [],
      keyEchoes: [],
      curl: toCurl({ method: spec.method, url, headers: spec.chunked && body !== undefined ? { ...headers, 'transfer-encoding': 'chunked' } : headers, body, stream: spec.stream }),
    };
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    const abort = new AbortController();
    let phase: 'headers' | 'body' | 'after-done' = 'headers';
    const deadline = setTimeout(() => abort.abort(), this.options.timeoutMs);
    let closeAfterDone: NodeJS.Timeout | undefined;
    const cap = spec.maxBodyBytes ?? this.options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    const pieces: string[] = [];
    let textBytes = 0;
    let reads = 0;
    const goAway = () => { ex.cancelled = true; abort.abort(); };
    if (spec.cancel?.signal?.aborted) goAway();
    else spec.cancel?.signal?.addEventListener('abort', goAway, { once: true });
    const cancelTimer = spec.cancel?.afterMs === undefined ? undefined : setTimeout(goAway, spec.cancel.afterMs);
    try {
      // undici creates its request object synchronously inside request(): tag it with
      // our seq so the socket it is written on can tell whether it was reused.
      tagging = ex.seq;
      let pending: ReturnType<typeof request>;
      try {
        pending = request(url, {
          method: spec.method as Dispatcher.HttpMethod,
          headers,
          // An iterable body has no length: undici frames it with chunked transfer coding.
          body: spec.chunked && body !== undefined ? Readable.from(bodyPieces(body)) : body,
          dispatcher,
          signal: abort.signal,
        });
      } finally {
        tagging = undefined;
      }
      const res = await pending;
      phase = 'body';
      // After an abort (cap, deadline) undici may emit the abort error once more, when
      // nothing listens any longer; it is already accounted for in ex.error.
      res.body.on('error', () => {});
      ex.ttfbMs = ms();
      ex.status = res.statusCode;
      ex.headers = flattenHeaders(res.headers);
      ex.mediaType = ex.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
      const encoding = (ex.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
      const decoder = decompressorFor(encoding);
      if (decoder === null) {
        res.body.destroy();
        ex.error = { kind: 'bad-encoding', message: `unsupported Content-Encoding "${encoding}"` };
        return ex;
      }
      const asStream = spec.stream === true && ex.status < 400;
      const reader = asStream ? new SseReader() : undefined;
      const capture: StreamCapture | undefined = reader
        ? { events: [], problems: reader.problems, stats: reader.stats, closed: false }
        : undefined;
      ex.stream = capture;
      const utf8 = new TextDecoder('utf-8');
      // Count bytes as they come off the wire, before decoding (the cap applies to both).
      const counter = new Transform({ transform(chunk: Buffer, _enc, done) { ex.wireBytes += chunk.length; done(null, chunk); } });
      const stages: NodeJS.ReadWriteStream[] = decoder ? [counter, decoder] : [counter];
      const source = (pipeline as (...s: unknown[]) => Readable)(res.body, ...stages, () => { /* errors surface in the loop */ });
      for await (const chunk of source as AsyncIterable<Buffer>) {
        textBytes += chunk.length;
        if (textBytes > cap || ex.wireBytes > cap) {
          abort.abort();
          ex.error = { kind: 'body-too-large', message: `body exceeded ${formatBytes(cap)} (cut off after ${formatBytes(Math.max(textBytes, ex.wireBytes))})` };
          // Keep only the start for the report: memory stays bounded by the cap, not by the
          // body. Built from the first pieces, not by slicing the joined text: a slice of a
          // string keeps the whole string alive in V8, so each capped exchange the run keeps
          // would hold the cap's worth of text.
          let head = '';
          for (const p of pieces) {
            if (head.length >= HEAD_CHARS) break;
            head += p.slice(0, HEAD_CHARS - head.length);
          }
          pieces.length = 0;
          pieces.push(head);
          break;
        }
        pieces.push(utf8.decode(chunk, { stream: true }));
        reads++;
        if (reader && capture) {
          for (const ev of reader.push(chunk)) {
            capture.events.push({ ...ev, atMs: ms(), read: reads });
            if (spec.cancel?.afterEvent?.(ev)) goAway();
            if (capture.doneIndex === undefined && ev.data.trim() === '[DONE]') {
              capture.doneIndex = capture.events.length - 1;
              phase = 'after-done';
              // Clients read to EOF after [DONE]: a response that stays open hangs them.
              closeAfterDone = setTimeout(() => abort.abort(), CLOSE_AFTER_DONE_MS);
            }
          }
        }
      }
      if (!ex.error) {
        pieces.push(utf8.decode());
        if (reader && capture) { reader.end(); capture.closed = true; }
      }
    } catch (err) {
      if (!ex.cancelled) ex.error = ex.error ?? describeFailure(err, phase, abort.signal.aborted, this.options.timeoutMs, ex);
    } finally {
      clearTimeout(deadline);
      clearTimeout(closeAfterDone);
      spec.cancel?.signal?.removeEventListener('abort', goAway);
      clearTimeout(cancelTimer);
      ex.durationMs = ms();
      const on = sentOn.get(ex.seq);
      sentOn.delete(ex.seq);
      if (on) {
        ex.reusedConnection = on.reused;
        ex.connection = { reused: on.reused, idleMs: on.idleMs, keepAliveTimeoutMs: on.keepAliveMs };
        const use = socketUse.get(on.socket);
        if (use) { use.lastEndAt = performance.now(); use.keepAliveMs = keepAliveTimeoutMs(ex.headers); }
      }
    }
    ex.text = pieces.join('');
    if (ex.mediaType && /json/.test(ex.mediaType) || (!spec.stream && ex.text.trim().startsWith('{'))) {
      try { ex.json = JSON.parse(ex.text); } catch (e) { ex.jsonError = (e as Error).message; }
    }
    ex.keyEchoes = echoedSecretLabels(ex.headers, ex.text ?? '', { url, authorization: headers.authorization });
    return ex;
  }
}

/** A body in a few pieces of at most 64 KiB (chunked requests). */
function* bodyPieces(body: string): Generator<Buffer> {
  const bytes = Buffer.from(body, 'utf8');
  const size = Math.min(64 * 1024, Math.max(1, Math.ceil(bytes.length / 3)));
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

function describeFailure(err: unknown, phase: string, aborted: boolean, timeoutMs: number, ex: Exchange): Exchange['error'] {
  const code = (err as { code?: string }).code ?? '';
  if (aborted) {
    if (phase === 'headers') return { kind: 'timeout-headers', message: `no response headers within ${timeoutMs} ms` };
    if (phase === 'after-done') return { kind: 'never-closed', message: `response not closed within ${CLOSE_AFTER_DONE_MS} ms after [DONE]` };
    const events = ex.stream ? `, ${ex.stream.events.length} events` : '';
    return { kind: 'timeout-body', message: `body not complete within ${timeoutMs} ms (${formatBytes(ex.wireBytes)} received${events})` };
  }
  if (code === 'ECONNREFUSED') return { kind: 'refused', message: 'connection refused' };
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') {
    return { kind: 'reset', message: phase === 'headers' ? 'connection reset before any response' : 'connection reset during the body' };
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return { kind: 'timeout-headers', message: `no response headers within ${timeoutMs} ms` };
  if (code === 'UND_ERR_BODY_TIMEOUT') return { kind: 'timeout-body', message: `body stalled for ${timeoutMs} ms` };
  if (code.startsWith('Z_') || /incorrect header check|unexpected end of file/i.test(String(err))) {
    return { kind: 'bad-encoding', message: `body does not decode as its Content-Encoding says: ${(err as Error).message}` };
  }
  return { kind: 'other', message: redact(`${code ? code + ': ' : ''}${(err as Error)?.message ?? String(err)}`) };
}

function decompressorFor(encoding: string): Transform | undefined | null {
  switch (encoding) {
    case 'identity': case '': return undefined;
    case 'gzip': case 'x-gzip': return createGunzip();
    case 'deflate': return createInflate();
    case 'br': return createBrotliDecompress();
    default: return null;
  }
}

function flattenHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function redactHeaders(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    out[k] = k.toLowerCase() === 'authorization' ? maskAuthorization(v) : isCredentialHeader(k) ? '***' : redact(v);
  }
  return out;
}

export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(n % (1024 * 1024) === 0 ? 0 : 1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}
