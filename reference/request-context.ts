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
    // Stryker disable next-line StringLiteral: [equiv] client gone
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
    // Stryker disable next-line StringLiteral: [unreached] node:http
    this.method = (req.method ?? 'GET').toUpperCase();
    // Stryker disable next-line StringLiteral: [unreached] node:http
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    // Stryker disable next-line MethodExpression,ConditionalExpression: [not-sent] query; killed: suite
    this.path = q === -1 ? raw : raw.slice(0, q);
    this.signal = this.abort.signal;
    // close() aborts every live request; a request leaves the set when its response closes.
    // Stryker disable all: [delay-0] delays; killed: suite
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
  // Stryker disable all: [gate] client-libraries-500 key-echoed-to-clients SVC-4
  fromClientLibrary(): boolean {
    const h = this.req.headers;
    return Object.keys(h).some((k) => k.startsWith('x-stainless-')) || /OpenAI\/JS|ai-sdk|langchain/i.test(String(h['user-agent'] ?? ''));
  }

  // Stryker restore all

  /** The credential exactly as presented after the scheme (for the key-echo defects only). */
  // Stryker disable all: [gate] key-echoed-in-header key-echoed-to-clients AUTH-9
  presentedCredential(): string | undefined {
    const h = this.req.headers.authorization;
    if (!h) return undefined;
    const parts = h.trim().split(/\s+/);
    return parts[parts.length - 1] || undefined;
  }

  // Stryker restore all

  // Stryker disable all: [gate] gzip
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
    // Stryker disable next-line all: [not-sent] socket buffer
    if (this.variant('large-bodies-served')) return 64 * 1024 * 1024;
    // Stryker disable next-line all: [not-sent] socket buffer
    if (this.variant('body-limit-64k')) return 64 * 1024;
    return MAX_BODY_BYTES;
  }

  /** Reads the whole body once (memoised), refusing more than maxBodyBytes() with 413. */
  body(): Promise<Buffer> {
    this.bodyPromise ??= new Promise<Buffer>((resolve, reject) => {
      // chunked-body-refused: a body sent with chunked transfer coding (RFC 9112 §6.1 requires accepting it) is refused.
      // Stryker disable next-line ConditionalExpression,LogicalOperator,Regex,StringLiteral: [unreached] chunked-body-refused CHAT-1
      if (this.defect('chunked-body-refused') && /chunked/i.test(String(this.req.headers['transfer-encoding'] ?? ''))) {
        this.req.resume();
        reject(new ApiError(411, 'invalid_request_error', 'length_required', 'A Content-Length header is required.'));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const onData = (chunk: Buffer) => {
        // Stryker disable next-line AssignmentOperator: [not-sent] 1 MiB
        size += chunk.length;
        // Stryker disable all: [not-sent] 1 MiB
        if (size > this.maxBodyBytes()) {
          done = true;
          this.req.off('data', onData);
          // oversize-drops-connection: the connection is dropped without an answer.
          // Stryker disable next-line all: [gate] oversize-drops-connection ERR-1
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
        // Stryker disable next-line ConditionalExpression: [equiv] settles once
        if (done) return;
        // Stryker disable next-line BooleanLiteral: [equiv] settles once
        done = true;
        resolve(Buffer.concat(chunks));
      });
      // Stryker disable all: [not-sent] client left
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
  // Stryker disable next-line ObjectLiteral: [retry-hint] LIM-2
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
  // Stryker disable next-line ConditionalExpression,LogicalOperator: [equiv] on the wire
  if (res.writableFinished || res.destroyed) return Promise.resolve();
  // Stryker disable all: [not-sent] socket buffer
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
  // Stryker disable next-line ConditionalExpression,LogicalOperator: [equiv] client gone
  if (res.headersSent || res.destroyed) return;
  let payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const h: Record<string, string> = { ...baseHeaders(ctx), 'Content-Type': contentType(ctx, mime), ...headers };
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: [gate] gzip
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
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,StringLiteral: [unreached] content-length-chars CHAT-1
  h['Content-Length'] = String(ctx.defect('content-length-chars') && typeof body === 'string' && !h['Content-Encoding'] ? body.length : payload.length);
  res.writeHead(status, h);
  res.end(payload);
  return finished(ctx);
}

export function sendJson(ctx: RequestContext, status: number, value: unknown, headers: Record<string, string> = {}): Promise<void> {
  return sendBody(ctx, status, 'application/json', JSON.stringify(value), headers);
}

/** A response with no body at all (204, or the empty-body defects). */
// Stryker disable all: [unreached] empty-body SVC-7
export function sendEmpty(ctx: RequestContext, status: number, headers: Record<string, string> = {}): Promise<void> {
  const { res } = ctx;
  if (res.headersSent || res.destroyed) return Promise.resolve();
  res.writeHead(status, { ...baseHeaders(ctx), ...headers, ...(status === 204 ? {} : { 'Content-Length': '0' }) });
  res.end();
  return finished(ctx);
}
// Stryker restore all
