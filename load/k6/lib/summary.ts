// handleSummary: a short text summary on stdout plus a JSON summary and JUnit XML
// file. Written here rather than imported from jslib.k6.io because a remote import
// needs network at run time, and the bundles must run offline (air-gapped runners,
// k6-operator pods without egress). Every output string is passed through redact():
// keys never reach a summary, even if a target echoed one into a check name.
import exec from 'k6/execution';
import { env, headersSetting, proxySetting, redact } from './config.ts';
import { describeLoadMetrics, loadMetrics } from './token-timing.ts';
import { DIST_PREFIX, DISTRIBUTIONS, parseDistMetric, type Family } from './distributions.ts';
import { BUCKET_SCHEME, RELATIVE_ERROR } from './log-buckets.ts';
import { workloadSettings, workloadSpec } from './workload.ts';

export interface MetricSummary {
  type: 'counter' | 'gauge' | 'rate' | 'trend';
  contains: 'default' | 'time' | 'data';
  values: Record<string, number>;
  thresholds?: Record<string, { ok: boolean }>;
}

export interface CheckSummary { name: string; path?: string; passes: number; fails: number }

export interface GroupSummary {
  name: string;
  path?: string;
  groups?: GroupSummary[] | Record<string, GroupSummary>;
  checks?: CheckSummary[] | Record<string, CheckSummary>;
}

/** The part of k6's handleSummary data these summaries read. */
export interface SummaryData {
  metrics: Record<string, MetricSummary>;
  root_group?: GroupSummary;
  state?: { testRunDurationMs?: number };
}

/**
 * judged: false when the metric has no samples (a Rate with neither passes nor fails):
 * k6 leaves such a threshold "ok", which would show a tick for something never measured
 * (chatgate_recovered when the probe stopped before its recovery scenario).
 */
export interface ThresholdResult { metric: string; expression: string; ok: boolean; judged: boolean; observed?: string }

/** A metric that was never fed: a Rate or a Trend with no samples at all. */
function noSamples(m: MetricSummary): boolean {
  if (m.type === 'trend') return m.values.count === 0; // count is in SUMMARY_TREND_STATS
  return m.type === 'rate' && (m.values.passes ?? 0) + (m.values.fails ?? 0) === 0;
}

/** pass: every threshold judged and held; fail: one crossed; incomplete: none crossed, some never judged. */
export function resultOf(thresholds: ThresholdResult[]): 'pass' | 'fail' | 'incomplete' {
  if (thresholds.some((t) => t.judged && !t.ok)) return 'fail';
  return thresholds.every((t) => t.judged) ? 'pass' : 'incomplete';
}

/** setup() stopped the run before any load (lib/reachability.ts): there is nothing to summarise. */
export function notRun(data: SummaryData): boolean {
  const m = data.metrics.chatgate_not_run;
  return m !== undefined && (m.values.count ?? 0) > 0;
}

function list<T>(v: T[] | Record<string, T> | undefined): T[] {
  if (!v) return [];
  return Array.isArray(v) ? v : Object.keys(v).map((k) => v[k]!);
}

export function allChecks(group: GroupSummary | undefined): CheckSummary[] {
  if (!group) return [];
  const out = list(group.checks).slice();
  for (const g of list(group.groups)) out.push(...allChecks(g));
  return out;
}

function fmt(v: number | undefined, contains: string): string {
  if (v === undefined || !isFinite(v)) return 'n/a';
  if (contains === 'time') return v < 1000 ? `${v.toFixed(1)}ms` : `${(v / 1000).toFixed(2)}s`;
  return Number.isInteger(v) ? String(v) : v.toFixed(4).replace(/0+$/, '').replace(/\.$/, '');
}

/** The value a threshold expression is about: "p(95)<500" reads values["p(95)"]. */
function observed(m: MetricSummary, expression: string): string | undefined {
  const agg = /^\s*([a-z]+(?:\([\d.]+\))?)/.exec(expression);
  if (!agg || m.values[agg[1]!] === undefined) return undefined;
  return `${agg[1]}=${fmt(m.values[agg[1]!], agg[1] === 'rate' || agg[1] === 'count' ? 'default' : m.contains)}`;
}

export function thresholdResults(data: SummaryData): ThresholdResult[] {
  const out: ThresholdResult[] = [];
  for (const metric of Object.keys(data.metrics).sort()) {
    if (metric.startsWith(DIST_PREFIX)) continue; // the bucket counts' always-true thresholds (lib/distributions.ts)
    const m = data.metrics[metric]!;
    for (const expression of Object.keys(m.thresholds ?? {})) {
      const judged = !noSamples(m);
      out.push({ metric, expression, ok: m.thresholds![expression]!.ok, judged, observed: judged ? observed(m, expression) : 'no samples' });
    }
  }
  return out;
}

function pad(s: string, n: number): string {
  return s.length >= n ? `${s} ` : s + ' '.repeat(n - s.length);
}

export function textSummary(script: string, data: SummaryData, files: string[] = []): string {
  const thresholds = thresholdResults(data);
  const checks = allChecks(data.root_group);
  const result = resultOf(thresholds);
  const seconds = ((data.state?.testRunDurationMs ?? 0) / 1000).toFixed(1);
  const lines = [`chatgate k6 · ${script} · ${env('TARGET_URL') ?? '(no TARGET_URL)'} · ${seconds} s · ${result.toUpperCase()}`];
  const id = runnerIdentity(script, undefined);
  if (id.runners !== 1 || id.segment !== '0:1') {
    lines.push(`runner ${id.runner > 0 ? `${id.runner} of ${id.runners}` : '?'} (execution segment ${id.segment})${id.test_id ? ` of test ${id.test_id}` : ''}: the figures and thresholds below are this runner's share only; npm run load -- merge <the runners' summaries> judges the whole test`);
  }
  lines.push('thresholds');
  for (const t of thresholds) {
    const mark = !t.judged ? '–' : t.ok ? '✓' : '✗';
    lines.push(`  ${mark} ${pad(t.metric, 46)}${pad(t.expression, 18)}${t.judged ? t.observed ?? '' : 'no samples: not judged'}`);
  }
  if (thresholds.length === 0) lines.push('  (none)');
  lines.push('checks');
  for (const c of checks) {
    const total = c.passes + c.fails;
    lines.push(`  ${c.fails === 0 ? '✓' : '✗'} ${pad(c.name, 58)}${c.passes}/${total}${c.fails > 0 ? ` (${c.fails} failed)` : ''}`);
  }
  if (checks.length === 0) lines.push('  (none)');
  lines.push('figures');
  const m = data.metrics;
  const v = (name: string, key: string): number | undefined => (m[name] ? m[name]!.values[key] : undefined);
  if (m.http_reqs) {
    lines.push(`  ${pad('requests', 34)}${fmt(v('http_reqs', 'count'), 'default')} (${fmt(v('http_reqs', 'rate'), 'default')}/s), failed ${((v('http_req_failed', 'rate') ?? 0) * 100).toFixed(2)}% (429 counted as expected), dropped iterations ${fmt(v('dropped_iterations', 'count') ?? 0, 'default')}`);
  }
  if (m.chatgate_status_429) lines.push(`  ${pad('429 / 503 answers', 34)}${fmt(v('chatgate_status_429', 'count'), 'default')} / ${fmt(v('chatgate_status_503', 'count') ?? 0, 'default')}`);
  if (m.chatgate_429_without_retry_hint) {
    lines.push(`  ${pad('429s without a retry hint (LIM-2)', 34)}${fmt(v('chatgate_429_without_retry_hint', 'count'), 'default')} of ${fmt(v('chatgate_status_429', 'count') ?? 0, 'default')} (SHOULD: a warning, no threshold)`);
  }
  if (m.chatgate_recovered) {
    const r = m.chatgate_recovered.values;
    const n = (r.passes ?? 0) + (r.fails ?? 0);
    lines.push(`  ${pad('recovery (LIM-3)', 34)}${n === 0 ? 'not measured: the recovery scenario did not run (the probe stopped before it)' : `served again ${r.passes ?? 0} of ${n}`}`);
  }
  if (m.chatgate_body_shape_failures) lines.push(`  ${pad('body-shape failures', 34)}${fmt(v('chatgate_body_shape_failures', 'count'), 'default')}`);
  const trend = (label: string, name: string) => {
    const t = m[name];
    if (!t) return;
    const keys = ['avg', 'med', 'p(95)', 'p(99)', 'max'].filter((k) => t.values[k] !== undefined);
    lines.push(`  ${pad(label, 34)}${keys.map((k) => `${k} ${fmt(t.values[k], t.contains)}`).join('  ')}`);
  };
  trend('http_req_duration (HTTP 200)', 'http_req_duration{status:200}');
  trend('stream TTFB (http_req_waiting)', 'chatgate_stream_ttfb');
  trend('stream E2E (http_req_duration)', 'chatgate_stream_e2e');
  if (m.chatgate_cumulative_deltas) lines.push(`  ${pad('snapshot deltas (EV-12)', 34)}${fmt(v('chatgate_cumulative_deltas', 'count'), 'default')}`);
  trend('TTFT (ttft_ms)', 'ttft_ms');
  trend('ITL (itl_ms)', 'itl_ms');
  trend('TPOT (tpot_ms)', 'tpot_ms');
  trend('E2E (e2e_ms)', 'e2e_ms');
  if (m.ttft_ms) {
    lines.push('  as the Node load driver names them (load/report/metric-names.ts):');
    for (const l of describeLoadMetrics(loadMetrics(m, data.state?.testRunDurationMs))) lines.push(`    ${l}`);
  }
  if (m.chatgate_completion_tokens) lines.push(`  ${pad('completion tokens', 34)}${fmt(v('chatgate_completion_tokens', 'count'), 'default')} (${fmt(v('chatgate_completion_tokens', 'rate'), 'default')}/s)`);
  for (const w of warnings(data)) lines.push(`warning: ${w}`);
  if (result === 'fail') lines.push('result: FAIL, thresholds crossed (k6 exits 99)');
  if (result === 'incomplete') lines.push(`result: INCOMPLETE, no threshold crossed but ${thresholds.filter((t) => !t.judged).map((t) => t.metric).join(', ')} had no samples`);
  if (files.length > 0) lines.push(`summary files: ${files.join(', ')} (k6 cannot create folders: if it logged "no such file or directory", mkdir -p the SUMMARY_DIR first)`);
  return `${lines.join('\n')}\n`;
}

/** SHOULD-level findings: shown, never a failed threshold. */
export function warnings(data: SummaryData): string[] {
  const out: string[] = [];
  const hint = data.metrics.chatgate_429_without_retry_hint;
  const n = hint ? hint.values.count ?? 0 : 0;
  if (n > 0) out.push(`${n} of ${data.metrics.chatgate_status_429?.values.count ?? '?'} 429 answers advertised no wait (no Retry-After, retry-after-ms or x-ratelimit-reset-*; LIM-2, SHOULD)`);
  const unread = data.metrics.chatgate_sse_nothing_read;
  const u = unread ? unread.values.count ?? 0 : 0;
  if (u > 0) out.push(`${u} 2xx streams gave xk6-sse nothing to read, not judged: an empty body, or lone-CR line ends (legal SSE the extension cannot split); read the target with chat-stream or the Node driver`);
  return out;
}

/** The whole stdout when setup() stopped the run: k6 prints the reason (its error line) after this summary. */
export function notRunText(script: string): string {
  return `chatgate k6 · ${script} · ${env('TARGET_URL') ?? '(no TARGET_URL)'} · NOT RUN: setup stopped the run before any load (k6 prints the reason next: the "chatgate k6:" error line); no summary files written\n`;
}

/** What makes runners' summaries parts of one test: merge refuses to add summaries whose test id, script or settings differ. */
export interface RunnerIdentity {
  test_id: string | null;
  script: string;
  /** k6's --execution-segment and --execution-segment-sequence ("0:1" and null when the run was not split). */
  segment: string;
  segment_sequence: string | null;
  /** 1-based position of the segment in the sequence, and the number of segments. */
  runner: number;
  runners: number;
  settings: Record<string, unknown>;
}

/** Settings that change what a run measures besides its options (keys are redacted with the rest). */
const SETTINGS_ENV = ['TARGET_URL', 'MODELS', 'TIMEOUT_MS', 'PROMPT', 'MAX_TOKENS', 'INCLUDE_USAGE', 'MIX', 'BRAIN_ID', 'RECOVERY_ATTEMPTS', 'RECOVERY_MAX_WAIT_S', 'HEADERS', 'PHASES', 'CAPACITY', 'CHANGE_AT', 'SLICE', 'EXTRA_BODY'];

/** The workload's settings (lib/workload.ts, normalised: PROMPT_TOKENS_MIN unset or at its default are one setting). */
function workloadIdentity(): Record<string, unknown> | null {
  try {
    return workloadSettings(workloadSpec());
  } catch {
    return null; // a bad workload stopped the run at init; no summary compares it
  }
}

/** "1/3", "33%", "0.5" -> a number (k6's execution segment notation). */
function fractionOf(s: string): number {
  const t = s.trim();
  if (t.endsWith('%')) return Number(t.slice(0, -1)) / 100;
  const i = t.indexOf('/');
  return i >= 0 ? Number(t.slice(0, i)) / Number(t.slice(i + 1)) : Number(t);
}

export function runnerIdentity(script: string, options: ScriptOptions | undefined): RunnerIdentity {
  let o: { executionSegment?: string | null; executionSegmentSequence?: string | null; tags?: Record<string, string> | null; scenarios?: unknown } = {};
  try {
    o = (exec.test.options as typeof o | undefined) ?? {};
  } catch {
    o = {};
  }
  const segment = o.executionSegment ? String(o.executionSegment) : '0:1';
  const sequence = o.executionSegmentSequence ? String(o.executionSegmentSequence) : null;
  // "a:b" or "b" (= 0:b); the runner is the segment's place in the sequence.
  const parts = segment.split(':');
  const from = parts.length > 1 ? fractionOf(parts[0]!) : 0;
  const to = fractionOf(parts[parts.length - 1]!);
  let runner = 1;
  let runners = 1;
  if (sequence) {
    const points = sequence.split(',').map(fractionOf);
    runners = points.length - 1;
    const i = points.findIndex((p) => Math.abs(p - from) < 1e-9);
    runner = i >= 0 ? i + 1 : 0;
  } else if (from !== 0 || to !== 1) {
    runner = 0; // a segment without a sequence: its place is unknown
    runners = 0;
  }
  const envSettings: Record<string, string> = {};
  for (const k of SETTINGS_ENV) {
    const v = k === 'HEADERS' ? headersSetting() : env(k);
    if (v !== undefined) envSettings[k] = v;
  }
  const thresholds: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options?.thresholds ?? {})) if (!k.startsWith(DIST_PREFIX)) thresholds[k] = v;
  return {
    // Newer k6-operators add `--tag testrun_name=<TestRun>`, which replaces K6_TAGS' testid: the TestRun's name then.
    test_id: env('TEST_ID') ?? (o.tags && o.tags.testid ? String(o.tags.testid) : o.tags && o.tags.testrun_name ? String(o.tags.testrun_name) : null),
    script,
    segment,
    segment_sequence: sequence,
    runner,
    runners,
    settings: { scenarios: scenariosThatRan(o.scenarios) ?? options?.scenarios ?? null, thresholds, env: envSettings, workload: workloadIdentity(), bucket_scheme: BUCKET_SCHEME },
  };
}

/**
 * The scenarios k6 ran (its consolidated options, command-line overrides included), unset
 * fields left out; undefined where k6 does not say. By handleSummary k6 has replaced the
 * script's own `options.scenarios` with an object that serialises as {}.
 */
function scenariosThatRan(raw: unknown): Record<string, unknown> | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(raw as Record<string, unknown>)) {
    const sc = (raw as Record<string, unknown>)[name];
    if (!sc || typeof sc !== 'object') continue;
    const set: Record<string, unknown> = {};
    for (const k of Object.keys(sc as Record<string, unknown>)) {
      const v = (sc as Record<string, unknown>)[k];
      if (v !== null && v !== undefined) set[k] = v;
    }
    out[name] = set;
  }
  return Object.keys(out).length ? out : undefined;
}

/** The options a summary records as settings (a script's exported options). */
export interface ScriptOptions { scenarios?: unknown; thresholds?: Record<string, unknown> }

export interface DistributionSummary {
  /** The k6 trend whose samples were bucketed. */
  trend: string;
  relative_error: number;
  /** Bucket label (lib/log-buckets.ts) -> samples; buckets without samples are left out. */
  counts: Record<string, number>;
  count: number;
  /** Exact extremes and sum (from the trend), or null where the trend is not in the data. */
  min: number | null;
  max: number | null;
  sum: number | null;
}

/** The bucket counts of the data, per family (only families with samples). */
export function distributions(data: SummaryData): Record<string, DistributionSummary> {
  const out: Record<string, DistributionSummary> = {};
  for (const name of Object.keys(data.metrics)) {
    const p = parseDistMetric(name);
    if (!p) continue;
    const n = data.metrics[name]!.values.count ?? 0;
    if (n <= 0) continue;
    const [family, label] = p;
    const trendName = DISTRIBUTIONS[family as Family];
    const t = data.metrics[trendName];
    const d = (out[family] ??= {
      trend: trendName,
      relative_error: RELATIVE_ERROR,
      counts: {},
      count: 0,
      min: t && isFinite(t.values.min ?? NaN) ? t.values.min! : null,
      max: t && isFinite(t.values.max ?? NaN) ? t.values.max! : null,
      sum: t && t.values.count !== undefined && isFinite(t.values.avg ?? NaN) ? t.values.avg! * t.values.count : null,
    });
    d.counts[label] = n;
    d.count += n;
  }
  const sorted: Record<string, DistributionSummary> = {};
  for (const f of Object.keys(out).sort()) {
    const d = out[f]!;
    const counts: Record<string, number> = {};
    for (const k of Object.keys(d.counts).sort()) counts[k] = d.counts[k]!;
    sorted[f] = { ...d, counts };
  }
  return sorted;
}

/** A runner's run on its own clock: handleSummary's time, and that less k6's testRunDurationMs (setup's start to teardown's end); k6 gives no start time itself. */
export function runTimes(data: SummaryData, nowMs: number): { started_at: string | null; finished_at: string; started_at_unknown?: string } {
  const ms = data.state?.testRunDurationMs;
  const finished_at = new Date(nowMs).toISOString();
  if (typeof ms !== 'number' || !isFinite(ms) || ms < 0) return { started_at: null, finished_at, started_at_unknown: 'k6 gave handleSummary no testRunDurationMs' };
  return { started_at: new Date(nowMs - ms).toISOString(), finished_at };
}

export function jsonSummary(script: string, data: SummaryData, options?: ScriptOptions, nowMs: number = Date.now()): string {
  const thresholds = thresholdResults(data);
  const metrics: Record<string, { type: string; contains: string; values: Record<string, number> }> = {};
  for (const name of Object.keys(data.metrics).sort()) {
    if (name.startsWith(DIST_PREFIX)) continue; // kept as `distributions`
    const m = data.metrics[name]!;
    metrics[name] = { type: m.type, contains: m.contains, values: m.values };
  }
  return JSON.stringify({
    tool: 'chatgate-k6',
    format_version: 2,
    script,
    identity: runnerIdentity(script, options),
    target: env('TARGET_URL') ?? null,
    // The curl lines of a merge go through the runners' proxy, not the merging shell's.
    proxy_env: proxySetting(),
    durationMs: data.state?.testRunDurationMs ?? null,
    ...runTimes(data, nowMs),
    result: resultOf(thresholds),
    thresholds,
    warnings: warnings(data),
    checks: allChecks(data.root_group).map((c) => ({ name: c.name, passes: c.passes, fails: c.fails })),
    metrics,
    distributions: distributions(data),
    // Token timing (chat-stream-sse) under the Node load driver's metric names.
    ...(data.metrics.ttft_ms ? { loadMetrics: loadMetrics(data.metrics, data.state?.testRunDurationMs) } : {}),
  }, null, 2);
}

function xml(s: string): string {
  // Control characters are not allowed in XML 1.0 at all, escaped or not.
  return s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

/**
 * Thresholds are the test cases (they are k6's verdict and its exit code); checks
 * are listed with their counts but never fail on their own: a few failed checks
 * under load are judged by the checks-rate threshold, not one by one.
 */
export function junitSummary(script: string, data: SummaryData): string {
  const thresholds = thresholdResults(data);
  const checks = allChecks(data.root_group);
  const failures = thresholds.filter((t) => t.judged && !t.ok).length;
  const skipped = thresholds.filter((t) => !t.judged).length;
  const time = ((data.state?.testRunDurationMs ?? 0) / 1000).toFixed(3);
  const suite = `k6.${script}`;
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="chatgate k6" tests="${thresholds.length + checks.length}" failures="${failures}" time="${time}">`,
    `  <testsuite name="${xml(suite)}" tests="${thresholds.length + checks.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${time}">`,
    '    <properties>',
    `      <property name="target" value="${xml(env('TARGET_URL') ?? '')}"/>`,
    '    </properties>',
  ];
  for (const t of thresholds) {
    out.push(`    <testcase classname="${xml(`${suite}.thresholds`)}" name="${xml(`${t.metric}: ${t.expression}`)}" time="0">`);
    if (!t.judged) out.push('      <skipped message="no samples: not judged"/>');
    else if (!t.ok) out.push(`      <failure type="threshold" message="${xml(`${t.metric} crossed ${t.expression}${t.observed ? ` (${t.observed})` : ''}`)}"/>`);
    out.push('    </testcase>');
  }
  for (const c of checks) {
    out.push(`    <testcase classname="${xml(`${suite}.checks`)}" name="${xml(c.name)}" time="0">`);
    out.push(`      <system-out>${xml(`${c.passes} passed, ${c.fails} failed`)}</system-out>`);
    out.push('    </testcase>');
  }
  out.push('  </testsuite>', '</testsuites>', '');
  return out.join('\n');
}

/** k6-<script>[-<test id>][-runner<i>of<n>]: runners of one test write side by side without overwriting each other. */
export function summaryName(script: string, id: RunnerIdentity): string {
  const testId = id.test_id ? `-${id.test_id.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 64)}` : '';
  const seg = id.runners === 1 && id.segment === '0:1' ? '' : id.runner > 0 ? `-runner${id.runner}of${id.runners}` : `-segment${id.segment.replace(/[^0-9A-Za-z.]+/g, '_')}`;
  return `k6-${script}${testId}${seg}`;
}

/**
 * The handleSummary of a script. SUMMARY_DIR (default ".") holds
 * <summaryName>-summary.json and -junit.xml; k6 does not create folders, so the folder
 * must exist. SUMMARY_DIR=none writes no files (distributed runs: a runner pod's files
 * vanish with it; SUMMARY_STDOUT=1 puts the JSON summary in its log instead).
 */
export function summaryHandler(script: string, options?: ScriptOptions): (data: SummaryData) => Record<string, string> {
  return (data) => {
    // No reports of a run that never happened.
    if (notRun(data)) return { stdout: redact(notRunText(script)) };
    const out: Record<string, string> = {};
    // One time for the file and the stdout line.
    const now = Date.now();
    const dir = env('SUMMARY_DIR') ?? '.';
    if (dir !== 'none') {
      const base = dir === '/' ? '' : dir.replace(/\/+$/, '');
      const name = summaryName(script, runnerIdentity(script, options));
      out[`${base}/${name}-summary.json`] = jsonSummary(script, data, options, now);
      out[`${base}/${name}-junit.xml`] = junitSummary(script, data);
    }
    out.stdout = textSummary(script, data, Object.keys(out));
    // SUMMARY_STDOUT=1: the JSON summary also as one stdout line, for runners whose files vanish (k6-operator pods: kubectl logs).
    if (env('SUMMARY_STDOUT') === '1') out.stdout += `chatgate-k6-summary ${JSON.stringify(JSON.parse(jsonSummary(script, data, options, now)))}\n`;
    for (const k of Object.keys(out)) out[k] = redact(out[k]!);
    return out;
  };
}
