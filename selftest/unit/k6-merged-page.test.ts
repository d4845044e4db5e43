// What a merge of k6 runners says about itself: no driver figures it never measured
// (null with its reason, and every reader of summary.json copes), the scenarios the
// runners ran, a title naming what was merged, when the test ran (the runners' own
// times, null with why where one recorded none) and what its target is; and what a runner's summary records of
// its HEADERS (every secret value ***, whatever its length) and its proxy (credentials
// masked). The runners' summaries come from the chat-stream-sse bundle's handleSummary
// in the k6 stand-in (selftest/support/k6-shim.ts).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildK6 } from '../../load/k6/build.ts';
import { mergeMain, type K6Summary } from '../../load/report/merge.ts';
import type { LoadSummary } from '../../load/report/summary.ts';
import { loadBundle } from '../support/k6-shim.ts';
import { targetKind } from '../../load/setup/safety.ts';
import { remoteTarget } from '../../load/setup/load-target.ts';

const TARGET = 'http://127.0.0.1:9/v1';
const KEY = 'sk-merged-page-secret-0123456789';

let work: string;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'chatgate-k6-merged-page-'));
  await buildK6({ outdir: join(work, 'dist'), scripts: ['chat-stream-sse'] });
});
afterAll(() => rmSync(work, { recursive: true, force: true }));
afterEach(() => { vi.restoreAllMocks(); vi.unstubAllEnvs(); vi.useRealTimers(); });

const DATA = {
  state: { testRunDurationMs: 2000 },
  metrics: {
    streams_ok: { type: 'counter', contains: 'default', values: { count: 10, rate: 5 } },
    chatgate_stream_failed: { type: 'rate', contains: 'default', values: { rate: 0, passes: 0, fails: 10 }, thresholds: { 'rate<0.01': { ok: true } } },
  },
  root_group: { name: '', checks: [{ name: 'status is 2xx or 429', passes: 10, fails: 0 }] },
};

/** The `-summary.json` one runner of a 2-runner test writes, from the bundle's handleSummary; `k6` plays what k6 does to the options by then. */
function runnerSummary(i: 1 | 2, env: Record<string, string> = {}, k6: { scenarios?: unknown; at?: { nowMs: number; testRunDurationMs?: number } } = {}): K6Summary {
  const { exports, shim } = loadBundle(join(work, 'dist', 'chat-stream-sse.js'), { TARGET_URL: TARGET, API_KEY: KEY, TEST_ID: 'pg', SUMMARY_DIR: 'out', ...env });
  const { at, ...options } = k6;
  shim.testOptions = { executionSegment: i === 1 ? '0:1/2' : '1/2:1', executionSegmentSequence: '0,1/2,1', ...options };
  // By handleSummary, k6 has swapped the script's options.scenarios for an object that serialises as {}.
  if (k6.scenarios) (exports.options as { scenarios: unknown }).scenarios = {};
  // handleSummary's clock, and k6's testRunDurationMs (absent: a k6 that gives none).
  if (at) { vi.useFakeTimers({ toFake: ['Date'] }); vi.setSystemTime(at.nowMs); }
  const data = at ? { ...DATA, state: at.testRunDurationMs === undefined ? {} : { testRunDurationMs: at.testRunDurationMs } } : DATA;
  const out = exports.handleSummary(data) as Record<string, string>;
  vi.useRealTimers();
  return JSON.parse(out[Object.keys(out).find((k) => k.endsWith('-summary.json'))!]!) as K6Summary;
}

function merge(name: string, docs: unknown[], extra: string[] = []): { code: number; out: string; summary: LoadSummary; html: string; dir: string } {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  docs.forEach((d, i) => writeFileSync(join(dir, `r${i + 1}-summary.json`), JSON.stringify(d)));
  const lines: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const code = mergeMain([...docs.map((_, i) => join(dir, `r${i + 1}-summary.json`)), '--out', join(dir, 'out'), ...extra], {}, (l) => lines.push(l));
  vi.restoreAllMocks();
  return {
    code, out: lines.join('\n'), dir: join(dir, 'out'),
    summary: JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8')) as LoadSummary,
    html: readFileSync(join(dir, 'out', 'report.html'), 'utf8'),
  };
}

/** The page's Options row of a name, or undefined. */
const optionRow = (html: string, name: string) => new RegExp(`<h2>Options</h2>[\\s\\S]*?<tr><td>${name}</td><td class="txt">([^\\n]*?)</td></tr>`).exec(html)?.[1];

describe('a merge of k6 runners', () => {
  it('gives no driver figures: driver null with the reason, the page says not measured, and a merge of merges, a limit and a baseline cope', () => {
    const m = merge('driver', [runnerSummary(1), runnerSummary(2)]);
    expect(m.code).toBe(0);
    expect(m.summary.driver).toBeNull();
    expect(m.summary.driver_not_measured).toMatch(/^k6 runners' summaries carry no figures of their own load/);
    expect(m.summary.metrics).not.toHaveProperty('driver_cpu_cores');
    expect(m.html).toMatch(/<h2>The driver<\/h2>\s*<p class="help" id="driver-not-measured">Not measured: k6 runners' summaries carry no figures/);
    expect(m.html).not.toContain('<td>cpu_cores</td>');

    // Two merged summary.json files merged again (Node summaries' path): still not measured, not a sum of zeros.
    const again = join(work, 'driver-again');
    mkdirSync(again, { recursive: true });
    const lines: string[] = [];
    const code = mergeMain([join(m.dir, 'summary.json'), join(m.dir, 'summary.json'), '--out', again], {}, (l) => lines.push(l));
    expect(code).toBe(0);
    const twice = JSON.parse(readFileSync(join(again, 'summary.json'), 'utf8')) as LoadSummary;
    expect(twice.driver).toBeNull();
    expect(twice.driver_not_measured).toMatch(/not measured in every merged run \(k6 runners' summaries/);

    // A limit on the driver's CPU has no sample to judge (a broken gate, never a pass on a 0); a baseline's figure is not compared.
    const node = { ...m.summary, driver: { cpu_user_s: 1, cpu_system_s: 0, cpu_cores: 0.5, event_loop_utilization: 0.2, event_loop_delay_p99_ms: 1, max_rss_mib: 80, node_version: 'v20', schedule_lag_p99_ms: 1 }, metrics: { ...m.summary.metrics, driver_cpu_cores: 0.5 } };
    writeFileSync(join(work, 'node-baseline.json'), JSON.stringify(node));
    const g = merge('driver-gate', [runnerSummary(1), runnerSummary(2)], ['--threshold', 'driver_cpu_cores<2', '--baseline', join(work, 'node-baseline.json')]);
    expect(g.out).toContain('threshold: driver_cpu_cores < 2 cores, no sample to judge: BROKEN');
    expect(g.code).toBe(1);
    expect(g.summary.baseline!.rows.find((r) => r.metric === 'driver_cpu_cores')).toMatchObject({ baseline: 0.5, current: null, verdict: 'not compared' });
  });

  it('records and shows the scenarios k6 ran (its consolidated options, unset fields left out); a summary that recorded {} shows no scenarios row', () => {
    const ran = { stream: { executor: 'constant-arrival-rate', startTime: null, gracefulStop: null, exec: null, rate: 4, timeUnit: '1s', duration: '4s', preAllocatedVUs: 4, maxVUs: 80 } };
    const r1 = runnerSummary(1, {}, { scenarios: ran });
    expect(r1.identity.settings.scenarios).toEqual({ stream: { executor: 'constant-arrival-rate', rate: 4, timeUnit: '1s', duration: '4s', preAllocatedVUs: 4, maxVUs: 80 } });
    const m = merge('scenarios', [r1, runnerSummary(2, {}, { scenarios: ran })]);
    expect(optionRow(m.html, 'scenarios')).toContain('constant-arrival-rate');
    expect(optionRow(m.html, 'scenarios')).toContain('&quot;rate&quot;:4');

    // Summaries of builds that recorded k6's emptied object: the row is left out, not shown as {}.
    const old = [runnerSummary(1), runnerSummary(2)].map((s) => ({ ...s, identity: { ...s.identity, settings: { ...s.identity.settings, scenarios: {} } } }));
    const o = merge('scenarios-old', old);
    expect(optionRow(o.html, 'scenarios')).toBeUndefined();
    expect(optionRow(o.html, 'k6_script')).toBe('chat-stream-sse');
  });

  it('is titled by what was merged: the script, the runners and the test, not the scenario its figures are filed under', () => {
    const m = merge('title', [runnerSummary(1), runnerSummary(2)]);
    expect(m.summary.scenario).toBe('stream');
    const title = /<title>([^<]*)<\/title>/.exec(m.html)![1]!;
    expect(title).toMatch(/^chatgate k6: chat-stream-sse, 2 runners merged \(test pg\) — \d{4}-/);
    expect(m.html).toContain(`<h1>${title}</h1>`);
    const throughput = [runnerSummary(1), runnerSummary(2)].map((s) => ({ ...s, script: 'chat-throughput', identity: { ...s.identity, script: 'chat-throughput' } }));
    expect(/<title>([^<]*)<\/title>/.exec(merge('title-tp', throughput).html)![1]).toMatch(/^chatgate k6: chat-throughput, 2 runners merged/);
  });
});

describe('when the merged test ran, and what it ran against', () => {
  const T0 = Date.parse('2026-03-01T10:00:00.000Z');
  it('a runner records its start and end on its own clock: handleSummary\'s time less k6\'s testRunDurationMs; with none, the start is null, saying why', () => {
    const r = runnerSummary(1, {}, { at: { nowMs: T0 + 62_500, testRunDurationMs: 62_000 } });
    expect(r).toMatchObject({ started_at: '2026-03-01T10:00:00.500Z', finished_at: '2026-03-01T10:01:02.500Z', durationMs: 62_000 });
    expect(r).not.toHaveProperty('started_at_unknown');
    const none = runnerSummary(1, {}, { at: { nowMs: T0 } });
    expect(none).toMatchObject({ started_at: null, finished_at: '2026-03-01T10:00:00.000Z', started_at_unknown: 'k6 gave handleSummary no testRunDurationMs' });
  });

  it('the merge runs from the earliest runner\'s start to the latest runner\'s end, not from the merge\'s time; the page\'s title gives the start', () => {
    // Runner 2 started 3 s later and ended 5 s later; the merge happens now, long after.
    const m = merge('times', [runnerSummary(1, {}, { at: { nowMs: T0 + 60_000, testRunDurationMs: 60_000 } }), runnerSummary(2, {}, { at: { nowMs: T0 + 65_000, testRunDurationMs: 62_000 } })]);
    expect(m.code).toBe(0);
    expect(m.summary).toMatchObject({ started_at: '2026-03-01T10:00:00.000Z', finished_at: '2026-03-01T10:01:05.000Z', duration_s: 62 });
    expect(m.summary).not.toHaveProperty('times_unknown');
    const k6 = JSON.parse(readFileSync(join(m.dir, 'k6-chat-stream-sse-pg-merged-summary.json'), 'utf8')) as K6Summary;
    expect(k6).toMatchObject({ started_at: '2026-03-01T10:00:00.000Z', finished_at: '2026-03-01T10:01:05.000Z' });
    expect(/<title>([^<]*)<\/title>/.exec(m.html)![1]).toBe('chatgate k6: chat-stream-sse, 2 runners merged (test pg) — 2026-03-01T10:00:00.000Z');
    expect(m.html).toContain('The test ran from 2026-03-01T10:00:00.000Z to 2026-03-01T10:01:05.000Z (the earliest runner\'s start and the latest runner\'s end, each on its runner\'s clock); its rates are over the longest runner\'s run, 62 s.');
    expect(m.html).toContain('<tr><td>2</td><td>1/2:1</td><td class="nw">2026-03-01T10:00:03.000Z</td><td class="nw">2026-03-01T10:01:05.000Z</td>');
  });

  it('a runner that recorded no time leaves the merged one null, naming the runner and why; a merge of such merges too', () => {
    const old = runnerSummary(2, {}, { at: { nowMs: T0 + 60_000, testRunDurationMs: 60_000 } });
    delete old.started_at;
    delete old.finished_at;
    const m = merge('times-old', [runnerSummary(1, {}, { at: { nowMs: T0 + 60_000, testRunDurationMs: 60_000 } }), old]);
    expect(m.summary.started_at).toBeNull();
    expect(m.summary.finished_at).toBeNull();
    expect(m.summary.times_unknown).toBe('started_at: not recorded by runner 2 (a summary of an older build (rebuild the bundles: npm run build:k6)); finished_at: not recorded by runner 2 (a summary of an older build (rebuild the bundles: npm run build:k6))');
    expect(/<title>([^<]*)<\/title>/.exec(m.html)![1]).toBe('chatgate k6: chat-stream-sse, 2 runners merged (test pg) — start not recorded');
    expect(m.html).toContain('The test ran from a start not recorded to an end not recorded (the earliest runner\'s start and the latest runner\'s end, each on its runner\'s clock; started_at: not recorded by runner 2');
    expect(m.html).toContain('<tr><td>2</td><td>1/2:1</td><td class="nw">not recorded</td><td class="nw">not recorded</td>');
    const n = merge('times-none', [runnerSummary(1, {}, { at: { nowMs: T0, testRunDurationMs: 1000 } }), runnerSummary(2, {}, { at: { nowMs: T0 } })]);
    expect(n.summary).toMatchObject({ started_at: null, finished_at: '2026-03-01T10:00:00.000Z', times_unknown: 'started_at: not recorded by runner 2 (k6 gave handleSummary no testRunDurationMs)' });

    const again = join(work, 'times-again');
    mkdirSync(again, { recursive: true });
    expect(mergeMain([join(m.dir, 'summary.json'), join(n.dir, 'summary.json'), '--out', again], {}, () => {})).toBe(0);
    const twice = JSON.parse(readFileSync(join(again, 'summary.json'), 'utf8')) as LoadSummary;
    expect(twice).toMatchObject({ started_at: null, finished_at: null, times_unknown: expect.stringMatching(/^not recorded in every merged run \(started_at: not recorded by runner 2 .*\); duration_s is the longest run's$/) });
  });

  it('names a loopback target loopback and any other remote, by the rule the Node runs use (targetKind)', async () => {
    const loop = merge('kind-loopback', [runnerSummary(1), runnerSummary(2)]);
    expect(loop.summary.target).toEqual({ url: TARGET, kind: 'loopback' });
    expect(loop.html).toContain(`target ${TARGET} (loopback)`);
    const far = [runnerSummary(1, { TARGET_URL: 'https://staging.example/v1' }), runnerSummary(2, { TARGET_URL: 'https://staging.example/v1' })];
    expect(merge('kind-remote', far).summary.target).toEqual({ url: 'https://staging.example/v1', kind: 'remote' });
    expect(targetKind(new URL(TARGET))).toBe('loopback');
    const node = remoteTarget({ targetUrl: TARGET, apiKey: KEY, models: ['svc'], timeoutMs: 1000 } as never);
    expect(node.kind).toBe('loopback');
    await node.close();
  });
});

describe('a runner\'s summary', () => {
  it('records HEADERS with every secret value ***, a 2-character one too, and harmless values as given', () => {
    const s = runnerSummary(1, { HEADERS: 'x-api-key: ab\nx-portkey-provider: openai\nCF-Access-Client-Secret: cfsecret-abcdefgh' });
    expect((s.identity.settings.env as Record<string, string>).HEADERS).toBe('x-api-key: ***\nx-portkey-provider: openai\nCF-Access-Client-Secret: ***');
    expect(JSON.stringify(s)).not.toMatch(/x-api-key: ab|cfsecret/);
  });

  it('records its proxy variables with their credentials masked, {} when it went direct', () => {
    const s = runnerSummary(1, { HTTPS_PROXY: 'http://alice:prx-pass-77@proxy.example:3128', NO_PROXY: 'internal.example,.corp' });
    expect(s.proxy_env).toEqual({ HTTPS_PROXY: 'http://alice:***@proxy.example:3128', NO_PROXY: 'internal.example,.corp' });
    expect(JSON.stringify(s)).not.toContain('prx-pass-77');
    expect(runnerSummary(2).proxy_env).toEqual({});
  });
});
