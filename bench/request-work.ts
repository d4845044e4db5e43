// Bench helper: the stream driver's per-request work, without sockets, in µs per
// request and amortised over the request's SSE events. The `stream` scenario's own
// pieces, each timed on its own over the same synthetic streams (bench/stream-bytes.ts):
// building the request (the default workload: its prompt, canary and token count),
// and what is done with each outcome in load/scenarios/drive.ts (token counts, the
// recorder's histograms, the requests.jsonl line, the SVC-9/EV-13 watch). The events
// themselves (lean-client.ts reading them) are bench/driver-work.ts's figure. Each
// piece's figure is the least of 3 rounds: a shared machine only ever adds time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dispatcher } from 'undici';
import { parseArgs } from '../load/setup/options.ts';
import { prepareWorkload } from '../load/setup/workload-setup.ts';
import { requestFactory } from '../load/engine/request-factory.ts';
import { LeanCall, type LeanRequest, type Outcome } from '../load/engine/lean-client.ts';
import { Recorder } from '../load/engine/recorder.ts';
import { Findings } from '../load/report/findings.ts';
import { RequestLog } from '../load/report/request-log.ts';
import { CrossTalkWatch } from '../load/engine/cross-talk-watch.ts';
import { tokenCounts } from '../load/engine/token-count.ts';
import type { LoadTarget } from '../load/setup/load-target.ts';
import { streamPieces } from './stream-bytes.ts';

const controller = { abort() {}, pause() {}, resume() {}, aborted: false, paused: false, reason: null } as unknown as Dispatcher.DispatchController;
const headers = { 'content-type': 'text/event-stream' };

export const REQUEST_PIECES = ['build', 'tokens', 'recorder', 'request_log', 'cross_talk_watch'] as const;
export interface RequestWork {
  /** µs per request, by piece. */
  us_per_request: Record<(typeof REQUEST_PIECES)[number], number>;
  /** Their sum over the events of one request. */
  us_per_event: number;
  events_per_request: number;
}

export async function measureRequestWork(streams = 5000, tokens = 40): Promise<RequestWork> {
  const { options } = parseArgs(['stream', '--concurrency', '1000'], {});
  const { workload, tokenizer } = await prepareWorkload('stream', options);
  const target = { origin: 'http://127.0.0.1:9', baseUrl: 'http://127.0.0.1:9/v1', basePath: '/v1', models: ['svc-auto'], keys: { main: 'sk-bench' } } as unknown as LoadTarget;
  const make = requestFactory({ stream: true, key: 'sk-bench', keyLabel: 'main', target, options, workload });
  const pieces = streamPieces(tokens);
  const dir = mkdtempSync(join(tmpdir(), 'chatgate-request-work-'));
  const cpu = (f: () => void) => {
    const c0 = process.cpuUsage();
    f();
    const c = process.cpuUsage(c0);
    return c.user + c.system;
  };
  const round = (n: number, first: number) => {
    const reqs: LeanRequest[] = [];
    const outs: Outcome[] = [];
    const t = {} as RequestWork['us_per_request'];
    t.build = cpu(() => { for (let i = 0; i < n; i++) reqs.push(make(first + i, performance.now())); });
    for (const r of reqs) {
      const call = new LeanCall(r, (o) => outs.push(o));
      call.onRequestStart(controller);
      call.onResponseStart(controller, 200, headers);
      for (const p of pieces) call.onResponseData(controller, p);
      call.onResponseEnd();
    }
    if (outs.some((o) => !o.ok)) throw new Error('request work: a synthetic stream failed');
    t.tokens = cpu(() => { for (const o of outs) { o.tokens = tokenCounts(o, tokenizer); workload?.done(o.seq, o.ok, o.reply); } });
    const recorder = new Recorder(true, new Findings());
    t.recorder = cpu(() => { for (const o of outs) { recorder.recordSent(o.route, o.intendedAt, 0); recorder.recordOutcome(o); } });
    const log = new RequestLog(join(dir, String(first)), performance.now());
    t.request_log = cpu(() => { for (const o of outs) log.outcome(o); log.flush(); });
    log.close();
    const watch = new CrossTalkWatch();
    // Each request sent and answered in turn: every reply settles as it is added (the watch's live path, none held).
    t.cross_talk_watch = cpu(() => { for (let i = 0; i < outs.length; i++) { watch.sent(reqs[i]!); watch.add(outs[i]!); } });
    return { t, events: outs.reduce((a, o) => a + o.events, 0) };
  };
  try {
    round(500, 0); // JIT warm-up
    const rounds = [1, 2, 3].map((k) => round(streams, k * 1_000_000));
    const perRequest = Object.fromEntries(REQUEST_PIECES.map((k) => [k, Math.min(...rounds.map((r) => r.t[k])) / streams])) as RequestWork['us_per_request'];
    const eventsPerRequest = rounds[0]!.events / streams;
    const sum = REQUEST_PIECES.reduce((a, k) => a + perRequest[k], 0);
    return { us_per_request: perRequest, us_per_event: sum / eventsPerRequest, events_per_request: eventsPerRequest };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
