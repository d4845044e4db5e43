// `npm run load` as operators run it: bad options and configuration are one line and
// exit 2 before any request; a remote target needs --allow-remote and shows its plan;
// caps hold unless raised explicitly; an unreachable target stops at the warm-up;
// Ctrl-C writes a partial report (exit 130); --baseline exits 1 on a regression and
// prints the table; no key is ever printed or written.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRICS } from '../../load/report/metric-names.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin/load.mjs');
const KEY = 'sk-cli-test-0123456789abcdef';
const REFERENCE_KEY = /sk-ref-[0-9a-f]{8,}/;
const out = mkdtempSync(join(tmpdir(), 'chatgate-load-cli-'));

interface Ran { code: number | null; stdout: string; stderr: string }

/**
 * Runs `npm run load`. `whenStarted` is called once stderr matches `startedWhen` (by
 * default the plan line). The SIGKILL is a hang guard: every run here is bounded by its
 * own plan (rate x duration), however slow the machine.
 */
function load(args: string[], env: Record<string, string> = {}, whenStarted?: (child: ReturnType<typeof spawn>) => void, startedWhen = /plan: /): Promise<Ran> {
  return new Promise((resolve) => {
    // A clean environment: nothing of the caller's TARGET_URL or keys leaks in.
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env } });
    let stdout = '';
    let stderr = '';
    let started = false;
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => {
      stderr += d;
      if (!started && startedWhen.test(stderr) && whenStarted) {
        started = true;
        whenStarted(child);
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), HANG_GUARD_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// A loopback server that counts what reaches it: bad options must send nothing.
let requests = 0;
const counter = createServer((req, res) => { requests++; req.resume(); res.writeHead(500).end(); });
let counterUrl = '';
let closedUrl = '';
beforeAll(async () => {
  await new Promise<void>((r) => counter.listen(0, '127.0.0.1', () => r()));
  counterUrl = `http://127.0.0.1:${(counter.address() as AddressInfo).port}/v1`;
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  closedUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/v1`;
  await new Promise<void>((r) => probe.close(() => r()));
});
afterAll(() => new Promise<void>((r) => counter.close(() => r())));

describe('npm run load: refusals before any request', () => {
  const target = () => ({ TARGET_URL: counterUrl, API_KEY: KEY });
  const cases: Array<[string, string[], () => Record<string, string>, RegExp]> = [
    ['no scenario', [], target, /name a scenario: throughput, stream, sweep, rate-limit/],
    ['an unknown option', ['stream', '--rat', '5'], target, /unknown option "--rat"/],
    ['a bad value', ['stream', '--rate', 'fast'], target, /--rate: "fast" is not a positive number/],
    ['a bad variable', ['stream'], () => ({ ...target(), LOAD_DURATION: 'long' }), /LOAD_DURATION: "long" is not a duration/],
    ['an option of another scenario', ['stream', '--connections', '3'], target, /--connections does not apply to the stream scenario/],
    ['a reference option with TARGET_URL', ['stream', '--ref-ttft-ms', '100'], target, /--ref-ttft-ms \(LOAD_REF_TTFT_MS\) configures the embedded reference server, but TARGET_URL is set/],
    ['TARGET_URL without API_KEY', ['stream'], () => ({ TARGET_URL: counterUrl }), /API_KEY: is required when TARGET_URL is set/],
    ['an unknown reference defect', ['stream'], () => ({ REFERENCE_DEFECT: 'no-such-defect' }), /"no-such-defect" is not a defect of the reference server/],
    ['a duration above the cap', ['stream', '--duration', '20m'], target, /planned for up to 1200 s, above the cap of 300 s; .*--cap-duration 1200/],
    ['a rate above the cap', ['throughput', '--rate', '5000'], target, /plans 5000 req\/s, above the cap of 1000 req\/s; .*--cap-rate 5000/],
    ['a remote target', ['stream'], () => ({ TARGET_URL: 'http://192.0.2.1/v1', API_KEY: KEY }), /TARGET_URL host 192\.0\.2\.1 is not loopback; a load run against it needs --allow-remote/],
    ['a brain share without BRAIN_ID', ['stream', '--brain-share', '0.5'], target, /BRAIN_ID: --brain-share needs the id of a brain/],
    ['a bad threshold', ['stream', '--threshold', 'ttft=5%'], target, /unknown metric ttft/],
    ['a missing baseline', ['stream', '--baseline', join(out, 'nope.json')], target, /--baseline .*nope\.json: cannot read it as JSON/],
  ];

  it('answers each with one line naming the problem and the fix, exit 2, nothing sent, no key shown', async () => {
    const before = requests;
    const results = await Promise.all(cases.map(([, args, env]) => load([...args, '--out', join(out, 'never')], env())));
    results.forEach((r, i) => {
      const [what, , , message] = cases[i]!;
      const lines = r.stderr.trim().split('\n');
      expect(r.code, `${what}: ${r.stderr}`).toBe(2);
      expect(lines, what).toHaveLength(1);
      expect(lines[0], what).toMatch(/^chatgate load: /);
      expect(lines[0], what).toMatch(message);
      expect(r.stderr + r.stdout, what).not.toContain(KEY);
    });
    expect(requests).toBe(before);
    expect(existsSync(join(out, 'never'))).toBe(false);
  }, HANG_GUARD_MS);

  it('--allow-remote --dry-run prints the plan (rate x duration) and sends nothing', async () => {
    const r = await load(['stream', '--allow-remote', '--dry-run', '--rate', '50', '--duration', '60'], { TARGET_URL: 'http://192.0.2.1/v1', API_KEY: KEY });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('stream against http://192.0.2.1/v1');
    expect(r.stdout).toMatch(/plan: stream: poisson arrivals at 50 req\/s x 60 s = about 3000 streams/);
    const before = requests;
    const local = await load(['throughput', '--dry-run', '--rate', '20', '--duration', '5'], { TARGET_URL: counterUrl, API_KEY: KEY });
    expect(local.stdout).toMatch(/plan: throughput: 20 req\/s \(constant\) x 5 s over 10 connections = 100 requests at most/);
    expect(requests).toBe(before);
  }, HANG_GUARD_MS);

  it('stops before the run when the target answers nothing (exit 2)', async () => {
    const r = await load(['stream', '--duration', '2', '--out', join(out, 'unreachable')], { TARGET_URL: closedUrl, API_KEY: KEY });
    expect(r.code).toBe(2);
    // The preflight (lib/http/preflight.ts) names the cause before the warm-up starts.
    expect(r.stderr).toMatch(/chatgate load: TARGET_URL: .* cannot be reached: the connection to .* was refused \(ECONNREFUSED\)/);
    expect(existsSync(join(out, 'unreachable'))).toBe(false);
  }, HANG_GUARD_MS);
});

describe('npm run load: runs', () => {
  it('Ctrl-C stops sending, drains briefly and writes the partial report (exit 130)', async () => {
    const dir = join(out, 'interrupted');
    // A 60 s stream run (about 600 streams), interrupted as soon as its progress line
    // (every 5 s when stderr is not a terminal) shows a completed stream: on a loaded
    // machine the warm-up and the first streams take longer, so the signal waits for
    // them, not for a clock. The run then ends far sooner than its plan.
    const r = await load(['stream', '--duration', '60', '--out', dir], {}, (child) => child.kill('SIGINT'), /\bok [1-9]/);
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/stopping \(waiting up to 2 s for requests in flight/);
    const s = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
    expect(s).toMatchObject({ scenario: 'stream', partial: true, stop_reason: 'interrupted', target: { kind: 'embedded-reference' } });
    expect(s.counts.ok).toBeGreaterThan(0);
    expect(s.counts.sent).toBeLessThan(300);
    expect(readFileSync(join(dir, 'report.html'), 'utf8')).toContain('Partial run');
    expect(r.stdout + r.stderr + JSON.stringify(s)).not.toMatch(REFERENCE_KEY);
  }, HANG_GUARD_MS);

  it('--baseline: a slower TTFT is a regression (exit 1, table); a better run passes (exit 0)', async () => {
    const base = ['stream', '--rate', '20', '--arrival', 'constant', '--duration', '2', '--ref-itl-ms', '10', '--ref-reply-words', '6'];
    const a = await load([...base, '--ref-ttft-ms', '40', '--out', join(out, 'a')]);
    expect(a.code).toBe(0);
    const baseline = JSON.parse(readFileSync(join(out, 'a', 'summary.json'), 'utf8'));
    // A baseline that is worse on every metric: the same run measured again only improves on it.
    const worse = structuredClone(baseline);
    for (const [name, v] of Object.entries(worse.metrics as Record<string, number | null>)) {
      if (typeof v !== 'number') continue;
      const info = METRICS[name as keyof typeof METRICS];
      // Far worse than a loaded machine can make the same run: in CI (load average 10) the
      // same run regressed against a baseline only 3x + 10 worse than it.
      worse.metrics[name] = info.better === 'lower' ? v * 100 + 10_000 : v * 0.01;
    }
    writeFileSync(join(out, 'worse.json'), JSON.stringify(worse));
    const [slower, better] = await Promise.all([
      load([...base, '--ref-ttft-ms', '240', '--baseline', join(out, 'a', 'summary.json'), '--out', join(out, 'b')]),
      load([...base, '--ref-ttft-ms', '40', '--baseline', join(out, 'worse.json'), '--out', join(out, 'c')]),
    ]);
    expect(slower.code).toBe(1);
    expect(slower.stdout).toMatch(/Baseline .*a\/summary\.json .*: \d+ regressions?/);
    expect(slower.stdout).toMatch(/ttft_p50_ms\s+\d+\.\d+\s+\d+\.\d\s+\+\d+\.\d %\s+\+\S+ ms\s+\S+ \/ \S+\s+REGRESSION/);
    const b = JSON.parse(readFileSync(join(out, 'b', 'summary.json'), 'utf8'));
    // The reference waits 240 ms before the first token: a loaded machine only adds to it.
    expect(b.metrics.ttft_p50_ms).toBeGreaterThanOrEqual(240);
    expect(b.baseline.rows.find((x: { metric: string }) => x.metric === 'ttft_p50_ms').verdict).toBe('regression');
    expect(better.code).toBe(0);
    expect(better.stdout).toMatch(/: 0 regressions/);
    expect(better.stdout).toMatch(/ttft_p50_ms .* better/);
  }, HANG_GUARD_MS);

  it('rate-limit against a loopback target with its own keys: no key in any output', async () => {
    const { startReferenceServer } = await import('../../reference/server.ts');
    const ref = await startReferenceServer({ latency: { jsonMs: 3 } });
    try {
      const dir = join(out, 'rl');
      const r = await load(['rate-limit', '--ramp-start', '5', '--ramp-factor', '2', '--ramp-step-duration', '0.6', '--burst-duration', '1', '--bystander-rate', '5', '--recovery-max', '3', '--out', dir],
        { TARGET_URL: ref.url, API_KEY: ref.keys.main, RATE_LIMIT_API_KEY: ref.keys.rateLimit, LIMITED_API_KEY: ref.keys.limited, BRAIN_ID: ref.brainId });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/RATE_LIMIT_API_KEY: first 429 at \d+ req\/s offered/);
      expect(r.stdout).toMatch(/retry after the advised wait: succeeded/);
      const everything = r.stdout + r.stderr + readFileSync(join(dir, 'summary.json'), 'utf8') + readFileSync(join(dir, 'report.html'), 'utf8');
      for (const key of Object.values(ref.keys)) expect(everything).not.toContain(key);
      expect(everything).not.toMatch(REFERENCE_KEY);
    } finally {
      await ref.close();
    }
  }, HANG_GUARD_MS);
});
