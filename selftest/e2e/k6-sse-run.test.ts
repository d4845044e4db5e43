// Token timing from k6, proven against the truth: the Node load driver and k6 built
// with xk6-sse (chat-stream-sse) read the same paced reference (first token after
// 300 ms + 50 ms, then one every 50 ms), and both report TTFT and ITL medians within
// 5 % of what the reference injects and of each other. Seeded defects cross the
// script's thresholds (exit 99); legal stream variants pass. Runs are bounded by count
// (RATE x DURATION streams), the assertions are on measured figures, not on how long
// anything took.
//
// Needs a k6 with xk6-sse: K6_SSE_BIN, or `k6-sse` on PATH (.ci/run puts the project's
// CI build there when ../shared/bin exists). Without one every test here is skipped and
// says so in its title. The script's logic is also covered without k6 by
// selftest/unit/k6-stream-sse.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildK6 } from '../../load/k6/build.ts';
import { METRICS } from '../../load/report/metric-names.ts';
import { loadConfig } from '../../lib/run/config.ts';
import { parseArgs } from '../../load/setup/options.ts';
import { executeRun } from '../../load/run.ts';
import { startReferenceProcess, type EmbeddedReference } from '../../load/setup/reference-process.ts';
import { referenceTarget } from '../../load/setup/load-target.ts';
import { StopToken } from '../../load/setup/stop.ts';
import { startReferenceServer } from '../../reference/server.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';
import { findBin } from '../support/k6-merge-segments.ts';
import { runProcess } from '../support/run-process.ts';

const k6sse = findBin('k6-sse', 'K6_SSE_BIN');
const SKIPPED = 'k6-sse run tests: skipped, no k6 with xk6-sse (set K6_SSE_BIN or put k6-sse on PATH)';
if (!k6sse) console.info(SKIPPED);
const title = (t: string) => (k6sse ? t : `${SKIPPED}: ${t}`);

const TTFT_MS = 300;
const ITL_MS = 50;
const WORDS = 10;
// The reference sends the role chunk after ttftMs and the first content chunk itlMs later.
const TRUE_TTFT = TTFT_MS + ITL_MS;
const within = (measured: number, expected: number) => Math.abs(measured - expected) / expected;

interface K6Run { code: number | null; stdout: string; stderr: string; dir: string }

let outdir: string;
beforeAll(async () => {
  if (!k6sse) return;
  outdir = mkdtempSync(join(tmpdir(), 'chatgate-k6-sse-'));
  await buildK6({ outdir, scripts: ['chat-stream-sse'] });
});
afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

function k6Run(target: { url: string; keys: { main: string } }, env: Record<string, string>): Promise<K6Run> {
  const dir = mkdtempSync(join(outdir, 'run-'));
  // Keys in the environment, never on the command line.
  return runProcess(k6sse!, ['run', '--quiet', '--no-color', join(outdir, 'chat-stream-sse.js')],
    { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, TARGET_URL: target.url, API_KEY: target.keys.main, SUMMARY_DIR: dir, K6_NO_USAGE_REPORT: 'true', ...env }, dir, 60_000)
    .then((r) => ({ ...r, dir }));
}

function summary(run: K6Run) {
  const file = join(run.dir, 'k6-chat-stream-sse-summary.json');
  expect(existsSync(file), `${run.stdout}\n${run.stderr}`).toBe(true);
  const raw = readFileSync(file, 'utf8');
  return { json: JSON.parse(raw), raw, junit: readFileSync(join(run.dir, 'k6-chat-stream-sse-junit.xml'), 'utf8') };
}

describe('token timing: k6 (xk6-sse) beside the Node driver on the same paced reference', () => {
  let ref: EmbeddedReference | undefined;
  beforeAll(async () => {
    if (!k6sse) return;
    ref = await startReferenceProcess({ latency: { ttftMs: TTFT_MS, itlMs: ITL_MS }, replyWords: WORDS });
  });
  afterAll(() => ref?.close());

  /** One pair of runs: the Node driver, then k6-sse, 20 streams each at 5/s. */
  async function pair() {
    const { options } = parseArgs(['stream', '--quiet', '--rate', '5', '--arrival', 'constant', '--duration', '4', '--warmup', '2'], {});
    const node = await executeRun({ scenario: 'stream', options, config: loadConfig({}), target: { ...referenceTarget(ref!), reference: ref! }, stop: new StopToken(), log: () => {} });
    const run = await k6Run(ref!, { RATE: '5', DURATION: '4s' });
    return { node, n: node.summary.metrics as Record<string, number>, run };
  }

  it.skipIf(!k6sse)(title(`TTFT and ITL medians within 5 % of the injected truth (${TRUE_TTFT} ms / ${ITL_MS} ms) and of each other`), async () => {
    // Each figure is a median of 20 streams (180 gaps); on a machine at load 15+ a run's
    // timers can all be late by more than 5 %, so up to three pairs of runs are made (a
    // bounded count) and the last one is judged: a systematic error fails all three.
    const medians = (n: Record<string, number>, k: Record<string, number>) => [
      within(n.ttft_p50_ms!, TRUE_TTFT), within(k.ttft_p50_ms!, TRUE_TTFT), within(n.itl_p50_ms!, ITL_MS), within(k.itl_p50_ms!, ITL_MS),
      within(k.ttft_p50_ms!, n.ttft_p50_ms!), within(k.itl_p50_ms!, n.itl_p50_ms!),
    ];
    let p = await pair();
    const seen: string[] = [];
    for (let attempt = 1; ; attempt++) {
      const k = p.run.code === 0 && existsSync(join(p.run.dir, 'k6-chat-stream-sse-summary.json')) ? summary(p.run).json.loadMetrics as Record<string, number> : undefined;
      const fig = (m: Record<string, number>) => `TTFT p50 ${m.ttft_p50_ms} p95 ${m.ttft_p95_ms}, ITL p50 ${m.itl_p50_ms} p95 ${m.itl_p95_ms}, TPOT p50 ${m.tpot_p50_ms}, E2E p50 ${m.e2e_p50_ms} ms`;
      seen.push(k ? `Node: ${fig(p.n)}; k6-sse: ${fig(k)}` : `k6-sse exit ${p.run.code}`);
      if (attempt === 3 || (k && medians(p.n, k).every((d) => d < 0.05))) break;
      p = await pair();
    }
    const { node, n, run } = p;
    console.info(`token timing on the paced reference (truth ${TRUE_TTFT} / ${ITL_MS} ms), ${seen.length} pair(s): ${seen.join(' | ')}`);
    expect(node.summary.counts.failed).toBe(0);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const { json, raw, junit } = summary(run);
    expect(json.result).toBe('pass');
    expect(junit).not.toContain('<failure');
    const k = json.loadMetrics as Record<string, number>;
    for (const name of Object.keys(k)) expect(Object.keys(METRICS), name).toContain(name);
    expect(json.metrics.ttft_ms.values.count).toBeGreaterThanOrEqual(15);
    expect(json.metrics.itl_ms.values.count).toBeGreaterThanOrEqual(15 * (WORDS - 1));
    const figures = seen[seen.length - 1]!;
    expect(within(n.ttft_p50_ms!, TRUE_TTFT), figures).toBeLessThan(0.05);
    expect(within(k.ttft_p50_ms!, TRUE_TTFT), figures).toBeLessThan(0.05);
    expect(within(n.itl_p50_ms!, ITL_MS), figures).toBeLessThan(0.05);
    expect(within(k.itl_p50_ms!, ITL_MS), figures).toBeLessThan(0.05);
    expect(within(k.ttft_p50_ms!, n.ttft_p50_ms!), figures).toBeLessThan(0.05);
    expect(within(k.itl_p50_ms!, n.itl_p50_ms!), figures).toBeLessThan(0.05);
    // TPOT averages each stream's gaps, so one late gap moves it: a sanity bound only, beside the driver's.
    expect(within(k.tpot_p50_ms!, ITL_MS), figures).toBeLessThan(0.2);
    expect(within(k.tpot_p50_ms!, n.tpot_p50_ms!), figures).toBeLessThan(0.2);
    // Output tokens from usage: 10 per stream.
    expect(json.metrics.output_tokens.values.count).toBe(json.metrics.ttft_ms.values.count * WORDS);
    for (const key of Object.values(ref!.keys)) for (const t of [run.stdout, run.stderr, raw, junit]) expect(t.includes(key), 'a key was written').toBe(false);
  }, HANG_GUARD_MS);
});

describe('chat-stream-sse against defects and legal variants (k6-sse)', () => {
  const defects: Array<[string, string]> = [
    ['stream-no-done', 'chatgate_stream_failed'],
    ['stream-wrong-chunk-object', 'chatgate_body_shape_failures'],
    ['stream-chunk-not-json', 'chatgate_body_shape_failures'],
  ];
  for (const [defect, crossed] of defects) {
    it.skipIf(!k6sse)(title(`defect ${defect}: ${crossed} crossed (exit 99)`), async () => {
      const ref = await startReferenceServer({ defect });
      try {
        const run = await k6Run(ref, { RATE: '5', DURATION: '2s', ABORT_ON_SHAPE: '0' });
        expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(99);
        const { json, junit } = summary(run);
        expect(json.result).toBe('fail');
        expect(json.thresholds.filter((t: { ok: boolean }) => !t.ok).map((t: { metric: string }) => t.metric)).toContain(crossed);
        expect(junit).toContain('<failure type="threshold"');
      } finally {
        await ref.close();
      }
    }, HANG_GUARD_MS);
  }

  // Legal forms the extension hands over differently (CRLF remnants, comments, fields,
  // named events, no space, pieces): the framing must still see a conformant stream.
  // sse-cr is not here: xk6-sse cannot split lone-CR line ends (see the next test).
  const legal = ['sse-crlf', 'sse-comments', 'sse-fields', 'sse-named-event', 'sse-no-space', 'split-writes'];
  it.skipIf(!k6sse)(title(`legal variants pass (exit 0): ${legal.join(', ')}`), async () => {
    const ref = await startReferenceServer({ variants: legal });
    try {
      const run = await k6Run(ref, { RATE: '5', DURATION: '2s' });
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(summary(run).json.result).toBe('pass');
    } finally {
      await ref.close();
    }
    // One variant at a time too, so one form cannot hide behind another.
    for (const variant of legal) {
      const one = await startReferenceServer({ variants: [variant] });
      try {
        const run = await k6Run(one, { RATE: '3', DURATION: '1s' });
        expect(run.code, `${variant}\n${run.stdout}\n${run.stderr}`).toBe(0);
      } finally {
        await one.close();
      }
    }
  }, HANG_GUARD_MS);

  it.skipIf(!k6sse)(title('sse-cr (legal, unreadable to xk6-sse): not judged, never a failure; the run is INCOMPLETE and says why'), async () => {
    const ref = await startReferenceServer({ variants: ['sse-cr'] });
    try {
      const run = await k6Run(ref, { RATE: '3', DURATION: '1s' });
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      const { json } = summary(run);
      expect(json.result).toBe('incomplete');
      expect(json.warnings.join('\n')).toMatch(/gave xk6-sse nothing to read/);
    } finally {
      await ref.close();
    }
  }, HANG_GUARD_MS);
});
