// The Prometheus path, run for real: a Prometheus (Debian's package, 2.42) started here
// on 127.0.0.1 with a temporary configuration and data folder, the remote-write receiver
// and native histograms, fed by two k6 runners (k6 with xk6-sse, the operator's segment
// arguments, tags through K6_TAGS as the operator manifests set them) with k6's
// experimental-prometheus-rw output and trends sent as native histograms. The whole
// test's TTFT, ITL and E2E percentiles queried from Prometheus agree with
// `npm run load -- merge` of the same runners' summaries, within the two histograms'
// stated errors: Prometheus's estimate lies in the native bucket holding the
// nearest-rank sample (bucket bounds a factor 2^(2^-schema) apart, read from the answer),
// the merge within RELATIVE_ERROR of that sample. Sample counts must match exactly.
//
// Needs /usr/bin/prometheus (or PROMETHEUS_BIN) and k6-sse (or K6_SSE_BIN); skipped with
// the reason in its title otherwise.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildK6 } from '../../load/k6/build.ts';
import { RELATIVE_ERROR } from '../../load/k6/lib/log-buckets.ts';
import { mergeMain, type K6Summary } from '../../load/report/merge.ts';
import { startReferenceServer, type ReferenceServer } from '../../reference/server.ts';
import { findBin, operatorSegmentArgs } from '../support/k6-merge-segments.ts';

const k6sse = findBin('k6-sse', 'K6_SSE_BIN');
const prometheusBin = findBin('prometheus', 'PROMETHEUS_BIN', ['/usr/bin/prometheus']);
const SKIPPED = !k6sse ? 'prometheus tests: skipped, no k6 with xk6-sse (K6_SSE_BIN or k6-sse on PATH)' : !prometheusBin ? 'prometheus tests: skipped, no prometheus (apt-get install prometheus, or PROMETHEUS_BIN)' : undefined;
if (SKIPPED) console.info(SKIPPED);
const title = (t: string) => (SKIPPED ? `${SKIPPED}: ${t}` : t);

const TEST_ID = 'prom-selftest';
let work: string;
let ref: ReferenceServer;
let prom: ChildProcess | undefined;
let promUrl: string;
let promLog = '';
const codes: Array<number | null> = [];
const stderrs: string[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function query(expr: string): Promise<any[]> {
  const r = await fetch(`${promUrl}/api/v1/query`, { method: 'POST', body: new URLSearchParams({ query: expr }) });
  const body = (await r.json()) as { status: string; error?: string; data: { result: any[] } };
  if (body.status !== 'success') throw new Error(`Prometheus refused ${expr}: ${body.error}`);
  return body.data.result;
}

function runK6(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(k6sse!, ['run', '--quiet', '--no-color', ...args], { env: { PATH: process.env.PATH ?? '', HOME: work, K6_NO_USAGE_REPORT: 'true', ...env }, cwd: work });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

beforeAll(async () => {
  if (SKIPPED) return;
  work = mkdtempSync(join(tmpdir(), 'chatgate-prom-'));
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  writeFileSync(join(work, 'prometheus.yml'), 'global:\n  scrape_interval: 1m\n');
  // Prometheus 2.42 takes remote writes only with the receiver flag, and keeps native histograms only with the feature flag.
  prom = spawn(prometheusBin!, [
    `--config.file=${join(work, 'prometheus.yml')}`, `--storage.tsdb.path=${join(work, 'data')}`, `--web.listen-address=127.0.0.1:${port}`,
    '--web.enable-remote-write-receiver', '--enable-feature=native-histograms',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  prom.stderr!.on('data', (d: Buffer) => { promLog = (promLog + d.toString()).slice(-4000); });
  for (let i = 0; i < 120; i++) {
    const ready = await fetch(`${promUrl}/-/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  await buildK6({ outdir: join(work, 'dist'), scripts: ['chat-stream-sse'] });
  ref = await startReferenceServer({ latency: { ttftMs: 20, itlMs: 10 }, replyWords: 10 });
  mkdirSync(join(work, 'summaries'));
  const runs = [1, 2].map((i) => runK6([...operatorSegmentArgs(i, 2), '--out', 'experimental-prometheus-rw', join(work, 'dist', 'chat-stream-sse.js')], {
    TARGET_URL: ref.url, API_KEY: ref.keys.main, SUMMARY_DIR: join(work, 'summaries'), RATE: '20', DURATION: '3s', MODELS: 'svc',
    // As the operator manifests set them: the test id, and one runner tag per runner so Prometheus keeps their series apart.
    K6_TAGS: `testid:${TEST_ID},runner:r${i}`,
    K6_PROMETHEUS_RW_SERVER_URL: `${promUrl}/api/v1/write`,
    K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM: 'true',
    K6_PROMETHEUS_RW_PUSH_INTERVAL: '1s',
  }));
  for (const r of await Promise.all(runs)) {
    codes.push(r.code);
    stderrs.push(r.stderr);
  }
  const lines: string[] = [];
  codes.push(mergeMain([join(work, 'summaries'), '--out', join(work, 'merged')], {}, (l) => lines.push(l)));
}, 240_000);

afterAll(async () => {
  if (prom && prom.exitCode === null) {
    const exited = new Promise((r) => prom!.once('exit', r));
    prom.kill('SIGTERM');
    await exited;
  }
  await ref?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('Prometheus (remote write, native histograms) and merge agree on the whole test', () => {
  it.skipIf(!!SKIPPED)(title('two runners push to Prometheus; every sample arrives; its TTFT, ITL and E2E percentiles agree with the merge within both stated errors'), async () => {
    expect(codes, `${stderrs.join('\n')}\n${promLog}`).toEqual([0, 0, 0]);
    const merged = JSON.parse(readFileSync(join(work, 'merged', `k6-chat-stream-sse-${TEST_ID}-merged-summary.json`), 'utf8')) as K6Summary;
    expect(merged.identity.test_id).toBe(TEST_ID); // from K6_TAGS' testid
    const rows: string[] = [];
    for (const metric of ['ttft_ms', 'itl_ms', 'e2e_ms']) {
      const sel = `k6_${metric}_seconds{testid="${TEST_ID}"}`;
      // Two runners, their series apart.
      expect((await query(`count by (runner) (${sel})`)).map((r) => r.metric.runner).sort()).toEqual(['r1', 'r2']);
      const [count] = await query(`histogram_count(sum(${sel}))`);
      expect(Number(count.value[1])).toBe(merged.distributions[metric]!.count);
      // The native buckets' growth factor, from the answer itself (k6 chooses the schema).
      const [h] = await query(`sum(${sel})`);
      const buckets = h.histogram[1].buckets as Array<[number, string, string, string]>;
      const factor = Math.max(...buckets.filter((b) => Number(b[1]) > 0).map((b) => Number(b[2]) / Number(b[1])));
      for (const [key, q] of [['med', 0.5], ['p(90)', 0.9], ['p(95)', 0.95], ['p(99)', 0.99]] as const) {
        const [r] = await query(`histogram_quantile(${q}, sum(${sel}))`);
        const fromProm = Number(r.value[1]) * 1000;
        const fromMerge = merged.metrics[metric]!.values[key]!;
        const ratio = fromProm / fromMerge;
        rows.push(`${metric} ${key}: prometheus ${fromProm.toFixed(3)} merge ${fromMerge.toFixed(3)} (ratio ${ratio.toFixed(4)}, allowed ${(1 / (factor * (1 + RELATIVE_ERROR))).toFixed(4)}..${(factor / (1 - RELATIVE_ERROR)).toFixed(4)})`);
        expect(ratio, rows.join('\n')).toBeGreaterThanOrEqual(1 / (factor * (1 + RELATIVE_ERROR)) - 1e-9);
        expect(ratio, rows.join('\n')).toBeLessThanOrEqual(factor / (1 - RELATIVE_ERROR) + 1e-9);
      }
    }
    console.info(`prometheus vs merge:\n  ${rows.join('\n  ')}`);
  });
});
