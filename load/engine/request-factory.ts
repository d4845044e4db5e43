// Turns a request number into a ready-to-send lean request: route (brain share),
// body, headers for one key, and whether its body is schema-checked (the first 20,
// then every Nth: --sample-every).
import { bodyFor, pathFor, routeAt, type BodyOptions } from './request-bodies.ts';
import type { LeanRequest } from './lean-client.ts';
import { extraHeaders } from '../../lib/http/extra-headers.ts';
import type { LoadOptions } from '../setup/options.ts';
import { extraBodyOf } from '../workload/extra-body.ts';
import type { LoadTarget } from '../setup/load-target.ts';
import type { Workload } from '../workload/workload.ts';

export const ALWAYS_CHECKED = 20;

export interface FactorySpec {
  target: LoadTarget;
  options: LoadOptions;
  stream: boolean;
  key: string;
  /** Label of the key in the outcomes ('main', 'throttled', 'bystander'). */
  keyLabel: string;
  /** Override --brain-share (the rate-limit scenario sends plain chat only). */
  brainShare?: number;
  keepHeaders?: boolean;
  /** What each request says (prompt, max_tokens, session); without it, the fixed --prompt. */
  workload?: Workload;
}

export function requestFactory(spec: FactorySpec): (seq: number, intendedAt: number) => LeanRequest {
  const { target, options, stream } = spec;
  const headers = {
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
    authorization: `Bearer ${spec.key}`,
    'user-agent': 'chatgate-load',
    ...extraHeaders(), // HEADERS of the run (checked by loadConfig: none of the names above)
  };
  const bodyOptions: BodyOptions = {
    model: options.model ?? target.models[0] ?? 'svc-auto',
    prompt: options.prompt,
    stream,
    maxTokens: options.maxTokens,
    brainId: target.brainId,
    extra: extraBodyOf(options),
  };
  const share = spec.brainShare ?? options.brainShare;
  const paths = new Map<string, string>();
  const { workload } = spec;
  const keepGaps = options.saveGaps === true;
  const cancelShare = stream ? options.cancelShare ?? 0 : 0;
  const cancelAfter = cancelAfterOf(options.cancelAfter);
  return (seq, intendedAt) => {
    const route = routeAt(seq, share);
    let path = paths.get(route);
    if (path === undefined) paths.set(route, (path = target.basePath + pathFor(route, target.brainId)));
    const item = workload?.next(seq);
    const body = item ? bodyFor(route, { ...bodyOptions, messages: item.messages, maxTokens: item.maxTokens }, seq) : bodyFor(route, bodyOptions, seq);
    return {
      seq, route, key: spec.keyLabel, stream, path, headers, intendedAt,
      body: JSON.stringify(body),
      sample: seq < ALWAYS_CHECKED || seq % options.sampleEvery === 0,
      keepHeaders: spec.keepHeaders,
      ...(body.max_tokens !== undefined ? { capped: true } : {}),
      ...(item ? { keepReply: item.keepReply, work: { promptTokens: item.promptTokens, maxTokens: item.maxTokens, session: item.session, turn: item.turn, ...(item.canary ? { canary: item.canary } : {}), ...(item.heldCanaries ? { heldCanaries: item.heldCanaries } : {}) } } : {}),
      ...(keepGaps ? { keepGaps } : {}),
      // Spread evenly, as the brain share is: a short run holds the asked share exactly.
      ...(cancelShare > 0 && Math.floor((seq + 1) * cancelShare) > Math.floor(seq * cancelShare) ? { cancelAfter } : {}),
    };
  };
}

/** --cancel-after: "first-token" or a number of ms (one clear line otherwise). */
export function cancelAfterOf(value: string | undefined): 'first-token' | number {
  if (value === undefined || value === 'first-token') return 'first-token';
  const ms = Number(value);
  if (!Number.isFinite(ms) || ms < 0) throw new Error(`--cancel-after: "${value}" is neither first-token nor a number of ms`);
  return ms;
}
