// `npm run load -- merge <summary files or folders>`: one answer for a test run from
// many machines. k6 runners' summaries (load/k6/lib/summary.ts) add their counters and
// their log-bucket counts (load/k6/lib/log-buckets.ts, the one bucket scheme) and the
// thresholds are judged again on the merged figures; the Node harness's summary.json
// files add counts and merge their HDR histograms. Either way the result is a
// summary.json + report.html in the format of a single `npm run load` run (so
// --baseline reads it). Files of different tests or settings are refused (exit 2).
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseArgs as parseCommandLine } from 'node:util';
import { isDeepStrictEqual } from 'node:util';
import { redact, redactDeep } from '../../lib/run/redact.ts';
import { parseHeaderLines } from '../../lib/http/header-lines.ts';
import { PROXY_VARIABLES } from '../../lib/http/proxy-mask.ts';
import { LatencyHistogram, plotPercentiles, type LatencySummary } from '../engine/histogram.ts';
import { addCounts, bucketPercentile, bucketValue, BUCKET_SCHEME, RELATIVE_ERROR } from '../k6/lib/log-buckets.ts';
import { loadMetrics } from '../k6/lib/load-metrics.ts';
import { mergeSlices, SLICE_CSV_COLUMNS, SliceError, sliceRows, slicesFromPoints, type RunnerSlices, type SliceRow as K6SliceRow } from '../k6/lib/slices.ts';
import { SUMMARY_FORMAT, SUMMARY_VERSION, writeSummary, type LoadSummary } from './summary.ts';
import { writeHtmlReport } from './report-html.ts';
import { slicesCsv } from './slices.ts';
import { k6CrossTalkFinding, witnessOfLine, type Witness } from './k6-cross-talk.ts';
import type { ThresholdVerdict } from './k6-details-html.ts';
import { findingsFail, type Finding } from './findings.ts';
import { compareMetrics, formatComparison, loadBaseline, parseThresholds } from './baseline.ts';
import { evaluateLimits, gateLine, parseLimits, type Limit } from './gates.ts';
import { UsageError, type Scenario } from '../setup/options.ts';
import { targetKind } from '../setup/safety.ts';
import type { MetricName } from './metric-names.ts';

/** A problem with the inputs: one line, exit 2, nothing written. */
export class MergeError extends Error {}

/** A k6 summary's JSON printed on stdout as one line (SUMMARY_STDOUT=1), so `kubectl logs` can collect it. */
export const STDOUT_MARKER = 'chatgate-k6-summary ';

export interface K6Metric { type: string; contains: string; values: Record<string, number> }
export interface K6Summary {
  tool: 'chatgate-k6';
  format_version: number;
  script: string;
  identity: {
    test_id: string | null; script: string; segment: string; segment_sequence: string | null;
    runner: number; runners: number; settings: Record<string, unknown>;
  };
  target: string | null;
  durationMs: number | null;
  /** When the runner ran, on its own clock (lib/summary.ts runTimes); absent in summaries of older builds, started_at null with why when k6 did not say. */
  started_at?: string | null;
  finished_at?: string | null;
  started_at_unknown?: string;
  /** A merge's: why started_at or finished_at is null. */
  times_unknown?: string;
  result: string;
  thresholds: Array<{ metric: string; expression: string; ok: boolean; judged: boolean; observed?: string }>;
  warnings: string[];
  checks: Array<{ name: string; passes: number; fails: number }>;
  metrics: Record<string, K6Metric>;
  distributions: Record<string, { trend: string; relative_error: number; counts: Record<string, number>; count: number; min: number | null; max: number | null; sum: number | null }>;
  loadMetrics?: Record<string, number | null>;
  /** The runner's proxy variables, credentials masked ({}: direct); absent in summaries of older builds. */
  proxy_env?: Record<string, string>;
  [k: string]: unknown;
}

type Input = { path: string; kind: 'k6'; doc: K6Summary } | { path: string; kind: 'load'; doc: LoadSummary };
/** A k6 runner's `--out json` output, reduced to its time slices (SLICE set; lib/slices.ts) and its SVC-9 findings' bodies (k6-cross-talk.ts). */
export interface PointsInput { path: string; slices?: RunnerSlices; witnesses: Witness[] }

/** Whether a file is k6's `--out json` output (one JSON object a line: Metric and Point). */
function isK6Points(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(512);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return /^\{"(type|metric)":"?/.test(buf.toString('utf8', 0, n)) && /"type":"(Metric|Point)"/.test(buf.toString('utf8', 0, n));
  } finally {
    closeSync(fd);
  }
}

/** A file's lines, read a MiB at a time (a long run's k6 output is larger than a string may be). */
function* linesOf(path: string): Generator<string> {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(1 << 20);
    let rest = '';
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      const lines = (rest + buf.toString('utf8', 0, n)).split('\n');
      rest = lines.pop()!;
      yield* lines;
    }
    if (rest) yield rest;
  } finally {
    closeSync(fd);
  }
}

function* tap(lines: Iterable<string>, each: (line: string) => void): Generator<string> {
  for (const line of lines) {
    each(line);
    yield line;
  }
}

function parseDoc(path: string, text: string): Input | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new MergeError(`${path}: cannot read it as JSON (${(e as Error).message.split('\n')[0]}); give chatgate summary files or a folder of them`);
  }
  const d = doc as Record<string, unknown>;
  if (d && d.tool === 'chatgate-k6') {
    if (typeof d.identity !== 'object' || typeof d.distributions !== 'object') {
      throw new MergeError(`${path}: a k6 summary without runner identity or distributions (written by an older build); rebuild the bundles (npm run build:k6) and run again`);
    }
    return { path, kind: 'k6', doc: d as K6Summary };
  }
  if (d && d.format === SUMMARY_FORMAT) return { path, kind: 'load', doc: d as unknown as LoadSummary };
  return undefined;
}

/** Summary files from the arguments: files as given, folders' *.json and *.log (k6 summaries printed on stdout). */
export function readInputs(args: string[], points: PointsInput[] = []): Input[] {
  const out: Input[] = [];
  const readOne = (path: string, explicit: boolean): void => {
    try {
      if (isK6Points(path)) {
        const witnesses: Witness[] = [];
        // One pass over a file that may be GiBs: slices and SVC-9 witnesses together.
        const slices = slicesFromPoints(tap(linesOf(path), (line) => {
          const w = witnessOfLine(line);
          if (w) witnesses.push(w);
        }), path);
        if (slices || witnesses.length) points.push({ path, ...(slices ? { slices } : {}), witnesses });
        else if (explicit) throw new MergeError(`${path}: k6 output with neither slices nor SVC-9 findings, nothing the merge reads; run chat-stream-sse with SLICE set (e.g. -e SLICE=5s), or leave the file out`);
        return;
      }
    } catch (e) {
      if (e instanceof SliceError) throw new MergeError(e.message);
      if (e instanceof MergeError) throw e;
      // unreadable: said below
    }
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      throw new MergeError(`${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    if (!path.endsWith('.json')) {
      // A log: every line with the marker is one runner's summary (kubectl logs of many pods).
      let n = 0;
      text.split(/\r?\n/).forEach((line, i) => {
        const at = line.indexOf(STDOUT_MARKER);
        if (at < 0) return;
        const input = parseDoc(`${path}:${i + 1}`, line.slice(at + STDOUT_MARKER.length));
        if (input) { out.push(input); n++; }
      });
      if (n === 0 && explicit) throw new MergeError(`${path}: no "${STDOUT_MARKER.trim()}" line in it; run the runners with SUMMARY_STDOUT=1, or give the summary .json files`);
      return;
    }
    const input = parseDoc(path, text);
    if (input) out.push(input);
    else if (explicit) throw new MergeError(`${path}: not a chatgate summary (neither a k6 summary nor a load summary.json)`);
  };
  for (const arg of args) {
    let st;
    try {
      st = statSync(arg);
    } catch {
      throw new MergeError(`${arg}: no such file or folder`);
    }
    if (st.isDirectory()) {
      for (const f of readdirSync(arg).sort()) {
        if (/(^summary\.json$|-summary\.json$|\.log$|\.ndjson$|-points\.json$)/.test(f) && !f.includes('-merged-')) readOne(join(arg, f), false);
      }
    } else readOne(arg, true);
  }
  if (out.length === 0 && points.length > 0) throw new MergeError(`${points.map((p) => p.path).join(', ')}: k6 outputs without the runners' summaries; give the k6-*-summary.json files (or their logs) too`);
  if (points.length > 0 && out.some((i) => i.kind !== 'k6')) throw new MergeError(`${points[0]!.path}: k6 output beside Node load summaries; slices of k6 runners merge with their k6 summaries only`);
  if (out.length === 0) throw new MergeError(`no chatgate summaries in ${args.join(', ')}; give k6-*-summary.json files, summary.json files or a folder holding them`);
  if (new Set(out.map((i) => i.kind)).size > 1) throw new MergeError('k6 summaries and Node load summaries cannot be merged together: merge each kind on its own');
  return out;
}

/** JSON with sorted keys, for a readable "which setting differs". */
function firstDifference(a: unknown, b: unknown, path = ''): string | undefined {
  if (isDeepStrictEqual(a, b)) return undefined;
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ra = a as Record<string, unknown>;
    const rb = b as Record<string, unknown>;
    for (const k of [...new Set([...Object.keys(ra), ...Object.keys(rb)])].sort()) {
      const d = firstDifference(ra[k], rb[k], path ? `${path}.${k}` : k);
      if (d) return d;
    }
  }
  return `${path || '(value)'}: ${JSON.stringify(a)?.slice(0, 80)} vs ${JSON.stringify(b)?.slice(0, 80)}`;
}

// ---------------------------------------------------------------- k6 summaries

export interface K6Merge {
  merged: K6Summary;
  /** One LoadSummary of the whole test, the format of a single `npm run load` run. */
  summary: LoadSummary;
  warnings: string[];
  crossed: boolean;
}

const SCENARIO_OF: Record<string, Scenario> = {
  'chat-stream-sse': 'stream', 'chat-stream': 'stream', 'chat-throughput': 'throughput', 'brain-mix': 'throughput', 'ratelimit-probe': 'rate-limit',
};

/** "p(95)<500" on merged values; undefined when the aggregate cannot be had from the merged data. */
function evaluate(m: K6Metric | undefined, expression: string): { ok: boolean; observed: string } | undefined {
  const e = /^\s*([a-z]+(?:\(\d+(?:\.\d+)?\))?)\s*(<=|>=|==|===|!=|<|>)\s*(-?\d*\.?\d+)\s*$/.exec(expression);
  if (!m || !e) return undefined;
  const v = m.values[e[1]!];
  if (v === undefined || v === null || !isFinite(v)) return undefined;
  const x = Number(e[3]);
  const ok = e[2] === '<' ? v < x : e[2] === '<=' ? v <= x : e[2] === '>' ? v > x : e[2] === '>=' ? v >= x : e[2] === '!=' ? v !== x : v === x;
  return { ok, observed: `${e[1]}=${Math.round(v * 10000) / 10000}` };
}

function noSamples(m: K6Metric): boolean {
  if (m.type === 'trend') return (m.values.count ?? 0) === 0;
  return m.type === 'rate' && (m.values.passes ?? 0) + (m.values.fails ?? 0) === 0;
}

/** "p(95)" -> 95, "med" -> 50. */
function percentileKey(k: string): number | undefined {
  if (k === 'med') return 50;
  const m = /^p\((\d+(?:\.\d+)?)\)$/.exec(k);
  return m ? Number(m[1]) : undefined;
}

export function mergeK6(inputs: Array<{ path: string; doc: K6Summary }>, points: PointsInput[] = []): K6Merge {
  const first = inputs[0]!;
  const id0 = first.doc.identity;
  const warnings: string[] = [];
  const seen = new Map<string, string>();
  for (const { path, doc } of inputs) {
    const id = doc.identity;
    const what = (k: string, a: unknown, b: unknown) => new MergeError(`${path} and ${first.path} are not runners of one test: ${k} differs (${String(a)} vs ${String(b)}); merge the summaries of one test run only`);
    if (id.test_id !== id0.test_id) throw what('test id', id.test_id, id0.test_id);
    if (id.script !== id0.script) throw what('script', id.script, id0.script);
    if (id.segment_sequence !== id0.segment_sequence) throw what('execution segment sequence', id.segment_sequence, id0.segment_sequence);
    const diff = firstDifference(id.settings, id0.settings);
    if (diff) throw new MergeError(`${path} and ${first.path} are not runners of one test: their settings differ (${redact(diff)}); merge the summaries of one test run only`);
    const other = seen.get(id.segment);
    if (other) throw new MergeError(`${path} and ${other} are the same runner (execution segment ${id.segment}): a summary given twice, or two test runs mixed; give each runner's summary once`);
    seen.set(id.segment, path);
  }
  if (id0.runners > 0 && inputs.length < id0.runners) {
    warnings.push(`${inputs.length} of ${id0.runners} runners' summaries: the figures cover part of the test (missing runners ${missing(inputs.map((i) => i.doc.identity.runner), id0.runners).join(', ')})`);
  }

  // Counters add; rates add passes and fails; trends add counts and buckets.
  const names = [...new Set(inputs.flatMap((i) => Object.keys(i.doc.metrics)))].sort();
  const metrics: Record<string, K6Metric> = {};
  const durationMs = Math.max(...inputs.map((i) => i.doc.durationMs ?? 0));
  const dists: K6Summary['distributions'] = {};
  for (const { doc } of inputs) {
    for (const [fam, d] of Object.entries(doc.distributions)) {
      const t = (dists[fam] ??= { trend: d.trend, relative_error: d.relative_error, counts: {}, count: 0, min: null, max: null, sum: 0 });
      addCounts(t.counts, d.counts);
      t.count += d.count;
      t.min = d.min === null ? t.min : t.min === null ? d.min : Math.min(t.min, d.min);
      t.max = d.max === null ? t.max : t.max === null ? d.max : Math.max(t.max, d.max);
      t.sum = t.sum === null || d.sum === null ? null : t.sum + d.sum;
    }
  }
  const byTrend = new Map(Object.values(dists).map((d) => [d.trend, d]));
  for (const name of names) {
    const parts = inputs.map((i) => i.doc.metrics[name]).filter((m): m is K6Metric => m !== undefined);
    const m0 = parts[0]!;
    const values: Record<string, number> = {};
    const sum = (k: string) => parts.reduce((s, p) => s + (p.values[k] ?? 0), 0);
    if (m0.type === 'counter') {
      values.count = sum('count');
      values.rate = durationMs > 0 ? values.count / (durationMs / 1000) : 0;
    } else if (m0.type === 'rate') {
      values.passes = sum('passes');
      values.fails = sum('fails');
      values.rate = values.passes + values.fails > 0 ? values.passes / (values.passes + values.fails) : 0;
    } else if (m0.type === 'gauge') {
      // Gauges (VUs) of runners running side by side add up; their min/max are the runners' summed.
      for (const k of Object.keys(m0.values)) values[k] = sum(k);
    } else {
      const count = sum('count');
      values.count = count;
      values.avg = count > 0 ? parts.reduce((s, p) => s + (p.values.avg ?? 0) * (p.values.count ?? 0), 0) / count : 0;
      values.min = Math.min(...parts.map((p) => p.values.min ?? Infinity));
      values.max = Math.max(...parts.map((p) => p.values.max ?? -Infinity));
      const d = byTrend.get(name);
      for (const k of Object.keys(m0.values)) {
        const q = percentileKey(k);
        if (q === undefined) continue;
        // A percentile adds across runners only through the buckets; without them it is left out, not guessed.
        const v = d ? bucketPercentile(d.counts, q, values.min, values.max) : null;
        if (v !== null) values[k] = v;
      }
    }
    metrics[name] = { type: m0.type, contains: m0.contains, values };
  }
  const checks = new Map<string, { name: string; passes: number; fails: number }>();
  for (const { doc } of inputs) {
    for (const c of doc.checks) {
      const t = checks.get(c.name) ?? { name: c.name, passes: 0, fails: 0 };
      t.passes += c.passes;
      t.fails += c.fails;
      checks.set(c.name, t);
    }
  }
  const thresholds: ThresholdVerdict[] = [];
  for (const t of first.doc.thresholds) {
    const m = metrics[t.metric];
    const runnersOk = inputs.map((i) => i.doc.thresholds.find((x) => x.metric === t.metric && x.expression === t.expression)?.ok ?? true);
    if (!m || noSamples(m)) {
      thresholds.push({ metric: t.metric, expression: t.expression, ok: true, judged: false, observed: 'no samples', runners_ok: runnersOk });
      continue;
    }
    const r = evaluate(m, t.expression);
    if (!r) thresholds.push({ metric: t.metric, expression: t.expression, ok: true, judged: false, observed: 'not mergeable (no buckets for this metric)', runners_ok: runnersOk });
    else thresholds.push({ metric: t.metric, expression: t.expression, ok: r.ok, judged: true, observed: r.observed, runners_ok: runnersOk });
  }
  let slices: { slice_s: number; runners: number; rows: K6SliceRow[] } | undefined;
  const sliced = points.filter((p): p is PointsInput & { slices: RunnerSlices } => p.slices !== undefined);
  try {
    const sum = mergeSlices(sliced);
    if (sum) slices = { slice_s: sum.slice_s, runners: sliced.length, rows: sliceRows(sum) };
  } catch (e) {
    if (e instanceof SliceError) throw new MergeError(e.message);
    throw e;
  }
  if (slices && sliced.length < inputs.length) warnings.push(`slices from ${sliced.length} of ${inputs.length} runners' k6 outputs: the slices cover part of the test`);
  const crossed = thresholds.some((t) => t.judged && !t.ok);
  const result = crossed ? 'fail' : thresholds.every((t) => t.judged) ? 'pass' : 'incomplete';
  const runnerWarnings = [...new Set(inputs.flatMap((i) => i.doc.warnings ?? []))];
  const merged: K6Summary = {
    tool: 'chatgate-k6',
    format_version: first.doc.format_version,
    script: first.doc.script,
    identity: { ...id0, segment: 'merged', runner: 0, runners: id0.runners },
    merged_from: inputs.map((i) => ({ file: basename(i.path), segment: i.doc.identity.segment, runner: i.doc.identity.runner, result: i.doc.result, started_at: i.doc.started_at ?? null, finished_at: i.doc.finished_at ?? null })),
    target: first.doc.target,
    durationMs,
    ...runnersTimes(inputs),
    result,
    thresholds,
    warnings: [...warnings, ...runnerWarnings],
    checks: [...checks.values()],
    metrics,
    distributions: dists,
    ...(metrics.ttft_ms ? { loadMetrics: loadMetrics(metrics, durationMs) } : {}),
    ...(slices ? { slices } : {}),
  };
  const witnesses = points.flatMap((p) => p.witnesses);
  return { merged, summary: k6LoadSummary(merged, inputs.map((i) => i.doc), witnesses), warnings, crossed };
}

/**
 * The whole test's time: the earliest runner's start and the latest runner's end, each on its
 * runner's clock; null, saying why, when a runner's summary does not record its own.
 */
function runnersTimes(inputs: Array<{ path: string; doc: K6Summary }>): Pick<K6Summary, 'started_at' | 'finished_at' | 'times_unknown'> {
  const why: string[] = [];
  const edge = (field: 'started_at' | 'finished_at', pick: (...ms: number[]) => number): string | null => {
    const lacking = inputs.filter((i) => typeof i.doc[field] !== 'string' || !isFinite(Date.parse(i.doc[field] as string)));
    if (lacking.length === 0) return new Date(pick(...inputs.map((i) => Date.parse(i.doc[field] as string)))).toISOString();
    const reasons = [...new Set(lacking.map((i) => (i.doc[field] === undefined ? 'a summary of an older build (rebuild the bundles: npm run build:k6)' : i.doc.started_at_unknown ?? 'not recorded')))];
    why.push(`${field}: not recorded by runner${lacking.length === 1 ? '' : 's'} ${lacking.map((i) => i.doc.identity.runner).join(', ')} (${reasons.join('; ')})`);
    return null;
  };
  const started_at = edge('started_at', Math.min);
  const finished_at = edge('finished_at', Math.max);
  return { started_at, finished_at, ...(why.length ? { times_unknown: why.join('; ') } : {}) };
}

/** A k6 summary's target as the Node runs name theirs; an address that does not parse counts as remote. */
function k6TargetKind(target: string | null): LoadSummary['target']['kind'] {
  try {
    return targetKind(new URL(target ?? ''));
  } catch {
    return 'remote';
  }
}

function missing(have: number[], n: number): number[] {
  const out: number[] = [];
  for (let i = 1; i <= n; i++) if (!have.includes(i)) out.push(i);
  return out;
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** The HEADERS the runners sent (their summaries' settings, secret values redacted), for the curl lines; one line, exit 2, when unreadable. */
function runHeaders(k: K6Summary): string | undefined {
  const text = (k.identity.settings.env as Record<string, unknown> | undefined)?.HEADERS;
  if (typeof text !== 'string') return undefined;
  const parsed = parseHeaderLines(text);
  if ('problem' in parsed) throw new MergeError(`the runners' summaries record a HEADERS setting that cannot be read (${parsed.problem}); give summaries written by the k6 scripts`);
  return text;
}

/**
 * The proxy the runners sent through, for the curl lines: the variables every runner's
 * summary recorded (credentials masked), else said whose the lines use instead.
 */
function runProxy(parts: K6Summary[], shell: NodeJS.ProcessEnv): { proxyEnv: Record<string, string>; proxyNote?: string } {
  const recorded = parts.map((p) => p.proxy_env);
  if (recorded.every((r): r is Record<string, string> => r !== null && typeof r === 'object')) {
    const first = recorded[0]!;
    const target = parts[0]!.target ?? '';
    if (recorded.every((r) => isDeepStrictEqual(r, first))) return { proxyEnv: asK6ReadsThem(first, target) };
    return { proxyEnv: asK6ReadsThem(first, target), proxyNote: `the runners ran with different proxy settings: the --proxy of these lines is runner ${parts[0]!.identity.runner}'s (${JSON.stringify(first)})` };
  }
  const own: Record<string, string> = {};
  for (const name of PROXY_VARIABLES) if (shell[name]?.trim()) own[name] = shell[name]!.trim();
  return { proxyEnv: own, proxyNote: "the runners' summaries do not record their proxy (an older build): the --proxy of these lines, if any, is the merging shell's, not necessarily the runners'" };
}

/**
 * The proxy variables as k6 (Go's net/http) applied them, for curl (lib/http/proxy.ts,
 * curl's reading): the upper-case name wins, and localhost and loopback targets go direct.
 */
function asK6ReadsThem(vars: Record<string, string>, target: string): Record<string, string> {
  const host = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/]*@)?(\[[^\]]*\]|[^:/]*)/i.exec(target)?.[1]?.replace(/^\[|\]$/g, '').toLowerCase() ?? '';
  if (host === 'localhost' || /^127\./.test(host) || host === '::1') return {};
  const out: Record<string, string> = {};
  for (const name of ['https_proxy', 'http_proxy', 'no_proxy']) {
    const v = vars[name.toUpperCase()] ?? vars[name];
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** Why a k6 merge has no driver figures. */
export const K6_DRIVER_NOT_MEASURED = "k6 runners' summaries carry no figures of their own load (CPU, memory); a runner near 100 % CPU may have set the figures: watch each runner machine (or pod) while it runs";

/** The runners' settings as the merged run's options; scenarios left out when the summaries recorded none (k6 builds that emptied them). */
function k6Options(k: K6Summary): Record<string, unknown> {
  const { scenarios, ...rest } = k.identity.settings as Record<string, unknown>;
  const ran = scenarios && typeof scenarios === 'object' && Object.keys(scenarios).length > 0;
  return { k6_script: k.script, test_id: k.identity.test_id, ...(ran ? { scenarios } : {}), ...rest };
}

/** The merged k6 figures as a load summary.json (driver-named metrics, latencies, plots from the buckets). */
function k6LoadSummary(k: K6Summary, parts: K6Summary[], witnesses: Witness[] = []): LoadSummary {
  const m = k.metrics;
  const count = (n: string) => m[n]?.values.count ?? 0;
  const secs = Math.max(0.001, (k.durationMs ?? 0) / 1000);
  const stream = k.script === 'chat-stream-sse';
  const requests = stream ? count('streams_ok') + (m.chatgate_stream_failed?.values.passes ?? 0) + count('chatgate_status_429') : Math.max(0, count('http_reqs') - parts.length); // less setup()'s GET /models per runner
  const failed = stream ? m.chatgate_stream_failed?.values.passes ?? 0 : m.http_req_failed?.values.passes ?? 0;
  const latencies: Record<string, LatencySummary> = {};
  const percentiles: LoadSummary['plots']['percentiles'] = {};
  const buckets: LoadSummary['plots']['buckets'] = {};
  for (const [fam, d] of Object.entries(k.distributions)) {
    const name = fam === 'req_ms' ? 'latency_ms' : fam;
    const p = (q: number) => round3(bucketPercentile(d.counts, q, d.min ?? undefined, d.max ?? undefined) ?? 0);
    latencies[name] = {
      count: d.count, min_ms: round3(d.min ?? 0), mean_ms: d.sum !== null && d.count > 0 ? round3(d.sum / d.count) : 0,
      p50_ms: p(50), p90_ms: p(90), p95_ms: p(95), p99_ms: p(99), p999_ms: p(99.9), max_ms: round3(d.max ?? 0),
    };
    // As far as the samples reach, as every curve (histogram.ts): 105 samples draw no p99.9.
    const ps = plotPercentiles(d.count);
    percentiles[name] = { percentile: ps, value_ms: ps.map(p) };
    buckets[name] = { bucket_ms: Object.keys(d.counts).map((b) => round3(bucketValue(Number(b)))), count: Object.values(d.counts) };
  }
  const metrics: Partial<Record<MetricName, number | null>> = {
    // The requests counted (setup()'s GET /models left out), as counts.responses: any status.
    responses_rps: round3(requests / secs),
    share_429: m.chatgate_rate_limited ? round3(m.chatgate_rate_limited.values.rate ?? 0) : null,
    ...(stream ? (loadMetrics(m, k.durationMs ?? undefined) as Partial<Record<MetricName, number | null>>) : {}),
  };
  if (latencies.latency_ms) {
    metrics.latency_p50_ms = latencies.latency_ms.p50_ms;
    metrics.latency_p90_ms = latencies.latency_ms.p90_ms;
    metrics.latency_p95_ms = latencies.latency_ms.p95_ms;
    metrics.latency_p99_ms = latencies.latency_ms.p99_ms;
  }
  // A threshold is the user's limit, not a clause of the spec: listed for the reader (INFO), judged by the exit code (99).
  const findings: Finding[] = k.thresholds.filter((t) => t.judged && !t.ok).map((t) => ({
    clause: 'threshold', level: 'INFO', count: 1, message: `k6 threshold crossed on the whole test: ${t.metric} ${t.expression} (${t.observed ?? ''}); merge exits 99`,
  }));
  // SVC-9 on its clause, with curl lines where the runners' --out json outputs carried the bodies.
  const crossTalk = k6CrossTalkFinding(count('chatgate_cross_talk'), witnesses, { target: k.target ?? '', headers: runHeaders(k), ...runProxy(parts, process.env) });
  if (crossTalk) findings.unshift(crossTalk);
  return {
    format: SUMMARY_FORMAT,
    format_version: SUMMARY_VERSION,
    scenario: SCENARIO_OF[k.script] ?? 'throughput',
    partial: k.warnings.some((w) => w.includes('cover part of the test')),
    stop_reason: `merged from ${parts.length} k6 runner${parts.length === 1 ? '' : 's'} (${k.script}); thresholds on the whole test: ${k.result.toUpperCase()}`,
    // The runners' own times (the rates' duration_s is the longest runner's run); null, saying why, where a runner recorded none.
    started_at: k.started_at ?? null,
    finished_at: k.finished_at ?? null,
    ...(k.times_unknown ? { times_unknown: k.times_unknown } : {}),
    duration_s: round3(secs),
    target: { url: k.target ?? '', kind: k6TargetKind(k.target) },
    options: k6Options(k),
    // No figure of the runners' own load exists: none is given, rather than zeros that read as measured.
    driver: null,
    driver_not_measured: K6_DRIVER_NOT_MEASURED,
    counts: { sent: requests, not_sent: count('dropped_iterations'), responses: requests, ok: requests - failed, failed, aborted_at_stop: 0 },
    status_codes: { 429: count('chatgate_status_429'), 503: count('chatgate_status_503') },
    failures: { body_shape: count('chatgate_body_shape_failures') },
    failure_examples: [],
    latencies,
    output: m.output_tokens ? { output_tokens: count('output_tokens'), output_tokens_per_s: round3(count('output_tokens') / secs) } : null,
    routes: {},
    body_checks: { checked: requests, invalid: count('chatgate_body_shape_failures') },
    error_answers: { checked: 0, improper: 0 },
    findings,
    details: { k6: { script: k.script, result: k.result, thresholds: k.thresholds, checks: k.checks, merged_from: k.merged_from, bucket_scheme: BUCKET_SCHEME, relative_error: RELATIVE_ERROR, ...(k.slices ? { slices: k.slices } : {}) } },
    metrics,
    timeline: [],
    plots: { percentiles, buckets, extra: {} },
    hdr_us: {},
    baseline: null,
  };
}

// ---------------------------------------------------------------- Node load summaries

/** The histogram behind each percentile metric of metric-names.ts. */
const PERCENTILE_METRICS: Record<string, [string, number]> = {
  latency_p50_ms: ['latency', 50], latency_p90_ms: ['latency', 90], latency_p95_ms: ['latency', 95], latency_p99_ms: ['latency', 99],
  ttft_p50_ms: ['ttft', 50], ttft_p95_ms: ['ttft', 95], ttft_p99_ms: ['ttft', 99],
  itl_p50_ms: ['itl', 50], itl_p95_ms: ['itl', 95], itl_p99_ms: ['itl', 99],
  tpot_p50_ms: ['tpot', 50], e2e_p50_ms: ['e2e', 50], e2e_p95_ms: ['e2e', 95], e2e_p99_ms: ['e2e', 99],
};
/** Shares of sent requests: weighted by each run's sent count. */
const SHARE_METRICS = ['error_share', 'share_429', 'share_503', 'share_5xx_other', 'share_transport_errors'];

/** Figures that do not add: a percentile, mean, share or ratio of one run (null when merged, never a sum). */
const NOT_ADDITIVE = /(^|_)(p\d+(\.\d+)?|mean|avg|median|share|ratio)(_|$)/;

/**
 * Adds numbers, and objects of numbers key by key (min and max keep the extreme, a
 * percentile, mean or share becomes null); anything else keeps the first run's value.
 */
function addDeep(a: unknown, b: unknown, key = ''): unknown {
  if (typeof a === 'number' && typeof b === 'number') {
    if (NOT_ADDITIVE.test(key)) return null;
    if (/(^|_)min(_|$)/.test(key)) return Math.min(a, b);
    if (/(^|_)max(_|$)/.test(key)) return Math.max(a, b);
    return a + b;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
    for (const [k, v] of Object.entries(b as Record<string, unknown>)) out[k] = k in out ? addDeep(out[k], v, k) : v;
    return out;
  }
  if (a === null && typeof b === 'number' && NOT_ADDITIVE.test(key)) return null;
  return a === undefined ? b : a;
}

/** Options that say where a run wrote and how it talked, not what it measured: they may differ between the merged runs. */
const NOT_SETTINGS = ['out', 'quiet', 'baseline', 'thresholds', 'dry_run', 'allow_remote', 'drain'];
const measuredOptions = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o ?? {}).filter(([k]) => !NOT_SETTINGS.includes(k)));

export function mergeLoad(inputs: Array<{ path: string; doc: LoadSummary }>): { summary: LoadSummary; warnings: string[] } {
  const first = inputs[0]!;
  const warnings: string[] = [];
  for (const { path, doc } of inputs.slice(1)) {
    if (doc.scenario !== first.doc.scenario) throw new MergeError(`${path} and ${first.path} are not parts of one test: scenario ${doc.scenario} vs ${first.doc.scenario}`);
    if (doc.target.url !== first.doc.target.url) throw new MergeError(`${path} and ${first.path} are not parts of one test: target ${redact(doc.target.url)} vs ${redact(first.doc.target.url)}`);
    const diff = firstDifference(measuredOptions(doc.options), measuredOptions(first.doc.options));
    if (diff) throw new MergeError(`${path} and ${first.path} are not parts of one test: their options differ (${redact(diff)}); merge runs of the same settings only`);
  }
  const docs = inputs.map((i) => i.doc);
  // Histograms merge exactly (HDR, 3 digits): every latency and percentile comes from them.
  const hist = new Map<string, LatencyHistogram>();
  for (const d of docs) {
    for (const [name, b64] of Object.entries(d.hdr_us ?? {})) {
      const h = LatencyHistogram.decode(b64);
      const t = hist.get(name);
      if (t) t.add(h); else hist.set(name, h);
    }
  }
  // A run that recorded no time (a merge of k6 runners that did not) leaves the merged time unknown, not guessed.
  const timed = docs.every((d) => typeof d.started_at === 'string' && typeof d.finished_at === 'string');
  const started = timed ? Math.min(...docs.map((d) => Date.parse(d.started_at!))) : NaN;
  const finished = timed ? Math.max(...docs.map((d) => Date.parse(d.finished_at!))) : NaN;
  const untimed = docs.find((d) => d.started_at === null || d.finished_at === null);
  const latencies: Record<string, LatencySummary> = { ...first.doc.latencies };
  const percentiles: LoadSummary['plots']['percentiles'] = {};
  const buckets: LoadSummary['plots']['buckets'] = {};
  const hdr: Record<string, string> = {};
  for (const [name, h] of hist) {
    latencies[`${name}_ms`] = h.summary();
    percentiles[`${name}_ms`] = h.percentilePlot();
    buckets[`${name}_ms`] = h.bucketPlot();
    hdr[name] = h.encode();
  }
  const sent = docs.reduce((s, d) => s + d.counts.sent, 0);
  const checked = docs.reduce((s, d) => s + d.body_checks.checked, 0);
  const metrics: Record<string, number | null> = {};
  for (const name of new Set(docs.flatMap((d) => Object.keys(d.metrics)))) {
    const vals = docs.map((d) => (d.metrics as Record<string, number | null | undefined>)[name]);
    const nums = vals.filter((v): v is number => typeof v === 'number');
    if (name in PERCENTILE_METRICS) {
      const [h, q] = PERCENTILE_METRICS[name]!;
      const m = hist.get(h);
      metrics[name] = m && m.count > 0 ? m.percentileMs(q) : null;
    } else if (SHARE_METRICS.includes(name)) {
      metrics[name] = sent > 0 && nums.length === docs.length ? round3(docs.reduce((s, d, i) => s + (vals[i] as number) * d.counts.sent, 0) / sent) : null;
    } else if (name === 'body_invalid_share') {
      metrics[name] = checked > 0 && nums.length === docs.length ? round3(docs.reduce((s, d, i) => s + (vals[i] as number) * d.body_checks.checked, 0) / checked) : null;
    } else if (/_rps$|_per_s$|^driver_cpu_cores$/.test(name) && !/^(max_rate_meeting_slo|first_429_offered|max_ok)_rps$/.test(name)) {
      // Runs side by side: their rates (and their drivers' CPU) add.
      metrics[name] = nums.length === docs.length ? round3(nums.reduce((s, v) => s + v, 0)) : null;
    } else {
      metrics[name] = null;
      warnings.push(`${name}: a figure of one run (a sweep step or a probe's moment), not merged; read it in each run's own summary`);
    }
  }
  const findings = new Map<string, Finding>();
  for (const d of docs) {
    for (const f of d.findings) {
      const key = `${f.clause}\u0000${f.message}`;
      const t = findings.get(key);
      if (t) t.count += f.count; else findings.set(key, { ...f });
    }
  }
  const known = new Set(['format', 'format_version', 'scenario', 'partial', 'stop_reason', 'started_at', 'finished_at', 'times_unknown', 'duration_s', 'target', 'options', 'driver', 'driver_not_measured', 'counts', 'status_codes', 'failures', 'failure_examples', 'latencies', 'output', 'routes', 'body_checks', 'error_answers', 'findings', 'details', 'metrics', 'timeline', 'plots', 'hdr_us', 'baseline']);
  // Fields other tools add later: numbers (and objects of numbers) add, other values keep the first run's.
  const extra: Record<string, unknown> = {};
  for (const d of docs) for (const [k, v] of Object.entries(d)) if (!known.has(k)) extra[k] = k in extra ? addDeep(extra[k], v, k) : v;
  const sumOf = <T>(pick: (d: LoadSummary) => T) => docs.map(pick).reduce((a, b) => addDeep(a, b) as T);
  const summary: LoadSummary = {
    ...extra,
    format: SUMMARY_FORMAT,
    format_version: first.doc.format_version,
    scenario: first.doc.scenario,
    partial: docs.some((d) => d.partial),
    stop_reason: `merged from ${docs.length} runs (${[...new Set(docs.map((d) => d.stop_reason))].join(', ')})`,
    started_at: timed ? new Date(started).toISOString() : null,
    finished_at: timed ? new Date(finished).toISOString() : null,
    ...(timed ? {} : { times_unknown: `not recorded in every merged run${untimed?.times_unknown ? ` (${untimed.times_unknown})` : ''}; duration_s is the longest run's` }),
    duration_s: timed ? round3((finished - started) / 1000) : Math.max(...docs.map((d) => d.duration_s)),
    target: first.doc.target,
    options: first.doc.options,
    ...mergedDrivers(docs),
    counts: sumOf((d) => d.counts),
    status_codes: sumOf((d) => d.status_codes),
    failures: sumOf((d) => d.failures),
    failure_examples: docs.flatMap((d) => d.failure_examples).slice(0, 20),
    latencies,
    output: docs.every((d) => d.output === null) ? null : sumOf((d) => d.output ?? {}),
    routes: sumOf((d) => d.routes),
    body_checks: sumOf((d) => d.body_checks),
    error_answers: sumOf((d) => d.error_answers),
    findings: [...findings.values()],
    details: { ...first.doc.details, merged_from: inputs.map((i) => ({ file: i.path, started_at: i.doc.started_at, duration_s: i.doc.duration_s })) },
    metrics: metrics as LoadSummary['metrics'],
    // Per-second points add by their second from each run's start (runs started together).
    timeline: mergeTimelines(docs.map((d) => d.timeline)),
    plots: { percentiles, buckets, extra: first.doc.plots.extra },
    hdr_us: hdr,
    baseline: null,
  };
  return { summary, warnings };
}

/** The runs' drivers together (CPU adds, the worst event loop and memory); not measured when one run's was not. */
function mergedDrivers(docs: LoadSummary[]): Pick<LoadSummary, 'driver' | 'driver_not_measured'> {
  const ds = docs.map((d) => d.driver);
  if (!ds.every((d): d is NonNullable<typeof d> => d !== null && typeof d === 'object')) {
    const why = docs.find((d) => !d.driver)?.driver_not_measured;
    return { driver: null, driver_not_measured: `not measured in every merged run${why ? ` (${why})` : ''}` };
  }
  const max = (k: 'event_loop_utilization' | 'event_loop_delay_p99_ms' | 'max_rss_mib' | 'schedule_lag_p99_ms') => Math.max(...ds.map((d) => d[k]));
  const sum = ds.slice(1).reduce<unknown>((a, b) => addDeep(a, b), ds[0]) as NonNullable<LoadSummary['driver']>;
  return { driver: { ...sum, event_loop_utilization: max('event_loop_utilization'), event_loop_delay_p99_ms: max('event_loop_delay_p99_ms'), max_rss_mib: max('max_rss_mib'), schedule_lag_p99_ms: max('schedule_lag_p99_ms'), node_version: ds[0]!.node_version } };
}

/** The larger of two per-second figures; null (a second without answers) gives way to a figure. */
function worst(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.max(a, b);
}

function mergeTimelines(lines: LoadSummary['timeline'][]): LoadSummary['timeline'] {
  const out: LoadSummary['timeline'] = [];
  for (const line of lines) {
    line.forEach((p, i) => {
      const t = out[i];
      // p50/p95 of a second cannot be added: the worst runner's is shown.
      out[i] = t ? { ...(addDeep(t, p) as typeof p), t_s: t.t_s, p50_ms: worst(t.p50_ms, p.p50_ms), p95_ms: worst(t.p95_ms, p.p95_ms) } : { ...p };
    });
  }
  return out;
}

// ---------------------------------------------------------------- the subcommand

export const MERGE_HELP = `npm run load -- merge <summary files or folders> [--out DIR] [--baseline FILE] [--threshold metric=10% | metric<limit] [--strict]
  merges k6 runners' k6-*-summary.json (or logs with SUMMARY_STDOUT=1 lines), or Node summary.json files, into one summary.json + report.html.
  k6 runners' --out json outputs of chat-stream-sse run with SLICE (files, or *.ndjson in a folder) add per-slice figures.
  exit: 0 passed; 99 a k6 threshold crossed on the merged figures; 1 findings, a baseline regression or a metric<limit broken; 2 bad input`;

/** `npm run load -- merge ...`: the exit code of a single run (k6: 0 or 99; Node: 0 or 1), 2 on bad input. */
export function mergeMain(argv: string[], env: NodeJS.ProcessEnv, log: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): number {
  const fail = (message: string): number => {
    process.stderr.write(`chatgate load merge: ${redact(message)}\n`);
    return 2;
  };
  let values: Record<string, unknown>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseCommandLine({ args: argv, allowPositionals: true, strict: true, options: {
      out: { type: 'string' }, baseline: { type: 'string' }, threshold: { type: 'string', multiple: true }, strict: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
    } }));
  } catch (e) {
    return fail(`${(e as Error).message.split('\n')[0]}; usage: ${MERGE_HELP.split('\n')[0]}`);
  }
  if (values.help) {
    log(MERGE_HELP);
    return 0;
  }
  if (positionals.length === 0) return fail(`no summaries given; usage: ${MERGE_HELP.split('\n')[0]}`);
  let inputs: Input[];
  const points: PointsInput[] = [];
  let thresholds;
  let limits: Limit[];
  try {
    inputs = readInputs(positionals, points);
    thresholds = parseThresholds((values.threshold as string[] | undefined) ?? []);
    limits = parseLimits((values.threshold as string[] | undefined) ?? []);
  } catch (e) {
    if (e instanceof MergeError || e instanceof UsageError) return fail(e.message);
    throw e;
  }
  let summary: LoadSummary;
  let k6: K6Merge | undefined;
  let warnings: string[];
  try {
    if (inputs[0]!.kind === 'k6') {
      k6 = mergeK6(inputs as Array<{ path: string; doc: K6Summary }>, points);
      summary = k6.summary;
      warnings = k6.warnings;
    } else ({ summary, warnings } = mergeLoad(inputs as Array<{ path: string; doc: LoadSummary }>));
  } catch (e) {
    if (e instanceof MergeError) return fail(e.message);
    throw e;
  }
  let regressions = 0;
  if (values.baseline) {
    try {
      const base = loadBaseline(values.baseline as string, summary.scenario);
      summary.baseline = compareMetrics(summary.metrics, base, thresholds, undefined, { scenario: summary.scenario, hdr_us: summary.hdr_us, counts: summary.counts });
      regressions = summary.baseline.regressions;
    } catch (e) {
      if (e instanceof UsageError) return fail(e.message);
      throw e;
    }
  }
  // Absolute limits (--threshold metric<limit) judged on the merged figures, as a single run judges its own.
  if (limits.length) summary.gates = evaluateLimits(summary.metrics, limits);
  const outDir = resolve((values.out as string | undefined) ?? join(env.REPORTS_DIR || 'reports', 'load', `merged-${new Date().toISOString().replace(/[:.]/g, '-')}`));
  mkdirSync(outDir, { recursive: true });
  const summaryPath = writeSummary(outDir, summary);
  const htmlPath = writeHtmlReport(outDir, summary);
  const lines = [`chatgate load merge: ${inputs.length} ${k6 ? `k6 runner summaries of ${k6.merged.script}` : `${summary.scenario} runs`}`];
  for (const w of warnings) lines.push(`warning: ${w}`);
  if (k6) {
    const name = `k6-${k6.merged.script}${k6.merged.identity.test_id ? `-${k6.merged.identity.test_id.replace(/[^A-Za-z0-9._-]+/g, '_')}` : ''}-merged-summary.json`;
    writeFileSync(join(outDir, name), `${JSON.stringify(redactDeep(k6.merged), null, 2)}\n`);
    lines.push(`thresholds, judged on the whole test (percentiles from log buckets, within ${RELATIVE_ERROR * 100} % of the true ones):`);
    for (const t of k6.merged.thresholds as ThresholdVerdict[]) {
      const mark = !t.judged ? '–' : t.ok ? '✓' : '✗';
      const runners = t.runners_ok.map((ok) => (ok ? '✓' : '✗')).join('');
      lines.push(`  ${mark} ${t.metric.padEnd(40)} ${t.expression.padEnd(16)} ${t.judged ? t.observed ?? '' : t.observed ?? 'not judged'}   runners alone: ${runners}`);
    }
    const ct = summary.findings.find((f) => f.clause === 'SVC-9');
    if (ct) lines.push(`SVC-9 (${ct.level}): ${ct.count} repl${ct.count === 1 ? 'y was' : 'ies were'} another request's; ${ct.reproduce ? 'curl lines in summary.json and report.html' : ct.example ?? ''}`);
    const sl = k6.merged.slices as { slice_s: number; runners: number; rows: K6SliceRow[] } | undefined;
    if (sl) {
      writeFileSync(join(outDir, 'slices.csv'), slicesCsv(sl.rows, SLICE_CSV_COLUMNS));
      lines.push(`slices: ${sl.rows.length} of ${sl.slice_s} s from ${sl.runners} runners' k6 outputs (slices.csv, details.k6.slices; percentiles from each slice's summed buckets)`);
    }
    const lm = k6.merged.loadMetrics;
    if (lm) for (const [n, v] of Object.entries(lm)) lines.push(`  ${n.padEnd(22)}${v ?? 'n/a'}`);
    lines.push(`result: ${k6.merged.result.toUpperCase()}`);
    lines.push(`reports: ${summaryPath}\n         ${htmlPath}\n         ${join(outDir, name)}`);
  } else lines.push(`reports: ${summaryPath}\n         ${htmlPath}`);
  if (summary.baseline) lines.push(formatComparison(summary.baseline));
  for (const g of summary.gates?.checks ?? []) lines.push(gateLine(g));
  log(redact(lines.join('\n')));
  if (k6?.crossed) return 99;
  return regressions > 0 || (summary.gates?.failed ?? 0) > 0 || (!k6 && findingsFail(summary.findings, Boolean(values.strict) || env.STRICT === '1')) ? 1 : 0;
}
