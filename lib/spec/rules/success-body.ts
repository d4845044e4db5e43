// Every success judged: a 2xx to a chat, brain or models request carries a complete body
// of the right shape, or a complete stream. A gateway that answers some requests under
// load with 200 and an empty body hands the client nothing while every status looks fine;
// so the rule runs on every exchange of the run (the per-response table,
// ./response-rules.ts), not in one probe. Each breach is reported on the clause the
// answer broke: SVC-1 (chat), SVC-3 (brain route), SVC-2 (model list), EV-6 (a stream
// without its [DONE], or with data after it). A cut caused by our own limits (the run's
// deadline, the body cap, a client that aborted) is no evidence and not judged.
// The request's form counts as well as the answer's type: a request that asked for a
// stream is judged as a stream whatever its Content-Type (EV-1 judges the type).
// Imports only the stream rules (the k6 bundles and the load harness may take it whole).
import { readEvents } from './stream-reading.ts';
import * as ev from './stream-rules.ts';

export type SuccessClause = 'SVC-1' | 'SVC-2' | 'SVC-3' | 'EV-6';

/** One 2xx answer as the exchange log holds it. */
export interface SuccessAnswer {
  method: string;
  /** The URL's path. */
  path: string;
  status?: number;
  contentType?: string;
  /** The decoded body (capped); '' when none. */
  text: string;
  /** The data payloads of an event stream, in order (undefined: not an event stream). */
  streamData?: string[];
  transportError?: string;
  /** The request asked for a stream (`"stream": true` in its body). */
  requestedStream?: boolean;
}

/** Whether a request body asks for a stream (`"stream": true` at its top level). */
export function asksForStream(body: string | undefined): boolean {
  if (body === undefined || !/"stream"/.test(body)) return false;
  try {
    const doc = JSON.parse(body) as unknown;
    return doc !== null && typeof doc === 'object' && (doc as { stream?: unknown }).stream === true;
  } catch { return false; }
}

/** A clause the answer was judged on; `seen` says what broke it (absent: kept). */
export interface SuccessJudgement {
  clause: SuccessClause;
  seen?: string;
}

/** Our deadline, our body cap or an abort ended the body: the server did not cut it. */
const OUR_CUT = /within \d+ ?ms|stalled for|exceeded|abort|timed? ?out|deadline/i;
/** The response stayed open after [DONE] (the raw client's close deadline). */
const NEVER_CLOSED = /not closed within/i;

type Route = 'chat' | 'brain' | 'models';

function routeOf(method: string, path: string): Route | undefined {
  const m = method.toUpperCase();
  if (m === 'POST' && /\/chat\/completions\/?$/.test(path)) return 'chat';
  if (m === 'POST' && /\/brains\/[^/]+\/chat\/?$/.test(path)) return 'brain';
  if (m === 'GET' && /\/models\/?$/.test(path)) return 'models';
  return undefined;
}

const CLAUSE_OF: Record<Route, SuccessClause> = { chat: 'SVC-1', brain: 'SVC-3', models: 'SVC-2' };
const quote = (s: string) => JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);

/** The whole-body judgement of a 2xx that is not an event stream. */
function bodySeen(route: Route, a: SuccessAnswer): string | undefined {
  const text = a.text.trim();
  if (a.transportError) return `HTTP ${a.status} whose body was cut (${a.transportError})${text ? ` after ${quote(text)}` : ''}`;
  if (text === '') return `HTTP ${a.status} with an empty body`;
  let doc: unknown;
  try { doc = JSON.parse(text); } catch (e) {
    // The brain route's body is not shown in the spec: only JSON it claims to be must parse.
    if (route === 'brain' && !/json/i.test(a.contentType ?? '')) return undefined;
    return `HTTP ${a.status} with a body that is not complete JSON (${(e as Error).message}): ${quote(text)}`;
  }
  if (route === 'chat') {
    const ok = doc !== null && typeof doc === 'object' && Array.isArray((doc as { choices?: unknown }).choices);
    return ok ? undefined : `HTTP ${a.status} without a chat completion (no choices array): ${quote(text)}`;
  }
  if (route === 'models') {
    const list = Array.isArray(doc) ? doc : (doc as { data?: unknown } | null)?.data;
    return Array.isArray(list) ? undefined : `HTTP ${a.status} without a list of models (no data array): ${quote(text)}`;
  }
  return undefined;
}

/** EV-6 on a 2xx event stream (the stream rule of ./stream-rules.ts), and the response closes after [DONE]. */
function streamSeen(a: SuccessAnswer, data: string[]): string | undefined {
  const r = readEvents(data.map((d) => ({ data: d })));
  if (r.doneIndex === undefined && a.transportError && OUR_CUT.test(a.transportError)) return undefined;
  const v = ev.done(r);
  if (v) return `${v.seen}${r.doneIndex === undefined && a.transportError ? ` (${a.transportError})` : ''}`;
  if (a.transportError && NEVER_CLOSED.test(a.transportError)) return `the response stayed open after [DONE] (${a.transportError})`;
  return undefined;
}

/**
 * The clauses this answer is judged on, with what broke each; undefined when the rule
 * has nothing to judge (not a 2xx to a chat, brain or models request, or a cut of ours).
 */
export function judgeSuccessBody(a: SuccessAnswer): SuccessJudgement[] | undefined {
  if (a.status === undefined || a.status < 200 || a.status >= 300) return undefined;
  const route = routeOf(a.method, a.path);
  if (!route) return undefined;
  const eventStream = /^text\/event-stream/i.test(a.contentType ?? '');
  if (eventStream || (a.requestedStream && route !== 'models')) {
    if (route === 'models') return undefined;
    // A stream asked for and sent under another type: EV-1's breach; only the stream it carries is judged here.
    if (!eventStream && !a.streamData?.length) return undefined;
    const seen = streamSeen(a, a.streamData ?? []);
    if (seen === undefined && a.transportError && OUR_CUT.test(a.transportError)) return undefined;
    return [{ clause: 'EV-6', ...(seen ? { seen } : {}) }];
  }
  if (a.transportError && OUR_CUT.test(a.transportError)) return undefined;
  const seen = bodySeen(route, a);
  return [{ clause: CLAUSE_OF[route], ...(seen ? { seen } : {}) }];
}

/** What each clause asks of every success it judges (the run-wide record's words). */
const EXPECTED: Record<SuccessClause, string> = {
  'SVC-1': 'a complete chat completion (a JSON object with a choices array) in every 2xx to a chat request',
  'SVC-2': 'a complete list of models (a data array) in every 2xx to GET /models',
  'SVC-3': 'a complete body in every 2xx to POST /brains/{id}/chat',
  'EV-6': 'every 2xx event stream ends with data: [DONE], nothing after it, then the close',
};

/** An exchange as the per-response table sees it: the judgements stored with it, and who sent it. */
interface Judged { success?: SuccessJudgement[]; source?: string }

/**
 * The per-response rules of the table (./response-rules.ts), one per clause, each
 * owned by a fixed probe (probed: a run-wide record only on a breach). EV-6 leaves the
 * fuzz phase's streams to the fuzz phase's own EV-6 test.
 */
export const SUCCESS_BODY_RULES = (['SVC-1', 'SVC-3', 'SVC-2', 'EV-6'] as const).map((clause) => ({
  clause,
  title: clause === 'EV-6' ? 'every stream of the run ends with [DONE] and nothing after it' : `every success of the run carries a complete body (${clause === 'SVC-1' ? 'chat' : clause === 'SVC-2' ? 'models' : 'brain route'})`,
  expected: EXPECTED[clause],
  evidence: clause === 'EV-6' ? 'no 2xx event stream' : 'no 2xx answer',
  judgedNoun: clause === 'EV-6' ? 'streams' : 'successes',
  judges: (e: Judged) => !!e.success?.some((j) => j.clause === clause) && !(clause === 'EV-6' && e.source === 'fuzz'),
  check: (e: Judged) => e.success?.find((j) => j.clause === clause)?.seen,
  probed: true as const,
}));
