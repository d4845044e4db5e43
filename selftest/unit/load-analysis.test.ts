// The load harness's judgement pieces: baseline comparison and thresholds, error-body
// and retry-header checks, coordinated-omission correction, arrival schedules, the
// brain share and request bodies, and the findings' levels.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareMetrics, formatComparison, loadBaseline, parseThresholds } from '../../load/report/baseline.ts';
import { checkRetryHeaders, parseResetDuration } from '../../load/engine/error-checks.ts';
import { errorBodyProblems as sharedRule } from '../../lib/spec/error-body.ts';
import { errorSchemaProblems } from '../../lib/spec/schema-validator.ts';

const errorBodyProblems = (h: Record<string, string>, body: string) => sharedRule(h['content-type'], body, errorSchemaProblems);
import { LatencyHistogram } from '../../load/engine/histogram.ts';
import { arrivals } from '../../load/engine/arrivals.ts';
import { bodyFor, pathFor, routeAt } from '../../load/engine/request-bodies.ts';
import { Findings, findingsFail } from '../../load/report/findings.ts';
import { METRICS } from '../../load/report/metric-names.ts';
import { UsageError } from '../../load/setup/options.ts';

const baselineOf = (metrics: Record<string, number | null>) => ({ path: 'base.json', scenario: 'stream', startedAt: null, metrics });

describe('baseline comparison', () => {
  it('flags a change for the worse beyond the threshold, in the metric\'s direction', () => {
    const cmp = compareMetrics(
      { ok_rps: 80, ttft_p95_ms: 260, ttft_p50_ms: 205, error_share: 0.05, itl_p50_ms: 20 },
      baselineOf({ ok_rps: 100, ttft_p95_ms: 200, ttft_p50_ms: 200, error_share: 0, itl_p50_ms: 25 }),
      new Map(),
    );
    const verdict = Object.fromEntries(cmp.rows.map((r) => [r.metric, r.verdict]));
    expect(verdict).toEqual({ ok_rps: 'regression', error_share: 'regression', ttft_p50_ms: 'ok', ttft_p95_ms: 'regression', itl_p50_ms: 'better' });
    expect(cmp.regressions).toBe(3);
    const table = formatComparison(cmp);
    expect(table).toMatch(/3 regressions/);
    expect(table).toMatch(/ttft_p95_ms\s+200\.0\s+260\.0\s+\+30\.0 %\s+\+40\.00 ms\s+-\s+REGRESSION/);
  });

  it('takes --threshold overrides, relative or absolute, and lists metrics on one side only', () => {
    const over = parseThresholds(['ttft_p95_ms=50%', 'ok_rps=30']);
    expect(over.get('ttft_p95_ms')).toEqual({ relative: 0.5, absolute: 0 });
    const cmp = compareMetrics({ ok_rps: 80, ttft_p95_ms: 260, goodput_rps: 3 }, baselineOf({ ok_rps: 100, ttft_p95_ms: 200, e2e_p50_ms: 900 }), over);
    const byName = Object.fromEntries(cmp.rows.map((r) => [r.metric, r]));
    expect(byName.ok_rps!.verdict).toBe('ok');
    expect(byName.ttft_p95_ms!.verdict).toBe('ok');
    expect(byName.goodput_rps!.verdict).toBe('not compared');
    expect(byName.e2e_p50_ms!.verdict).toBe('not compared');
    expect(() => parseThresholds(['nope_ms=5%'])).toThrow(/unknown metric nope_ms/);
    expect(() => parseThresholds(['ttft_p95_ms=fast'])).toThrow(UsageError);
  });

  it('refuses a baseline that is not a summary or is from another scenario, before the run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatgate-baseline-'));
    writeFileSync(join(dir, 'a.json'), JSON.stringify({ format: 'chatgate-load-summary', scenario: 'throughput', metrics: {} }));
    writeFileSync(join(dir, 'b.json'), '{"results": []}');
    writeFileSync(join(dir, 'c.json'), 'not json');
    expect(() => loadBaseline(join(dir, 'a.json'), 'stream')).toThrow(/from the throughput scenario; compare stream runs with a stream baseline/);
    expect(() => loadBaseline(join(dir, 'b.json'), 'stream')).toThrow(/not a chatgate load summary/);
    expect(() => loadBaseline(join(dir, 'c.json'), 'stream')).toThrow(/cannot read it as JSON/);
    expect(() => loadBaseline(join(dir, 'missing.json'), 'stream')).toThrow(UsageError);
    expect(loadBaseline(join(dir, 'a.json'), 'throughput').scenario).toBe('throughput');
  });

  it('gives every metric a unit in its name and a direction', () => {
    for (const [name, info] of Object.entries(METRICS)) {
      expect(name).toMatch(/^[a-z0-9_]+$/);
      expect(name).toMatch(/(_ms|_rps|_per_s|_share|_cores)$|^share_/);
      expect(['higher', 'lower']).toContain(info.better);
    }
  });
});

describe('error answers and retry hints', () => {
  const json = { 'content-type': 'application/json' };
  it('accepts a proper error body and names what is wrong otherwise', () => {
    expect(errorBodyProblems(json, '{"error":{"message":"slow down","type":"rate_limit_error","code":"rate_limit_exceeded"}}')).toEqual([]);
    expect(errorBodyProblems(json, '')).toEqual(['the body is empty']);
    expect(errorBodyProblems({}, '')).toEqual(['Content-Type is missing, expected application/json', 'the body is empty']);
    expect(errorBodyProblems({ 'content-type': 'text/plain' }, 'Too Many Requests')[1]).toMatch(/not JSON/);
    expect(errorBodyProblems(json, '{"message":"flat"}').join()).toMatch(/\/error is missing/);
  });

  it('reads the advised wait the way the clients do and checks the hints agree', () => {
    const good = checkRetryHeaders({ 'retry-after': '1', 'retry-after-ms': '420', 'x-ratelimit-limit-requests': '10', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '420ms' });
    expect(good).toEqual({ problems: [], waitMs: 420, source: 'retry-after-ms' });
    expect(checkRetryHeaders({ 'retry-after': '3' })).toMatchObject({ waitMs: 3000, source: 'retry-after', problems: [] });
    const date = new Date(Date.now() + 5000).toUTCString();
    expect(checkRetryHeaders({ 'retry-after': date }).waitMs).toBeGreaterThan(3000);
    expect(checkRetryHeaders({}).problems).toEqual(['429 without Retry-After, retry-after-ms or x-ratelimit-reset-* headers']);
    expect(checkRetryHeaders({ 'retry-after': '5', 'retry-after-ms': '200' }).problems[0]).toMatch(/disagree/);
    expect(checkRetryHeaders({ 'retry-after': 'soon' }).problems[0]).toMatch(/neither whole seconds nor an HTTP date/);
    expect(checkRetryHeaders({ 'retry-after': '1', 'x-ratelimit-remaining-requests': '4' }).problems[0]).toMatch(/says 4 left/);
    expect(checkRetryHeaders({ 'retry-after': '120' }).problems[0]).toMatch(/beyond the 60 s clients honour/);
    expect(parseResetDuration('6m0s')).toBe(360_000);
    expect(parseResetDuration('1.5s')).toBe(1500);
    expect(parseResetDuration('20ms')).toBe(20);
    expect(parseResetDuration('soon')).toBeUndefined();
  });

  it('fails a run on MUST/COMPAT findings only (SHOULD in strict mode), and counts repeats', () => {
    const f = new Findings();
    f.add('LIM-2', 'no hint');
    f.add('LIM-2', 'no hint');
    expect(f.list()).toEqual([{ clause: 'LIM-2', level: 'SHOULD', count: 2, message: 'no hint', example: undefined }]);
    expect(findingsFail(f.list(), false)).toBe(false);
    expect(findingsFail(f.list(), true)).toBe(true);
    f.add('ERR-2', 'answered 500');
    expect(findingsFail(f.list(), false)).toBe(true);
    expect(f.list()[0]!.clause).toBe('ERR-2');
  });
});

describe('measurement pieces', () => {
  it('corrects for coordinated omission with the interval requests were due', () => {
    const h = new LatencyHistogram();
    for (let i = 0; i < 980; i++) h.record(5);
    // One response held 1 s while requests were due every 50 ms: 19 more were missed.
    h.recordCorrected(1000, 50);
    expect(h.count).toBe(1000);
    expect(h.percentileMs(50)).toBeCloseTo(5, 1);
    expect(h.percentileMs(99)).toBeGreaterThan(400);
    const raw = new LatencyHistogram();
    for (let i = 0; i < 980; i++) raw.record(5);
    raw.record(1000);
    expect(raw.percentileMs(99)).toBeCloseTo(5, 1);
  });

  it('keeps percentiles exact to three digits and round-trips through base64', () => {
    const h = new LatencyHistogram();
    for (let i = 1; i <= 10_000; i++) h.record(i / 10);
    expect(h.summary()).toMatchObject({ count: 10_000, p50_ms: expect.closeTo(500, 0) });
    expect(Math.abs(h.percentileMs(99) - 990) / 990).toBeLessThan(0.001);
    expect(LatencyHistogram.decode(h.encode()).percentileMs(90)).toBe(h.percentileMs(90));
    const plot = h.bucketPlot(10);
    expect(plot.count.reduce((a, b) => a + b, 0)).toBe(10_000);
  });

  it('schedules constant and Poisson arrivals at the asked rate, repeatably', () => {
    const constant = [...arrivals('constant', 20, 1000)];
    expect(constant).toHaveLength(20);
    expect(constant[1]).toBe(50);
    const poisson = [...arrivals('poisson', 100, 60_000, 7)];
    expect(poisson.length).toBeGreaterThan(5700);
    expect(poisson.length).toBeLessThan(6300);
    expect([...arrivals('poisson', 100, 1000, 7)]).toEqual(poisson.filter((t) => t < 1000));
    const gaps = poisson.slice(1).map((t, i) => t - poisson[i]!);
    const cv = Math.sqrt(gaps.reduce((a, g) => a + (g - 10) ** 2, 0) / gaps.length) / 10;
    expect(cv).toBeGreaterThan(0.9); // exponential gaps: coefficient of variation 1
  });

  it('spreads the brain share exactly and builds the three kinds of request', () => {
    const routes = Array.from({ length: 100 }, (_, i) => routeAt(i, 0.2));
    expect(routes.filter((r) => r !== 'chat')).toHaveLength(20);
    expect(routes.filter((r) => r === 'brain-model')).toHaveLength(10);
    expect(Array.from({ length: 50 }, (_, i) => routeAt(i, 0)).every((r) => r === 'chat')).toBe(true);
    const brainId = '3f2c1d4e-0000-4000-8000-000000000001';
    const opts = { model: 'svc', prompt: 'Hi', stream: true, brainId, maxTokens: 16 };
    expect(bodyFor('chat', opts, 3)).toEqual({ model: 'svc', messages: [{ role: 'user', content: 'Hi (request 3)' }], stream: true, stream_options: { include_usage: true }, max_tokens: 16 });
    expect(bodyFor('brain-model', opts, 0).model).toBe(`brain:${brainId}`);
    expect(bodyFor('brain-route', { ...opts, stream: false }, 0)).toEqual({ messages: [{ role: 'user', content: 'Hi (request 0)' }], max_tokens: 16 });
    expect(pathFor('brain-route', brainId)).toBe(`/brains/${brainId}/chat`);
    expect(() => pathFor('brain-route')).toThrow(/BRAIN_ID/);
  });
});
