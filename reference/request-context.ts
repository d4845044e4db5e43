// One request in flight: the raw req/res, who is calling, and an abort signal that
// fires when the client goes away (or the server closes) so that streams and delays
// stop doing work nobody will read.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DefectName } from './defects.ts';
import type { VariantName } from './variants.ts';
import type { KeyRecord } from './keys.ts';
import { hasDefect, hasVariant, type ServerState } from './state.ts';
import { ApiError } from './errors.ts';

export const MAX_BODY_BYTES = 1024 * 1024;

/** Thrown when the client disconnects mid-body; the request is dropped silently. */
export class ClientGone extends Error {
  constructor() {
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
    this.method = (req.method ?? 'GET').toUpperCase();
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    this.path = q === -1 ? raw : raw.slice(0, q);
    this.signal = this.abort.signal;
    // close() aborts every live request; a request leaves the set when its response closes.
    const abort = () => this.abort.abort();
    if (state.shuttingDown) abort();
    state.live.add(abort);
    res.once('close', () => {
      state.live.delete(abort);
      if (!res.writableFinished) abort();
    });
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
  fromClientLibrary(): boolean {
    const h = this.req.headers;
    return Object.keys(h).some((k) => k.startsWith('x-stainless-')) || /OpenAI\/JS|ai-sdk|langchain/i.test(String(h['user-agent'] ?? ''));
  }

  /** The credential exactly as presented after the scheme (for the key-echo defects only). */
  presentedCredential(): string | undefined {
    const h = this.req.headers.authorization;
    if (!h) return undefined;
    const parts = h.trim().split(/\s+/);
    return parts[parts.length - 1] || undefined;
  }

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

  /** Reads the whole body once (memoised), refusing more than 1 MiB with 413. */
  body(): Promise<Buffer> {
    this.bodyPromise ??= new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          done = true;
          this.req.off('data', onData);
          // Drain the rest without keeping it, and close the connection after the 413.
          this.req.resume();
          this.res.setHeader('Connection', 'close');
          reject(new ApiError(413, 'invalid_request_error', 'request_too_large', `Request body exceeds the limit of ${MAX_BODY_BYTES} bytes.`));
          return;
        }
        chunks.push(chunk);
      };
      this.req.on('data', onData);
      this.req.once('end', () => {
        if (done) return;
        done = true;
        resolve(Buffer.concat(chunks));
      });
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
    });
    return this.bodyPromise;
  }
}
