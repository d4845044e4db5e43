// handleSummary: a short text summary on stdout plus a JSON summary and JUnit XML
// file. Written here rather than imported from jslib.k6.io because a remote import
// needs network at run time, and the bundles must run offline (air-gapped runners,
// k6-operator pods without egress). Every output string is passed through redact():
// keys never reach a summary, even if a target echoed one into a check name.
import { env, redact } from './config.ts';

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

export interface ThresholdResult { metric: string; expression: string; ok: boolean; observed?: string }

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
      out.push({ metric, expression, ok: m.thresholds![expression]!.ok, observed: observed(m, expression) });
    }
  }
  return out;
}

function pad(s: string, n: number): string {
  return s.length >= n ? `${s} ` : s + ' '.repeat(n - s.length);
}

export function textSummary(script: string, data: SummaryData): string {
  const thresholds = thresholdResults(data);
  const checks = allChecks(data.root_group);
  const pass = thresholds.every((t) => t.ok);
  const seconds = ((data.state?.testRunDurationMs ?? 0) / 1000).toFixed(1);
  const lines = [`chatgate k6 · ${script} · ${env('TARGET_URL') ?? '(no TARGET_URL)'} · ${seconds} s · ${pass ? 'PASS' : 'FAIL'}`, 'thresholds'];
  for (const t of thresholds) lines.push(`  ${t.ok ? '✓' : '✗'} ${pad(t.metric, 46)}${pad(t.expression, 18)}${t.observed ?? ''}`);
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
  if (m.chatgate_completion_tokens) lines.push(`  ${pad('completion tokens', 34)}${fmt(v('chatgate_completion_tokens', 'count'), 'default')} (${fmt(v('chatgate_completion_tokens', 'rate'), 'default')}/s)`);
  if (!pass) lines.push('result: FAIL, thresholds crossed (k6 exits 99)');
  return `${lines.join('\n')}\n`;
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
    result: thresholds.every((t) => t.ok) ? 'pass' : 'fail',
    thresholds,
    checks: allChecks(data.root_group).map((c) => ({ name: c.name, passes: c.passes, fails: c.fails })),
    metrics,
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
  const failures = thresholds.filter((t) => !t.ok).length;
  const time = ((data.state?.testRunDurationMs ?? 0) / 1000).toFixed(3);
  const suite = `k6.${script}`;
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="chatgate k6" tests="${thresholds.length + checks.length}" failures="${failures}" time="${time}">`,
    `  <testsuite name="${xml(suite)}" tests="${thresholds.length + checks.length}" failures="${failures}" errors="0" skipped="0" time="${time}">`,
    '    <properties>',
    `      <property name="target" value="${xml(env('TARGET_URL') ?? '')}"/>`,
    '    </properties>',
  ];
  for (const t of thresholds) {
    out.push(`    <testcase classname="${xml(`${suite}.thresholds`)}" name="${xml(`${t.metric}: ${t.expression}`)}" time="0">`);
    if (!t.ok) out.push(`      <failure type="threshold" message="${xml(`${t.metric} crossed ${t.expression}${t.observed ? ` (${t.observed})` : ''}`)}"/>`);
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
    const out: Record<string, string> = { stdout: textSummary(script, data) };
    const dir = env('SUMMARY_DIR') ?? '.';
    if (dir !== 'none') {
      const base = dir === '/' ? '' : dir.replace(/\/+$/, '');
      out[`${base}/k6-${script}-summary.json`] = jsonSummary(script, data);
      out[`${base}/k6-${script}-junit.xml`] = junitSummary(script, data);
    }
    for (const k of Object.keys(out)) out[k] = redact(out[k]!);
    return out;
  };
}
