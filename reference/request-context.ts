// One request in flight: the raw req/res, who is calling, and an abort signal that
// fires when the client goes away (or the server closes) so that streams and delays
// stop doing work nobody will read; and how its complete (non-stream) responses are
// written. Every body goes through sendBody so that the wire-level variants (charset,
// gzip, chunked, connection-close) and the header defects apply to all of them in one
// place. Error bodies (errors.ts) are built on these.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { DefectName } from './defects.ts';
import type { VariantName } from './variants.ts';
import type { KeyRecord } from './keys.ts';
import { hasDefect, hasVariant, type ServerState } from './state.ts';
import { ApiError } from './api-error.ts';

export const MAX_BODY_BYTES = 1024 * 1024;

/** Thrown when the client disconnects mid-body; the request is dropped silently. */
export class ClientGone extends Error {
  constructor() {
    // Stryker disable next-line StringLiteral: equivalent, the error is dropped silently (nothing is sent to a client that left)
    super('client disconnected');
  }
}

export class RequestContext {
  readonly method: string;
  readonly path: string;
  /** The authenticated key (undefined until authentication passed). */
  key: KeyRecord | undefined;
  /** Headers added to every response of this request (rate-limit figures). */
  readonly extraHeaders: Record<string, string> = {};
  readonly signal: AbortSignal;
  private readonly abort = new AbortController();
  private bodyPromise: Promise<Buffer> | undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly state: ServerState,
  ) {
    // Stryker disable next-line StringLiteral: not reached, node:http always sets the method of a request it parsed
    this.method = (req.method ?? 'GET').toUpperCase();
    // Stryker disable next-line StringLiteral: not reached, node:http always sets the url of a request it parsed
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    // Stryker disable next-line MethodExpression,ConditionalExpression: legal, what a server does with a query string is not shown (no suite request, nor the OpenAI-style clients' calls the spec names, sends one): the path kept whole (true, or raw for the slice); false (the path's last character cut off) was killed (run of 2026-11-24) before this line was disabled
    this.path = q === -1 ? raw : raw.slice(0, q);
    this.signal = this.abort.signal;
    // close() aborts every live request; a request leaves the set when its response closes.
    // Stryker disable all: equivalent in the mutation run, the signal only stops delays and hanging streams, and there every delay is 0, no stream hangs and the server is never shut down (the reference-server self-tests check that a stream stops when its client leaves and that close() returns promptly); shuttingDown taken as true (every request aborted) was killed (run of 2026-11-24) before this was disabled
    const abort = () => this.abort.abort();
    if (state.shuttingDown) abort();
    state.live.add(abort);
    res.once('close', () => {
      state.live.delete(abort);
      if (!res.writableFinished) abort();
    });
    // Stryker restore all
  }

  get aborted(): boolean {
    return this.signal.aborted;
  }

  defect(name: DefectName): boolean {
    return hasDefect(this.state, name);
  }

  variant(name: VariantName): boolean {
    return hasVariant(this.state, name);
  }

  /**
   * Whether the request comes from an OpenAI-style client library (the x-stainless-*
   * headers openai-node and LangChain send, or their user agents): for the defects that
   * misbehave toward client libraries only (client-libraries-500, key-echoed-to-clients).
   */
  // Stryker disable all: not reached, only the client-libraries-500 and key-echoed-to-clients defects ask (their self-tests fail SVC-4, AUTH-9)
  fromClientLibrary(): boolean {
    const h = this.req.headers;
    return Object.keys(h).some((k) => k.startsWith('x-stainless-')) || /OpenAI\/JS|ai-sdk|langchain/i.test(String(h['user-agent'] ?? ''));
  }

  // Stryker restore all

  /** The credential exactly as presented after the scheme (for the key-echo defects only). */
  // Stryker disable all: not reached, only the key-echoed-in-header and key-echoed-to-clients defects ask (their self-tests fail AUTH-9)
  presentedCredential(): string | undefined {
    const h = this.req.headers.authorization;
    if (!h) return undefined;
    const parts = h.trim().split(/\s+/);
    return parts[parts.length - 1] || undefined;
  }

  // Stryker restore all

  // Stryker disable all: not reached, only the gzip variant asks (its self-test runs it, the reference-server self-test checks Accept-Encoding)
  acceptsGzip(): boolean {
    const ae = this.req.headers['accept-encoding'];
    if (!ae) return false;
    for (const part of ae.split(',')) {
      const [coding, ...params] = part.trim().split(';').map((s) => s.trim());
      if (coding?.toLowerCase() !== 'gzip' && coding !== '*') continue;
      const q = params.find((p) => p.toLowerCase().startsWith('q='));
      if (q && Number(q.slice(2)) === 0) continue;
      return true;
    }
    return false;
  }

  // Stryker restore all

  /** The largest request body served: 1 MiB; the body-limit variants move it (both legal). */
  maxBodyBytes(): number {
    // Stryker disable next-line all: legal, a body limit is not shown (the large-bodies-served and body-limit-64k variants move it)
    if (this.variant('large-bodies-served')) return 64 * 1024 * 1024;
    // Stryker disable next-line all: legal, a body limit is not shown (the large-bodies-served and body-limit-64k variants move it)
    if (this.variant('body-limit-64k')) return 64 * 1024;
    return MAX_BODY_BYTES;
  }

  /** Reads the whole body once (memoised), refusing more than maxBodyBytes() with 413. */
  body(): Promise<Buffer> {
    this.bodyPromise ??= new Promise<Buffer>((resolve, reject) => {
      // chunked-body-refused: a body sent with chunked transfer coding (RFC 9112 §6.1 requires accepting it) is refused.
      // Stryker disable next-line ConditionalExpression,LogicalOperator,Regex,StringLiteral: not reached, only the chunked-body-refused defect refuses a chunked body (its self-test fails CHAT-1, SVC-5)
      if (this.defect('chunked-body-refused') && /chunked/i.test(String(this.req.headers['transfer-encoding'] ?? ''))) {
        this.req.resume();
        reject(new ApiError(411, 'invalid_request_error', 'length_required', 'A Content-Length header is required.'));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const onData = (chunk: Buffer) => {
        // Stryker disable next-line AssignmentOperator: legal, no suite request exceeds 1 MiB and a body limit is not shown (the reference-server self-test checks the 413)
        size += chunk.length;
        // Stryker disable all: not reached, no suite request exceeds 1 MiB (a body limit is not shown; the reference-server self-test checks the 413)
        if (size > this.maxBodyBytes()) {
          done = true;
          this.req.off('data', onData);
          // oversize-drops-connection: the connection is dropped without an answer.
          // Stryker disable next-line all: not reached, only the oversize-drops-connection defect drops the connection (its self-test fails ERR-1)
          if (this.defect('oversize-drops-connection')) {
            this.req.socket.destroy();
            reject(new ClientGone());
            return;
          }
          // Drain the rest without keeping it and answer once it has all arrived (closing on a
          // client still sending would reset the connection under the 413, RFC 9112 §9.6).
          const limit = this.maxBodyBytes();
          this.req.once('end', () => {
            this.res.setHeader('Connection', 'close');
            reject(new ApiError(413, 'invalid_request_error', 'request_too_large', `Request body exceeds the limit of ${limit} bytes.`));
          });
          this.req.resume();
          return;
        }
        // Stryker restore all
        chunks.push(chunk);
      };
      this.req.on('data', onData);
      this.req.once('end', () => {
        // Stryker disable next-line ConditionalExpression: equivalent, a promise settles once, so resolving after the 413's reject changes nothing
        if (done) return;
        // Stryker disable next-line BooleanLiteral: equivalent, nothing reads done after the body ended (a promise settles once)
        done = true;
        resolve(Buffer.concat(chunks));
      });
      // Stryker disable all: not reached, no suite client leaves in the middle of sending a body
      this.req.once('error', () => {
        if (done) return;
        done = true;
        reject(new ClientGone());
      });
      this.req.once('close', () => {
        if (done) return;
        done = true;
        reject(new ClientGone());
      });
      // Stryker restore all
    });
    return this.bodyPromise;
  }
}

/** Headers every response of this request carries, streams included. */
export function baseHeaders(ctx: RequestContext): Record<string, string> {
  // Stryker disable next-line ObjectLiteral: legal, rate-limit headers on a 2xx are not shown (LIM-2 judges the 429's own headers, which do not come from here)
  const h: Record<string, string> = { ...ctx.extraHeaders };
  if (ctx.variant('connection-close')) h['Connection'] = 'close';
  if (ctx.defect('key-echoed-in-header') || (ctx.defect('key-echoed-to-clients') && ctx.fromClientLibrary())) {
    h['x-debug-key'] = ctx.key?.value ?? ctx.presentedCredential() ?? ctx.state.keys.main.value;
  }
  return h;
}

export function contentType(ctx: RequestContext, mime: string): string {
  return ctx.variant('charset') ? `${mime}; charset=utf-8` : mime;
}

/** Resolves once the response is fully handed to the socket (or the socket is gone). */
function finished(ctx: RequestContext): Promise<void> {
  const { res } = ctx;
  // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent on the wire, the response is already handed to the socket; only when the handler's promise settles differs
  if (res.writableFinished || res.destroyed) return Promise.resolve();
  // Stryker disable all: not reached, a response the size of the suite's is handed to the socket at once (writableFinished), and what follows is on the wire either way
  return new Promise((resolve) => {
    res.once('finish', () => resolve());
    res.once('close', () => resolve());
  });
  // Stryker restore all
}

export async function sendBody(
  ctx: RequestContext,
  status: number,
  mime: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<void> {
  const { res } = ctx;
  // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent in the mutation run, no handler answers twice, and nothing written to a destroyed response reaches the wire
  if (res.headersSent || res.destroyed) return;
  let payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const h: Record<string, string> = { ...baseHeaders(ctx), 'Content-Type': contentType(ctx, mime), ...headers };
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: equivalent in the mutation run, only the gzip and chunked variants read it
  const isJson = mime === 'application/json';
  if (isJson && ctx.variant('gzip') && ctx.acceptsGzip()) {
    payload = gzipSync(payload);
    h['Content-Encoding'] = 'gzip';
    h['Vary'] = 'Accept-Encoding';
  }
  if (isJson && ctx.variant('chunked') && payload.length > 0) {
    // No Content-Length: node frames each write as one HTTP chunk.
    res.writeHead(status, h);
    const cut1 = Math.max(1, Math.floor(payload.length / 3));
    const cut2 = Math.max(cut1, Math.floor((payload.length * 2) / 3));
    for (const piece of [payload.subarray(0, cut1), payload.subarray(cut1, cut2), payload.subarray(cut2)]) {
      if (piece.length) res.write(piece);
    }
    res.end();
    return finished(ctx);
  }
  // content-length-chars: Content-Length counts the characters (UTF-16 units), not the bytes.
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,StringLiteral: not reached, only the content-length-chars defect miscounts (its self-test fails CHAT-1, SVC-1)
  h['Content-Length'] = String(ctx.defect('content-length-chars') && typeof body === 'string' && !h['Content-Encoding'] ? body.length : payload.length);
  res.writeHead(status, h);
  res.end(payload);
  return finished(ctx);
}

export function sendJson(ctx: RequestContext, status: number, value: unknown, headers: Record<string, string> = {}): Promise<void> {
  return sendBody(ctx, status, 'application/json', JSON.stringify(value), headers);
}

/** A response with no body at all (204, or the empty-body defects). */
// Stryker disable all: not reached, only an authenticated OPTIONS (204, which no suite request sends: SVC-7's preflight has no key) and the empty-body defects (their self-tests fail ERR-1) answer without a body
export function sendEmpty(ctx: RequestContext, status: number, headers: Record<string, string> = {}): Promise<void> {
  const { res } = ctx;
  if (res.headersSent || res.destroyed) return Promise.resolve();
  res.writeHead(status, { ...baseHeaders(ctx), ...headers, ...(status === 204 ? {} : { 'Content-Length': '0' }) });
  res.end();
  return finished(ctx);
}
// Stryker restore all
