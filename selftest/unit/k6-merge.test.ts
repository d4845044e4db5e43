// The merge of runners' summaries without k6: the log-bucket scheme's stated error, k6
// summaries built from known samples (percentiles, counters, thresholds judged on the
// whole test, the refusals with exit 2) and the Node harness's summary.json (HDR
// histograms merged exactly). Real k6 runners: selftest/e2e/k6-merge-run.test.ts.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bucketLabel, bucketOf, bucketPercentile, bucketValue, HIGHEST_MS, LOWEST_MS, OVERFLOW_BUCKET, RELATIVE_ERROR } from '../../load/k6/lib/log-buckets.ts';
import { mergeMain, type K6Summary } from '../../load/report/merge.ts';
import { SLICE_METRIC, sliceTag, type SliceRow } from '../../load/k6/lib/slices.ts';
import { LatencyHistogram } from '../../load/engine/histogram.ts';
import type { LoadSummary } from '../../load/report/summary.ts';

/** A fixed, spread-out sequence (no random seed: the verdict must not depend on one). */
function samples(n: number, scale: number, offset = 0): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(Math.round((scale * Math.exp(((i * 7919 + offset) % n) / n * 3) + i % 7) * 1000) / 1000);
  return out;
}

const nearest = (v: number[], q: number) => [...v].sort((a, b) => a - b)[Math.max(1, Math.ceil((q / 100) * v.length)) - 1]!;

describe('log buckets (load/k6/lib/log-buckets.ts)', () => {
  it(`every value from ${LOWEST_MS} ms to ${HIGHEST_MS} ms reads back within ${RELATIVE_ERROR * 100} %`, () => {
    let worst = 0;
    for (let e = Math.log(LOWEST_MS) + 1e-6; e < Math.log(HIGHEST_MS); e += 0.000713) {
      const v = Math.exp(e);
      worst = Math.max(worst, Math.abs(bucketValue(bucketOf(v)) - v) / v);
    }
    expect(worst).toBeLessThanOrEqual(RELATIVE_ERROR + 1e-12);
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(HIGHEST_MS * 2)).toBe(OVERFLOW_BUCKET);
    expect(bucketLabel(7)).toBe('0007');
  });

  it('a percentile of summed counts is the nearest-rank sample within the error, clamped into the exact extremes', () => {
    const v = samples(1000, 20);
    const counts: Record<string, number> = {};
    for (const x of v) counts[bucketLabel(bucketOf(x))] = (counts[bucketLabel(bucketOf(x))] ?? 0) + 1;
    for (const q of [1, 50, 90, 95, 99, 99.9]) {
      const truth = nearest(v, q);
      expect(Math.abs(bucketPercentile(counts, q)! - truth)).toBeLessThanOrEqual(RELATIVE_ERROR * truth + 1e-9);
    }
    expect(bucketPercentile(counts, 100, Math.min(...v), Math.max(...v))).toBe(Math.max(...v));
    expect(bucketPercentile({}, 50)).toBeNull();
  });
});

// ---------------------------------------------------------------- k6 summaries

const SETTINGS = { scenarios: { stream: { executor: 'constant-arrival-rate', rate: 30 } }, thresholds: { e2e_ms: ['p(95)<500'], chatgate_cumulative_deltas: ['count<5'] }, env: { TARGET_URL: 'http://127.0.0.1:1/v1' }, bucket_scheme: 'x' };

function runner(i: number, n: number, e2e: number[], deltas: number, over: Partial<K6Summary['identity']> = {}): K6Summary {
  const counts: Record<string, number> = {};
  for (const x of e2e) counts[bucketLabel(bucketOf(x))] = (counts[bucketLabel(bucketOf(x))] ?? 0) + 1;
  const seq = ['0', ...Array.from({ length: n - 1 }, (_, k) => `${k + 1}/${n}`), '1'];
  const p95 = nearest(e2e, 95);
  return {
    tool: 'chatgate-k6', format_version: 2, script: 'chat-stream-sse',
    identity: { test_id: 't', script: 'chat-stream-sse', segment: `${seq[i - 1]}:${seq[i]}`, segment_sequence: seq.join(','), runner: i, runners: n, settings: SETTINGS, ...over },
    target: 'http://127.0.0.1:1/v1', durationMs: 10_000, result: 'pass',
    thresholds: [
      { metric: 'chatgate_cumulative_deltas', expression: 'count<5', ok: deltas < 5, judged: true },
      { metric: 'e2e_ms', expression: 'p(95)<500', ok: p95 < 500, judged: true },
    ],
    warnings: [],
    checks: [{ name: 'status is 2xx or 429', passes: e2e.length, fails: 0 }],
    metrics: {
      e2e_ms: { type: 'trend', contains: 'time', values: { avg: e2e.reduce((a, b) => a + b, 0) / e2e.length, min: Math.min(...e2e), max: Math.max(...e2e), med: nearest(e2e, 50), 'p(95)': p95, count: e2e.length } },
      chatgate_cumulative_deltas: { type: 'counter', contains: 'default', values: { count: deltas, rate: deltas / 10 } },
      streams_ok: { type: 'counter', contains: 'default', values: { count: e2e.length, rate: e2e.length / 10 } },
      chatgate_stream_failed: { type: 'rate', contains: 'default', values: { rate: 0, passes: 0, fails: e2e.length } },
    },
    distributions: { e2e_ms: { trend: 'e2e_ms', relative_error: RELATIVE_ERROR, counts, count: e2e.length, min: Math.min(...e2e), max: Math.max(...e2e), sum: e2e.reduce((a, b) => a + b, 0) } },
  };
}

let dir: string;
const errors: string[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'chatgate-merge-unit-'));
  vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
    errors.push(String(s));
    return true;
  });
});
afterAll(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

function write(sub: string, name: string, doc: unknown): string {
  mkdirSync(join(dir, sub), { recursive: true });
  const p = join(dir, sub, name);
  writeFileSync(p, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return p;
}

function merge(args: string[]): { code: number; out: string; err: string } {
  errors.length = 0;
  const lines: string[] = [];
  const code = mergeMain(args, {}, (l) => lines.push(l));
  return { code, out: lines.join('\n'), err: errors.join('') };
}

describe('merge of k6 runners (npm run load -- merge)', () => {
  // e2e from about 10 to 230 ms: under the p(95)<500 threshold on every runner.
  const a = samples(300, 10, 1);
  const b = samples(300, 11, 2);
  const c = samples(300, 9, 3);

  it('percentiles of the whole test within the stated error of all samples; counters add; a count threshold each runner passes alone fails on the whole test (exit 99)', () => {
    write('ok', 'r1-summary.json', runner(1, 3, a, 2));
    write('ok', 'r2-summary.json', runner(2, 3, b, 2));
    write('ok', 'r3-summary.json', runner(3, 3, c, 2));
    const r = merge([join(dir, 'ok'), '--out', join(dir, 'ok-out')]);
    expect(r.code, r.err).toBe(99);
    const m = JSON.parse(readFileSync(join(dir, 'ok-out', 'k6-chat-stream-sse-t-merged-summary.json'), 'utf8')) as K6Summary;
    const all = [...a, ...b, ...c];
    for (const [key, q] of [['med', 50], ['p(95)', 95]] as const) {
      const truth = nearest(all, q);
      expect(Math.abs(m.metrics.e2e_ms!.values[key]! - truth)).toBeLessThanOrEqual(RELATIVE_ERROR * truth + 1e-9);
    }
    expect(m.metrics.chatgate_cumulative_deltas!.values.count).toBe(6);
    expect(m.metrics.streams_ok!.values.count).toBe(900);
    expect(m.metrics.chatgate_stream_failed!.values).toMatchObject({ passes: 0, fails: 900, rate: 0 });
    expect(m.thresholds.find((t) => t.metric === 'chatgate_cumulative_deltas')).toMatchObject({ ok: false, judged: true, runners_ok: [true, true, true] });
    expect(r.out).toMatch(/✗ chatgate_cumulative_deltas .*count<5 .*count=6 .*runners alone: ✓✓✓/);
    const s = JSON.parse(readFileSync(join(dir, 'ok-out', 'summary.json'), 'utf8')) as LoadSummary;
    expect(s).toMatchObject({ format: 'chatgate-load-summary', scenario: 'stream' });
    expect(s.metrics.e2e_p95_ms).toBeCloseTo(m.metrics.e2e_ms!.values['p(95)']!, 2);
    // The page's percentile curves stop where the samples stop (900: p99.9 needs 1,000), as a Node run's do.
    const e2e = s.plots.percentiles['e2e_ms']!;
    expect(e2e.percentile.at(-1)).toBe(99.75);
    expect(e2e.percentile).not.toContain(100);
  });

  it('a throughput merge\'s responses_rps counts the chat requests, not setup()\'s GET /models of each runner', () => {
    const thr = (i: number) => {
      const r = runner(i, 2, samples(50, 10, i), 0);
      const metrics = { ...r.metrics, http_reqs: { type: 'counter', contains: 'default', values: { count: 51, rate: 5.1 } }, http_req_failed: { type: 'rate', contains: 'default', values: { rate: 0, passes: 0, fails: 51 } } };
      return { ...r, script: 'chat-throughput', identity: { ...r.identity, script: 'chat-throughput', test_id: 'thr' }, metrics, thresholds: [] };
    };
    write('thr', 'r1-summary.json', thr(1));
    write('thr', 'r2-summary.json', thr(2));
    const r = merge([join(dir, 'thr'), '--out', join(dir, 'thr-out')]);
    expect(r.code, r.err).toBe(0);
    const s = JSON.parse(readFileSync(join(dir, 'thr-out', 'summary.json'), 'utf8')) as LoadSummary;
    expect(s.counts.responses).toBe(100);
    expect(s.metrics.responses_rps).toBeCloseTo(100 / s.duration_s, 3);
  });

  it('a percentile threshold crossed by one runner alone is judged on the whole test (passes: exit 0)', () => {
    const slow = samples(100, 10, 5).map((x, i) => (i < 10 ? x + 1000 : x)); // 10 % slow on runner 1 only
    write('rev', 'r1-summary.json', runner(1, 3, slow, 0));
    write('rev', 'r2-summary.json', runner(2, 3, samples(100, 10, 6), 0));
    write('rev', 'r3-summary.json', runner(3, 3, samples(100, 10, 7), 0));
    const r = merge([join(dir, 'rev'), '--out', join(dir, 'rev-out')]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/✓ e2e_ms .*runners alone: ✗✓✓/);
    // An absolute limit (--threshold metric<limit) is judged on the merged figures too: exit 1 when broken.
    const tight = merge([join(dir, 'rev'), '--out', join(dir, 'rev-lim'), '--threshold', 'e2e_p95_ms<1']);
    expect(tight.code, tight.err).toBe(1);
    expect(tight.out).toMatch(/threshold: e2e_p95_ms < 1 ms, seen [\d.]+ ms: BROKEN/);
    expect(merge([join(dir, 'rev'), '--out', join(dir, 'rev-lim2'), '--threshold', 'e2e_p95_ms<100000']).code).toBe(0);
  });

  it.each([
    ['settings differ', 'set', (d: K6Summary) => { d.identity.settings = { ...SETTINGS, env: { TARGET_URL: 'http://127.0.0.1:2/v1' } }; }, /not runners of one test: their settings differ \(env\.TARGET_URL/],
    ['test ids differ', 'tid', (d: K6Summary) => { d.identity.test_id = 'other'; }, /not runners of one test: test id differs \(other vs t\)/],
    ['scripts differ', 'scr', (d: K6Summary) => { d.identity.script = 'chat-stream'; }, /script differs/],
    ['a runner given twice', 'dup', (d: K6Summary) => { d.identity.segment = '0:1/3'; d.identity.runner = 1; }, /are the same runner \(execution segment 0:1\/3\)/],
  ])('refuses runners whose %s: one line, exit 2, nothing written', (_what, sub, change, message) => {
    write(sub, 'r1-summary.json', runner(1, 3, a, 0));
    const d = runner(2, 3, b, 0);
    change(d);
    write(sub, 'r2-summary.json', d);
    const r = merge([join(dir, sub), '--out', join(dir, `${sub}-out`)]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(() => readFileSync(join(dir, `${sub}-out`, 'summary.json'))).toThrow();
  });

  it('refuses unreadable input, JSON that is no summary, an old summary and a mix of kinds with one line (exit 2)', () => {
    expect(merge([join(dir, 'nope.json')]).err).toMatch(/nope\.json: no such file or folder/);
    expect(merge([write('bad', 'x-summary.json', '{not json')]).err).toMatch(/cannot read it as JSON/);
    expect(merge([write('bad', 'y.json', '{"a":1}')]).err).toMatch(/not a chatgate summary/);
    const old = runner(1, 1, a, 0) as Partial<K6Summary>;
    delete old.identity;
    expect(merge([write('bad', 'old-summary.json', old)]).err).toMatch(/without runner identity .*npm run build:k6/);
    expect(merge([write('mix', 'k-summary.json', runner(1, 1, a, 0)), write('mix', 'summary.json', loadSummary([1, 2, 3], {}))]).err).toMatch(/cannot be merged together/);
    expect(merge([]).code).toBe(2);
    expect(merge(['--bogus']).err).toMatch(/bogus/);
  });

  it('says which runners are missing and marks the load summary partial', () => {
    write('part', 'r1-summary.json', runner(1, 3, a, 0));
    write('part', 'r3-summary.json', runner(3, 3, c, 0));
    const r = merge([join(dir, 'part'), '--out', join(dir, 'part-out')]);
    expect(r.out).toMatch(/warning: 2 of 3 runners' summaries: .*missing runners 2/);
    expect(JSON.parse(readFileSync(join(dir, 'part-out', 'summary.json'), 'utf8')).partial).toBe(true);
  });

  it('reads summaries printed on stdout (SUMMARY_STDOUT=1) from a log of many pods', () => {
    const log = [runner(1, 2, a, 0), runner(2, 2, b, 0)].map((d, i) => `[pod/r-${i}] chatgate-k6-summary ${JSON.stringify(d)}`).join('\nsome other line\n');
    const r = merge([write('log', 'runners.log', log), '--out', join(dir, 'log-out')]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/2 k6 runner summaries/);
  });
});

// ---------------------------------------------------------------- Node load summaries

function loadSummary(values: number[], over: Partial<LoadSummary> & Record<string, unknown>): LoadSummary {
  const h = new LatencyHistogram();
  for (const v of values) h.record(v);
  return {
    format: 'chatgate-load-summary', format_version: 1, scenario: 'throughput', partial: false, stop_reason: 'duration',
    started_at: '2026-01-01T00:00:00.000Z', finished_at: '2026-01-01T00:00:10.000Z', duration_s: 10,
    target: { url: 'http://127.0.0.1:1/v1', kind: 'remote' }, options: { rate: 10 },
    driver: { cpu_user_s: 1, cpu_system_s: 0, cpu_cores: 0.1, event_loop_utilization: 0.1, event_loop_delay_p99_ms: 1, max_rss_mib: 50, node_version: 'v20', schedule_lag_p99_ms: 1 },
    counts: { sent: values.length, not_sent: 0, responses: values.length, ok: values.length, failed: 0, aborted_at_stop: 0 },
    status_codes: { 200: values.length }, failures: {}, failure_examples: [],
    latencies: { latency_ms: h.summary() }, output: null, routes: {}, body_checks: { checked: values.length, invalid: 0 }, error_answers: { checked: 0, improper: 0 },
    findings: [], details: {},
    metrics: { responses_rps: values.length / 10, latency_p95_ms: h.percentileMs(95), error_share: 0, max_ok_rps: 3 },
    timeline: [], plots: { percentiles: {}, buckets: {}, extra: {} }, hdr_us: { latency: h.encode() }, baseline: null,
    ...over,
  } as LoadSummary;
}

describe('merge of Node load summaries (summary.json, HDR histograms)', () => {
  it('histograms merge exactly, counts and rates add, a field added later adds generically', () => {
    const x = samples(500, 10, 1);
    const y = samples(400, 30, 2);
    const route = (sent: number, p95: number) => ({ chat: { sent, ok: sent, status_codes: { 200: sent }, p50_ms: 1, p95_ms: p95 } });
    const f1 = write('node', 'r1-summary.json', loadSummary(x, { extra_counts: { tokens: 5, max_in_flight: 3, mean_ms: 2 }, routes: route(500, 9) }));
    const f2 = write('node', 'r2-summary.json', loadSummary(y, { extra_counts: { tokens: 7, max_in_flight: 4, mean_ms: 3 }, routes: route(400, 11) }));
    const r = merge([f1, f2, '--out', join(dir, 'node-out')]);
    expect(r.code, r.err).toBe(0);
    const s = JSON.parse(readFileSync(join(dir, 'node-out', 'summary.json'), 'utf8'));
    // Exactly the HDR sum of the two runs' stored histograms.
    const all = LatencyHistogram.decode(JSON.parse(readFileSync(f1, 'utf8')).hdr_us.latency);
    all.add(LatencyHistogram.decode(JSON.parse(readFileSync(f2, 'utf8')).hdr_us.latency));
    expect(s.latencies.latency_ms).toEqual(all.summary());
    expect(s.metrics.latency_p95_ms).toBe(all.percentileMs(95));
    expect(s.metrics.responses_rps).toBe(90);
    expect(s.metrics.max_ok_rps).toBeNull();
    expect(s.counts.sent).toBe(900);
    expect(s.status_codes['200']).toBe(900);
    // Counts add, maxima keep the larger, a mean or percentile of one run is not added up: null.
    expect(s.extra_counts).toEqual({ tokens: 12, max_in_flight: 4, mean_ms: null });
    expect(s.routes.chat).toEqual({ sent: 900, ok: 900, status_codes: { 200: 900 }, p50_ms: null, p95_ms: null });
    expect(r.out).toMatch(/warning: max_ok_rps: a figure of one run/);
    // The drivers add (CPU) or keep the worst (memory), and the page is titled as a merge.
    expect(s.driver).toMatchObject({ cpu_user_s: 2, cpu_cores: 0.2, max_rss_mib: 50, node_version: 'v20' });
    expect(readFileSync(join(dir, 'node-out', 'report.html'), 'utf8')).toContain('<title>chatgate load: throughput, 2 runs merged — 2026-01-01T00:00:00.000Z</title>');
  });

  it('refuses runs with different options or targets (exit 2)', () => {
    const f1 = write('node2', 'r1-summary.json', loadSummary([1, 2], {}));
    const f2 = write('node2', 'r2-summary.json', loadSummary([1, 2], { options: { rate: 20 } }));
    // Where a run wrote its reports is no setting of the test.
    const f3 = write('node2', 'r3-summary.json', loadSummary([1, 2], { options: { rate: 10, out: 'elsewhere', quiet: true } }));
    expect(merge([f1, f3, '--out', join(dir, 'node2-out')]).code).toBe(0);
    const r = merge([f1, f2]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/their options differ \(rate: 20 vs 10\)/);
  });
});

// ---------------------------------------------------------------- slices (SLICE, --out json)

/** One stream as k6's `--out json` writes its points: the slice counter, its TTFT, gaps and E2E, tagged with the slice of its send time. */
function streamPoints(sentMs: number, status: number, ttft: number, gaps: number[]): string[] {
  const tags = { slice: sliceTag(sentMs, 5), name: 'POST /chat/completions (stream, xk6-sse)' };
  const point = (metric: string, value: number, extra: Record<string, string> = {}) => JSON.stringify({ metric, type: 'Point', data: { time: '2026-11-28T08:00:00Z', value, tags: { ...tags, ...extra } } });
  const ok = status === 200;
  const out = [point(SLICE_METRIC, 1, { status: String(status), ok: ok ? '1' : '0' }), point('chatgate_stream_failed', ok ? 0 : 1)];
  if (ok) out.push(point('ttft_ms', ttft), ...gaps.map((g) => point('itl_ms', g)), point('e2e_ms', ttft + gaps.reduce((a, b) => a + b, 0)));
  return out;
}

describe('merge of k6 runners\' slices (SLICE and --out json)', () => {
  it('adds each slice\'s counts across runners and reads its percentiles from the summed buckets', () => {
    const runnerOut = (offset: number, slowFrom: number) => {
      const lines = ['{"type":"Metric","data":{"name":"ttft_ms","type":"trend","contains":"time"},"metric":"ttft_ms"}'];
      const truth: Record<string, { ttft: number[]; itl: number[]; sent: number; failed: number; s503: number }> = {};
      // 12 s of streams, one every 200 ms: slices 0, 5 and 10 on both runners; the second runner is slow from 5 s on.
      for (let t = 0; t < 12_000; t += 200) {
        const slice = String(Math.floor(t / 5000) * 5);
        const tr = (truth[slice] ??= { ttft: [], itl: [], sent: 0, failed: 0, s503: 0 });
        const status = t % 2000 === 1000 ? 503 : 200;
        const ttft = 20 + ((t / 200 + offset) % 17) * 3 + (t >= slowFrom ? 400 : 0);
        const gaps = [5 + (t % 7), 6 + (t % 5), 30 + offset];
        lines.push(...streamPoints(t, status, ttft, gaps));
        tr.sent++;
        if (status !== 200) { tr.failed++; tr.s503++; continue; }
        tr.ttft.push(ttft);
        tr.itl.push(...gaps);
      }
      return { text: lines.join('\n') + '\n', truth };
    };
    const r1 = runnerOut(1, Infinity);
    const r2 = runnerOut(2, 5000);
    write('slices', 'r1-summary.json', runner(1, 2, samples(50, 10, 1), 0));
    write('slices', 'r2-summary.json', runner(2, 2, samples(50, 10, 2), 0));
    write('slices', 'r1.ndjson', r1.text);
    write('slices', 'r2.ndjson', r2.text);
    const r = merge([join(dir, 'slices'), '--out', join(dir, 'slices-out')]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/slices: 3 of 5 s from 2 runners' k6 outputs/);
    const m = JSON.parse(readFileSync(join(dir, 'slices-out', 'k6-chat-stream-sse-t-merged-summary.json'), 'utf8')) as K6Summary & { slices: { slice_s: number; rows: SliceRow[] } };
    expect(m.slices.slice_s).toBe(5);
    expect(m.slices.rows.map((row) => row.t_start_s)).toEqual([0, 5, 10]);
    for (const row of m.slices.rows) {
      const a = r1.truth[String(row.t_start_s)]!;
      const b = r2.truth[String(row.t_start_s)]!;
      expect(row.sent).toBe(a.sent + b.sent);
      expect(row.failed).toBe(a.failed + b.failed);
      expect(row.ok).toBe(a.ttft.length + b.ttft.length);
      expect(row.errors_by_status).toEqual({ 503: a.s503 + b.s503 });
      expect(row.samples.itl_ms).toBe(a.itl.length + b.itl.length);
      expect(row.e2e_p95_ms).not.toBeNull();
      // Percentiles of the merged buckets: the nearest-rank sample of both runners' samples, within the buckets' error.
      const cases: Array<[number | null, number[], number]> = [[row.ttft_p50_ms, [...a.ttft, ...b.ttft], 50], [row.ttft_p95_ms, [...a.ttft, ...b.ttft], 95], [row.itl_p99_ms, [...a.itl, ...b.itl], 99]];
      for (const [got, all, q] of cases) {
        const truth = nearest(all, q);
        expect(Math.abs(got! - truth), `slice ${row.t_start_s} p${q}`).toBeLessThanOrEqual(RELATIVE_ERROR * truth + 1e-9);
      }
    }
    // From 5 s on, half the streams are slow: the merged p95 is a slow one, the merged p50 not (no runner's own percentile gives both).
    const later = m.slices.rows[1]!;
    expect(later.ttft_p95_ms!).toBeGreaterThan(400);
    expect(later.ttft_p50_ms!).toBeLessThan(400 + 20);
    expect(m.slices.rows[0]!.ttft_p95_ms!).toBeLessThan(100);
    const s = JSON.parse(readFileSync(join(dir, 'slices-out', 'summary.json'), 'utf8')) as LoadSummary;
    expect((s.details as { k6: { slices: { rows: SliceRow[] } } }).k6.slices.rows).toHaveLength(3);
    const csv = readFileSync(join(dir, 'slices-out', 'slices.csv'), 'utf8').trim().split('\n');
    expect(csv).toHaveLength(4);
    expect(csv[0]).toMatch(/^t_start_s,t_end_s,sent,ok,failed,error_share,errors_by_status,ttft_p50_ms/);
    expect(csv[2]!.split(',').slice(0, 3)).toEqual(['5', '10', String(m.slices.rows[1]!.sent)]);
    // report.html draws the slices with the rehearsal's drawer: one point per slice, the e2e threshold as its limit line.
    const html = readFileSync(join(dir, 'slices-out', 'report.html'), 'utf8');
    const section = html.slice(html.indexOf('<div id="k6-slice-charts">'));
    expect(section.length, 'no k6 slice charts in report.html').toBeLessThan(html.length);
    const figures = section.match(/<figure class="chart" data-points="(\d+)">/g) ?? [];
    expect(figures).toHaveLength(5);
    for (const f of figures) expect(f).toContain('data-points="3"');
    for (const t of ['TTFT per slice (ms)', 'ITL per slice (ms)', 'E2E per slice (ms)', 'Streams per slice', 'Failed share per slice']) expect(section).toContain(`aria-label="${t}"`);
    expect(section).toContain('threshold e2e_ms p(95)&lt;500');
    expect(html).toMatch(/Per slice \(2 k6 runners merged\)/);
    expect(html).not.toContain('id="k6-slices-none"');
    // No per-second timeline in a k6 merge: the page says so instead of an empty "Over the run".
    expect(html).toMatch(/id="no-run-charts">No per-second figures in this summary: k6 runners' summaries hold/);
    // 3 slices x 3 percentiles: a circle per slice with samples in each TTFT series.
    const ttft = section.slice(0, section.indexOf('</figure>'));
    expect(ttft.match(/<circle class="pt"/g)).toHaveLength(9);
  });

  it('marks PHASES and CHANGE_AT on the slice charts; a merge without slices draws none and says how to get them', () => {
    const env = { ...SETTINGS.env, PHASES: 'ramp 5s to 10, hold 7s', CHANGE_AT: '6s', SLICE: '5s' };
    const phased = (i: number) => runner(i, 2, samples(50, 10, i), 0, { settings: { ...SETTINGS, env } });
    write('slices-phased', 'r1-summary.json', phased(1));
    write('slices-phased', 'r2-summary.json', phased(2));
    write('slices-phased', 'r1.ndjson', [0, 2000, 6000, 11_000].flatMap((t) => streamPoints(t, 200, 30, [5])).join('\n'));
    write('slices-phased', 'r2.ndjson', [1000, 7000].flatMap((t) => streamPoints(t, 200, 40, [6])).join('\n'));
    const r = merge([join(dir, 'slices-phased'), '--out', join(dir, 'slices-phased-out')]);
    expect(r.code, r.err).toBe(0);
    const html = readFileSync(join(dir, 'slices-phased-out', 'report.html'), 'utf8');
    const section = html.slice(html.indexOf('<div id="k6-slice-charts">'));
    expect(section.match(/<figure class="chart"/g)).toHaveLength(5);
    // Each chart carries both phase starts and the change.
    expect(section.match(/>ramp 5s to 10</g)).toHaveLength(5);
    expect(section.match(/>hold 7s</g)).toHaveLength(5);
    expect(section.match(/>change: CHANGE_AT=6s</g)).toHaveLength(5);
    // The e2e threshold (500 ms) is far above these 35-46 ms streams: named above the chart, not drawn (it would flatten the lines).
    const e2e = section.slice(section.indexOf('aria-label="E2E per slice (ms)"'));
    expect(e2e.slice(0, e2e.indexOf('</figure>'))).toContain('threshold e2e_ms p(95)&lt;500: far above the data, not drawn');

    write('no-slices', 'r1-summary.json', runner(1, 2, samples(50, 10, 1), 0));
    write('no-slices', 'r2-summary.json', runner(2, 2, samples(50, 10, 2), 0));
    const none = merge([join(dir, 'no-slices'), '--out', join(dir, 'no-slices-out')]);
    expect(none.code, none.err).toBe(0);
    const plain = readFileSync(join(dir, 'no-slices-out', 'report.html'), 'utf8');
    expect(plain).not.toContain('k6-slice-charts');
    expect(plain).not.toContain('<figure class="chart"');
    expect(plain).toContain('id="k6-slices-none"');
  });

  it('refuses slices of different lengths (exit 2, one line), and k6 outputs without their summaries', () => {
    write('slices-bad', 'r1-summary.json', runner(1, 2, samples(50, 10, 1), 0));
    write('slices-bad', 'r1.ndjson', streamPoints(0, 200, 10, [5]).join('\n'));
    write('slices-bad', 'r2.ndjson', streamPoints(0, 200, 10, [5]).map((l) => l.replace('"0+5"', '"0+10"')).join('\n'));
    const r = merge([join(dir, 'slices-bad'), '--out', join(dir, 'slices-bad-out')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/slices of 10 s, but .*r1\.ndjson has 5 s/);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    const alone = merge([join(dir, 'slices-bad', 'r1.ndjson')]);
    expect(alone.code).toBe(2);
    expect(alone.err).toMatch(/without the runners' summaries/);
  });
});
