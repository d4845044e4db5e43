// Bench helper: where the stream driver's CPU goes, from a V8 CPU profile of one
// `npm run load -- stream` run (node --cpu-prof). Every sample that was not idle is put
// in one category by its stack: the driver's own per-event work (our handler of each
// network piece: SSE reading, JSON.parse, the per-event checks), its per-request work
// (building the request, the request's lifecycle in lean-client.ts, and everything done
// with its outcome: recorder, requests.jsonl, SVC-9/EV-13 bookkeeping, token counts),
// the garbage collector, start-up and the final report (outside the measured CPU window),
// and the rest: undici, node:net, the kernel calls (the floor's work too).
import { readFileSync } from 'node:fs';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string }; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[] }

export const CATEGORIES = ['per_event_driver', 'per_request_driver', 'garbage_collector', 'startup_and_report', 'undici_node_kernel'] as const;
export type Category = (typeof CATEGORIES)[number];

export interface Breakdown {
  /** Samples that were not idle. */
  busy_samples: number;
  /** Share of the busy samples, 0..1, by category (the measured window's and the rest). */
  share: Record<Category, number>;
  /** Shares of the measured run alone (start-up and report left out), 0..1. */
  run_share: Record<Exclude<Category, 'startup_and_report'>, number>;
}

/** Our code, and the libraries it calls for its own work (tokenizer, histograms, schemas). */
const OURS = /\/(load|lib|bench)\/[^]*\.ts$|\/node_modules\/(gpt-tokenizer|hdr-histogram-js|ajv)\//;
/** Frames that are per-request work of the driver, wherever they run. */
const PER_REQUEST_FILES = /\/load\/(engine\/(recorder|request-factory|request-bodies|token-count|cross-talk-watch|load-driver)|report\/request-log|scenarios\/drive|workload\/[a-z-]+)\.ts$|\/lib\/spec\/rules\/|\/node_modules\/gpt-tokenizer\//;
/** lean-client.ts functions run once per request (its onResponseData runs per network piece). */
const PER_REQUEST_LEAN = new Set(['LeanCall', 'onRequestStart', 'onResponseStart', 'onResponseEnd', 'onResponseError', 'finish', 'send', 'checkJson', 'cancel', 'fail']);
/** Start-up (module loading, the tokenizer's ranks) and the report at the end: outside the measured CPU window. */
function isStartupOrReport(f: ProfileNode['callFrame']): boolean {
  return f.url.startsWith('node:internal/modules') || /\/bin\/load\.ts$/.test(f.url) || (/\/load\/run\.ts$/.test(f.url) && f.functionName !== '')
    || (/\/load\/report\//.test(f.url) && !f.url.endsWith('/request-log.ts'));
}

export function profileBreakdown(path: string): Breakdown {
  const p = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // One category per node (its stack decides), then count the samples.
  const memo = new Map<number, Category | 'idle'>();
  const categoryOf = (id: number): Category | 'idle' => {
    const known = memo.get(id);
    if (known) return known;
    const leaf = byId.get(id)!.callFrame.functionName;
    let c: Category | 'idle' | undefined;
    if (leaf === '(idle)') c = 'idle';
    else if (leaf === '(garbage collector)') c = 'garbage_collector';
    else {
      // Whose work the sample is: the innermost frame with a source decides (builtins such
      // as JSON.parse and node:buffer's helpers count for their caller). Ours: per-request
      // when any of our per-request frames is on the stack (an outcome recorded inside a
      // piece's handler included), else per-event under our handler of a network piece.
      // Undici's and Node's own work below our frames (writing a request, parsing HTTP) is
      // the floor's work too.
      let decided: 'ours' | 'theirs' | undefined;
      let perEvent = false;
      let perRequest = false;
      let startup = false;
      for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) {
        const f = byId.get(x)!.callFrame;
        if (decided === undefined && f.url !== '' && !f.url.startsWith('node:buffer')) decided = OURS.test(f.url) ? 'ours' : 'theirs';
        if (f.url.endsWith('/load/engine/lean-client.ts')) {
          if (f.functionName === 'onResponseData') perEvent = true;
          else if (PER_REQUEST_LEAN.has(f.functionName)) perRequest = true;
        } else if (PER_REQUEST_FILES.test(f.url)) perRequest = true;
        if (isStartupOrReport(f)) startup = true;
      }
      c = startup ? 'startup_and_report' : decided !== 'ours' ? 'undici_node_kernel' : perRequest || !perEvent ? 'per_request_driver' : 'per_event_driver';
    }
    memo.set(id, c);
    return c;
  };
  const counts: Record<Category, number> = { per_event_driver: 0, per_request_driver: 0, garbage_collector: 0, startup_and_report: 0, undici_node_kernel: 0 };
  for (const s of p.samples) {
    const c = categoryOf(s);
    if (c !== 'idle') counts[c]++;
  }
  const busy = CATEGORIES.reduce((a, k) => a + counts[k], 0);
  const run = busy - counts.startup_and_report;
  const share = Object.fromEntries(CATEGORIES.map((k) => [k, busy ? counts[k] / busy : 0])) as Record<Category, number>;
  const runShare = Object.fromEntries(CATEGORIES.filter((k) => k !== 'startup_and_report').map((k) => [k, run ? counts[k] / run : 0])) as Breakdown['run_share'];
  return { busy_samples: busy, share, run_share: runShare };
}
