// The fetch every client library gets (openai `fetch`, Vercel `fetch`, LangChain
// `configuration.fetch`). It keeps our raw client's guarantees for SDK traffic and
// records what crossed the wire, so a test can count requests (did the client retry
// a 400?) and know the server's own error.message independently of the client.
// No dependency on the run's configuration: unit tests build it with any deadline.
import { Agent, fetch as undiciFetch } from 'undici';
import { DEFAULT_MAX_BODY_BYTES, POOLED_IDLE_MS, formatBytes } from '../../lib/http/http-client.ts';
import { with429BackOff, type BackOffBudget } from '../../lib/run/back-off.ts';
import type { Gate } from '../../lib/run/governor.ts';
import { toCurl } from '../../lib/http/curl.ts';
import { sharedProxyDispatcher } from '../../lib/http/proxy.ts';
import { errorBodyProblems, errorObjectOf, parseJson } from '../../lib/spec/error-body.ts';
import { errorSchemaProblems } from '../../lib/spec/schema-validator.ts';
import { exchangeContext, exchangeLogOn, logClientExchange, sseData, streamEvidence } from '../exchange-log.ts';
import type { SnapshotFinding } from '../../lib/spec/cumulative-deltas.ts';
import { describeFault, isFromTarget, isNetworkFailure, markFromTarget } from './faults.ts';

/** The pool for targets reached directly (no proxy), shared by every Wire of the process. */
let direct: Agent | undefined;

/**
 * fetch with the same guarantees as our raw client: no redirects followed (the key can
 * never reach another origin), one deadline over headers and body, a size cap on the
 * body. The SDKs themselves would read a never-ending or huge body forever.
 *
 * It sends with the undici package's fetch, the HTTP stack of our raw client, not
 * Node's built-in fetch: importing the undici package (lib/http/http-client.ts does)
 * installs its dispatcher globally, and Node 20's built-in fetch on that newer
 * dispatcher refuses the content-length header openai 4 sets ("invalid
 * content-length header"), a failure of our process, never of the target.
 */
export function makeGuardedFetch(timeoutMs: number, maxBodyBytes = DEFAULT_MAX_BODY_BYTES): typeof fetch {
  return async (url, init) => {
    // The deadline is a controller a timer holds, not AbortSignal.timeout(): Node keeps only a
    // weak reference to a timeout signal, and inside AbortSignal.any() one can be collected
    // before it fires (nodejs/node#57736), leaving a stalled stream read forever. Seen here:
    // a client's stream cell against a stalled stream outlived its test by minutes.
    const deadline = new AbortController();
    // Its reason is created here but reports the target's slowness: marked as the target's doing.
    const timer = setTimeout(() => deadline.abort(markFromTarget(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))), timeoutMs);
    timer.unref();
    const done = () => clearTimeout(timer);
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline.signal]) : deadline.signal;
    // Through HTTPS_PROXY/HTTP_PROXY when they apply to the URL (lib/http/proxy.ts), as the raw
    // client; else a pool that keeps idle connections no longer than the raw client's.
    const href = typeof url === 'string' ? url : url instanceof URL ? url.href : url.url;
    const dispatcher = sharedProxyDispatcher(href) ?? (direct ??= new Agent({ keepAliveTimeout: POOLED_IDLE_MS, keepAliveMaxTimeout: POOLED_IDLE_MS }));
    // Only a network failure or a deadline is the target's doing (harness/clients/faults.ts).
    const res = await undiciFetch(url as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), redirect: 'error', signal, ...(dispatcher ? { dispatcher } : {}) })
      .catch((err: unknown) => { done(); throw isNetworkFailure(err) ? markFromTarget(err) : err; });
    const meta = { status: res.status, statusText: res.statusText, headers: res.headers as unknown as Headers };
    if (!res.body) { done(); return new Response(null, meta); }
    let seen = 0;
    const capped = (res.body as ReadableStream<Uint8Array>).pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBodyBytes) { done(); controller.error(markFromTarget(new Error(`body exceeded ${formatBytes(maxBodyBytes)}`))); }
        else controller.enqueue(chunk);
      },
      flush() { done(); },
    }));
    return new Response(capped, meta);
  };
}

export interface WireRequest {
  method: string;
  url: string;
  body?: string;
  status?: number;
  transportError?: string;
  /** error.message of an error body (status >= 400), when the body has one. */
  serverMessage?: string;
  /** Status >= 400: what is wrong with the error body (lib/spec/error-body.ts; empty = a proper one). */
  errorBodyProblems?: string[];
  /** An event stream whose deltas were cumulative snapshots (EV-12, lib/spec/cumulative-deltas.ts); set once settled(). */
  snapshots?: SnapshotFinding;
  /** An event stream: its non-empty content deltas (EV-4's evidence); set once settled(). */
  contentDeltas?: number;
  /** A 2xx answer to GET /models: the ids the server listed (RES-MOD-1's evidence), when the body is a list. */
  listedIds?: string[];
  /** A 2xx JSON answer with choices: the server's choices[0].message.content, when a string. */
  replyContent?: string;
}

export interface WireOptions {
  timeoutMs: number;
  /**
   * Wait and re-send on 429 (within lib/run/back-off.ts's budget, paced by the run's governor
   * when one is given, as the raw client does; docs/RUNNER.md), so a run that meets throttling
   * judges the client, not the throttle. Off where the 429 itself is the subject.
   */
  retry429: boolean;
  /**
   * The run's governor (lib/run/governor.ts): with retry429, each request waits for its turn
   * before it is sent, and the deadline of the exchange starts only then. The client
   * library's own timeout must allow for that wait (lib/run/back-off.ts THROTTLE_ALLOWANCE_MS).
   */
  gate?: Gate;
  /** The 429 back-off budget (default lib/run/back-off.ts DEFAULT_429_BUDGET). */
  budget?: BackOffBudget;
  /** Called with each request's outcome as it arrives: a response (before the client reads it) or a transport failure. */
  onOutcome?: (r: WireRequest) => void;
}

/**
 * One client call's view of the wire: a fetch to hand to the client, and what it sent.
 * Every exchange also goes to the run's exchange log (harness/exchange-log.ts), each 429
 * it waits out included, so the per-response rules (lib/spec/rules/response-rules.ts) judge
 * client-library traffic like our own.
 */
export class Wire {
  readonly requests: WireRequest[] = [];
  /** Exchange-log writes still reading a streamed body (settled() waits for them). */
  private readonly logging: Array<Promise<void>> = [];
  /** 429s this wrapper waited out and re-sent (hidden from the client). */
  throttled = 0;
  /** Time requests waited for the governor's turns and advised waits, ms. */
  throttleWaitMs = 0;
  /** A request's last answer was a 429 that outlasted its back-off budget: the client met it. */
  throttledOut = false;
  /** Exceptions our own code (this wire, the guarded fetch) threw on the way: the cell is a harness error. */
  readonly faults: string[] = [];
  private readonly guarded: typeof fetch;

  constructor(private readonly opts: WireOptions) {
    this.guarded = makeGuardedFetch(opts.timeoutMs);
  }

  /** The fetch the client gets: an exception that is not the target's doing is recorded as our fault before the client wraps it. */
  readonly fetch: typeof fetch = async (input, init) => {
    try {
      return await this.send(input, init);
    } catch (err) {
      if (!isFromTarget(err)) this.faults.push(describeFault(err));
      throw err;
    }
  };

  private readonly send: typeof fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const body = typeof init?.body === 'string' ? init.body : undefined;
    // Only a body we can send again (the SDKs send JSON strings) is re-sent.
    const resendable = init?.body === undefined || body !== undefined;
    return with429BackOff(async () => {
      const rec: WireRequest = { method: init?.method ?? 'GET', url, body };
      this.requests.push(rec);
      let res: Response;
      try {
        res = await this.guarded(input, init);
      } catch (err) {
        rec.transportError = describeCause(err);
        this.log(rec);
        this.opts.onOutcome?.(rec);
        throw err;
      }
      rec.status = res.status;
      if (res.status >= 400) Object.assign(rec, await errorAnswerOf(res.clone()));
      await this.log(rec, res);
      this.opts.onOutcome?.(rec);
      return res;
    }, (res) => ({ status: res.status, headers: Object.fromEntries(res.headers) }), {
      enabled: this.opts.retry429 && resendable,
      gate: this.opts.gate,
      budget: this.opts.budget,
      onRetry: async (res) => {
        await res.body?.cancel().catch(() => {});
        this.throttled++;
      },
      onDone: (_res, account) => {
        this.throttleWaitMs += account.waitedMs;
        if (account.throttledOut) this.throttledOut = true;
      },
    });
  };

  /**
   * Logs the exchange. A JSON (or any non-stream) body is read from a clone before the
   * client sees the response (it is capped and under the deadline), so it is logged even
   * if the call is cut short; a stream is logged in the background as it ends.
   */
  private async log(rec: WireRequest, res?: Response): Promise<void> {
    const headers = res ? Object.fromEntries(res.headers) : {};
    const ok = rec.status !== undefined && rec.status < 300;
    const stream = /^text\/event-stream/i.test(headers['content-type'] ?? '') && ok;
    // Streams (EV-4, EV-12), model lists (RES-MOD-1) and completions are read whether or
    // not the run logs them: a cell names the wire breach that explains what the client did.
    const answer = ok && !stream;
    if (!exchangeLogOn() && !stream && !answer) return;
    const test = exchangeContext.getStore();
    const parts = { method: rec.method, url: rec.url, status: rec.status, headers, transportError: rec.transportError, curl: curlOf(rec), requestBody: rec.body };
    if (!res?.body) { if (exchangeLogOn()) logClientExchange({ ...parts, text: '' }, test); return; }
    const read = res.clone().text().catch((err: unknown) => { parts.transportError = describeCause(err); return ''; })
      .then((text) => {
        if (stream) Object.assign(rec, streamEvidence(sseData(text)));
        if (answer) Object.assign(rec, answerEvidence(rec, text));
        if (exchangeLogOn()) logClientExchange({ ...parts, text }, test);
      });
    if (stream) this.logging.push(read);
    else await read;
  }

  /** Resolves once every exchange of this wire is in the log (streams read to their end or deadline). */
  async settled(): Promise<void> {
    await Promise.all(this.logging);
  }

  /** Requests sent after the first response with a 4xx other than 429 (the client retried it). */
  retriesAfterClientError(): WireRequest[] {
    const i = this.requests.findIndex((r) => r.status !== undefined && r.status >= 400 && r.status < 500 && r.status !== 429);
    return i === -1 ? [] : this.requests.slice(i + 1);
  }

  /** error.message the server sent with `status` (the last such response). */
  serverMessage(status: number): string | undefined {
    return this.requests.filter((r) => r.status === status).at(-1)?.serverMessage;
  }

  statuses(): string {
    return this.requests.map((r) => r.status ?? `no response (${r.transportError})`).join(', ');
  }

  /** curl for the last request the client sent, key masked. */
  curl(): string | undefined {
    const r = this.requests.at(-1);
    return r ? curlOf(r) : undefined;
  }
}

function curlOf(r: WireRequest): string {
  const headers: Record<string, string> = { Authorization: 'Bearer ***' };
  if (r.body !== undefined) headers['Content-Type'] = 'application/json';
  return toCurl({ method: r.method, url: r.url, headers, body: r.body, stream: r.body !== undefined && /"stream"\s*:\s*true/.test(r.body) });
}

/** What a 2xx JSON answer showed: the ids of a model list, the content of a completion's first choice. */
function answerEvidence(rec: WireRequest, text: string): Pick<WireRequest, 'listedIds' | 'replyContent'> {
  const doc = parseJson(text) as { data?: unknown; choices?: Array<{ message?: { content?: unknown } }> } | undefined | null;
  if (!doc || typeof doc !== 'object') return {};
  if (rec.method === 'GET' && /\/models\/?$/.test(new URL(rec.url).pathname)) {
    const list = Array.isArray(doc) ? doc : doc.data;
    return Array.isArray(list) ? { listedIds: list.map((m: { id?: unknown } | null) => m?.id).filter((id): id is string => typeof id === 'string') } : {};
  }
  const content = Array.isArray(doc.choices) ? doc.choices[0]?.message?.content : undefined;
  return typeof content === 'string' ? { replyContent: content } : {};
}

/** The server's error.message and what is wrong with the error body (the one rule, lib/spec/error-body.ts). */
async function errorAnswerOf(res: Response): Promise<Pick<WireRequest, 'serverMessage' | 'errorBodyProblems'>> {
  let text: string;
  try { text = await res.text(); } catch (err) { return { errorBodyProblems: [`the body could not be read (${describeCause(err)})`] }; }
  const message = errorObjectOf(parseJson(text))?.message;
  return {
    serverMessage: typeof message === 'string' ? message : undefined,
    errorBodyProblems: errorBodyProblems(res.headers.get('content-type') ?? undefined, text, errorSchemaProblems),
  };
}

/** fetch's own message is a bare "fetch failed"; the cause says what happened. */
export function describeCause(err: unknown): string {
  const e = err as Error & { cause?: unknown };
  const cause = e?.cause instanceof Error ? `: ${e.cause.message}` : '';
  return `${e?.name ?? 'Error'}: ${e?.message ?? String(err)}${cause}`;
}
