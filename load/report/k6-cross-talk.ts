// SVC-9 in a merged k6 run: the runners count replies that were another request's
// (chatgate_cross_talk); the first findings of each VU carry their bodies as metadata
// on that point (load/k6/lib/witness.ts), which the runners' `--out json` outputs hold.
// Here they become the finding's curl lines, built by lib/http/curl.ts as the Node
// harness builds its own, with the runners' HEADERS and proxy (from their summaries), every
// secret masked by curl.ts's rule (the runners never wrote the key).
import { toCurl } from '../../lib/http/curl.ts';
import { CLAUSES } from '../../lib/spec/clauses.ts';
import { requestOfCanary } from '../../lib/spec/rules/cross-talk.ts';
import { parseRequestTail, requestTail } from '../workload/workload.ts';
import { parseWitness, WITNESS_KEY, type Witness } from '../k6/lib/witness.ts';
import type { Finding } from './findings.ts';

export type { Witness };

/** The witness a `--out json` line carries, if any. */
export function witnessOfLine(line: string): Witness | undefined {
  if (!line.includes(WITNESS_KEY) || !line.includes('"chatgate_cross_talk"')) return undefined;
  try {
    const p = JSON.parse(line) as { type?: string; metric?: string; data?: { value?: number; metadata?: Record<string, unknown> } };
    return p.type === 'Point' && p.metric === 'chatgate_cross_talk' && p.data?.value === 1 ? parseWitness(p.data.metadata?.[WITNESS_KEY]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the runners sent besides the bodies: the target, their HEADERS text (as their
 * summaries recorded it, secret values masked) and their proxy variables; `proxyNote`
 * says when the proxy is not known to be theirs.
 */
export interface K6RunHeaders { target: string; headers?: string; proxyEnv?: Record<string, string>; proxyNote?: string }

/** A stream request to the target as chat-stream-sse sends it: the run's HEADERS, then its own; secrets masked by toCurl. */
function curlOf(run: K6RunHeaders, body: string): string {
  // The run's HEADERS and proxy, never the merging process's own (toCurl reads both from `env`).
  const env = { ...run.proxyEnv, ...(run.headers === undefined ? {} : { HEADERS: run.headers }) };
  return toCurl({ method: 'POST', url: `${run.target}/chat/completions`, headers: { Authorization: 'Bearer ***', 'Content-Type': 'application/json', Accept: 'text/event-stream' }, body, stream: true, env });
}

/** The other request's line: its own body where a VU held it, else rebuilt from this one's with the other's number and canary. */
function otherLine(run: K6RunHeaders, w: Witness, all: Witness[]): string | undefined {
  if (w.other_body !== undefined) return `the other (an earlier request of the same VU, whose reply carried the same id): ${curlOf(run, w.other_body)}`;
  const c = w.other_canary;
  if (!c) return undefined;
  const theirs = all.find((x) => parseRequestTail(x.body)?.canary === c);
  if (theirs) return `the other (whose canary the reply carried): ${curlOf(run, theirs.body)}`;
  const own = parseRequestTail(w.body);
  if (!own) return undefined;
  const seq = requestOfCanary(c);
  const rebuilt = w.body.replace(requestTail(own.seq, own.canary), requestTail(seq, c));
  return `the other (request ${seq}, whose canary the reply carried; its body rebuilt from this one's with its own number and code, model and max_tokens as this one's): ${curlOf(run, rebuilt)}`;
}

/**
 * The SVC-9 finding of a merged k6 run (undefined when no runner counted one). `witnesses`:
 * from the runners' `--out json` outputs; `run`: their target and HEADERS; without them the finding says how to get curl lines.
 */
export function k6CrossTalkFinding(count: number, witnesses: Witness[], run: K6RunHeaders): Finding | undefined {
  if (!(count > 0)) return undefined;
  const first = witnesses.find((w) => otherLine(run, w, witnesses) !== undefined) ?? witnesses[0];
  const why = first?.why ?? 'a VU logged which reply (its log line "a reply was another request\'s (SVC-9)")';
  const reproduce = first ? [`this request: ${curlOf(run, first.body)}`, ...[otherLine(run, first, witnesses)].filter((l): l is string => l !== undefined)] : undefined;
  return {
    clause: 'SVC-9',
    level: CLAUSES['SVC-9'].level,
    count,
    message: 'a reply was another request\'s (k6 VUs: another request\'s canary, or the completion id of an earlier reply of the same VU)',
    example: first ? `${why}${run.proxyNote ? `; ${run.proxyNote}` : ''}` : `${why}; no curl lines: give the merge each runner's --out json output (k6 run --out json=runner1.ndjson ...)`,
    ...(reproduce ? { reproduce } : {}),
  };
}
