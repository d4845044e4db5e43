// handleSummary: a short text summary on stdout plus a JSON summary and JUnit XML
// file. Written here rather than imported from jslib.k6.io because a remote import
// needs network at run time, and the bundles must run offline (air-gapped runners,
// k6-operator pods without egress). Every output string is passed through redact():
// keys never reach a summary, even if a target echoed one into a check name.
import { env, redact } from './config.ts';
import { describeLoadMetrics, loadMetrics } from './token-timing.ts';

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
  const lines = [`chatgate k6 · ${script} · ${env('TARGET_URL') ?? '(no TARGET_URL)'} · ${seconds} s · ${result.toUpperCase()}`, 'thresholds'];
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

export function jsonSummary(script: string, data: SummaryData): string {
  const thresholds = thresholdResults(data);
  const metrics: Record<string, { type: string; contains: string; values: Record<string, number> }> = {};
  for (const name of Object.keys(data.metrics).sort()) {
    const m = data.metrics[name]!;
    metrics[name] = { type: m.type, contains: m.contains, values: m.values };
  }
  return JSON.stringify({
    tool: 'chatgate-k6',
    script,
    target: env('TARGET_URL') ?? null,
    durationMs: data.state?.testRunDurationMs ?? null,
    result: resultOf(thresholds),
    thresholds,
    warnings: warnings(data),
    checks: allChecks(data.root_group).map((c) => ({ name: c.name, passes: c.passes, fails: c.fails })),
    metrics,
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

/**
 * The handleSummary of a script. SUMMARY_DIR (default ".") holds
 * k6-<script>-summary.json and k6-<script>-junit.xml; k6 does not create folders,
 * so the folder must exist. SUMMARY_DIR=none writes no files (distributed runs:
 * a runner pod's files vanish with it, read its stdout instead).
 */
export function summaryHandler(script: string): (data: SummaryData) => Record<string, string> {
  return (data) => {
    // No reports of a run that never happened.
    if (notRun(data)) return { stdout: redact(notRunText(script)) };
    const out: Record<string, string> = {};
    const dir = env('SUMMARY_DIR') ?? '.';
    if (dir !== 'none') {
      const base = dir === '/' ? '' : dir.replace(/\/+$/, '');
      out[`${base}/k6-${script}-summary.json`] = jsonSummary(script, data);
      out[`${base}/k6-${script}-junit.xml`] = junitSummary(script, data);
    }
    out.stdout = textSummary(script, data, Object.keys(out));
    for (const k of Object.keys(out)) out[k] = redact(out[k]!);
    return out;
  };
}
