// SLOs and limits that fail a run, and a baseline that knows like for like, against
// in-process reference servers: a broken TTFT SLO exits 1 naming itself, a loose one
// exits 0; two identical runs are like for like; a 400 ms TTFT regression exits 1; another
// prompt length is flagged on the console and in report.html, and fails with
// --require-like-for-like. Bounded by counts: 8 streams a run, 7 runs.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/run/config.ts';
import { startReferenceServer, type ReferenceServer } from '../../reference/server.ts';
import { parseArgs } from '../../load/setup/options.ts';
import { executeRun, type RunOutcome } from '../../load/run.ts';
import { loadBaseline } from '../../load/report/baseline.ts';
import { referenceTarget } from '../../load/setup/load-target.ts';
import { StopToken } from '../../load/setup/stop.ts';

const BASE = ['--rate', '20', '--arrival', 'constant', '--requests', '8', '--duration', '5'];

async function run(ref: ReferenceServer, flags: string[], outDir?: string, baseline?: string): Promise<RunOutcome & { lines: string[] }> {
  const { options } = parseArgs(['stream', '--quiet', '--warmup', '2', ...BASE, ...flags], {});
  const lines: string[] = [];
  const o = await executeRun({
    scenario: 'stream', options, config: loadConfig({}), target: referenceTarget(ref), stop: new StopToken(), outDir, log: (l) => lines.push(l),
    ...(baseline ? { baseline: loadBaseline(baseline, 'stream') } : {}),
  });
  return { ...o, lines };
}

describe('gates and baselines', () => {
  let fast: ReferenceServer;
  let slow: ReferenceServer;
  const out = mkdtempSync(join(tmpdir(), 'chatgate-gates-'));
  beforeAll(async () => {
    [fast, slow] = await Promise.all([
      startReferenceServer({ latency: { jsonMs: 3, ttftMs: 40, itlMs: 5 }, replyWords: 8 }),
      startReferenceServer({ latency: { jsonMs: 3, ttftMs: 440, itlMs: 5 }, replyWords: 8 }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([fast?.close(), slow?.close()]);
  });

  it('a broken TTFT SLO exits 1 naming the SLO, its limit and the value; a loose one exits 0', async () => {
    const tight = await run(fast, ['--slo-ttft-p95-ms', '1']);
    expect(tight.exitCode).toBe(1);
    expect(tight.lines.join('\n')).toMatch(/SLO --slo-ttft-p95-ms: ttft_p95_ms <= 1 ms, seen [\d.]+ ms: BROKEN/);
    const loose = await run(fast, ['--slo-ttft-p95-ms', '60000', '--threshold', 'error_share<0.5']);
    expect(loose.summary.gates?.checks.map((c) => [c.metric, c.met])).toEqual([['ttft_p95_ms', true], ['error_share', true]]);
    expect(loose.exitCode).toBe(0);
  });

  it('identical runs are like for like; a 400 ms TTFT regression exits 1; another prompt length is flagged on the console and in report.html', async () => {
    const first = join(out, 'first');
    await run(fast, [], first);
    const again = await run(fast, [], join(out, 'again'), join(first, 'summary.json'));
    const cmp = again.summary.baseline!;
    expect(cmp.settings_differ).toEqual([]);
    expect(cmp.like_for_like).toBe(true);
    process.stdout.write(`identical runs: ${cmp.outside_noise} metric(s) outside noise, ${cmp.regressions} regression(s): ${cmp.rows.filter((r) => r.outside_noise).map((r) => r.metric).join(', ')}\n`);
    expect(cmp.rows.find((r) => r.metric === 'error_share')?.verdict).toBe('same');

    const slower = await run(slow, [], join(out, 'slower'), join(first, 'summary.json'));
    // 8 answers bound a median, not a p95 (its interval runs past their max): the median carries the verdict.
    expect(slower.summary.baseline!.rows.find((r) => r.metric === 'ttft_p50_ms')).toMatchObject({ verdict: 'regression', outside_noise: true });
    expect(slower.summary.baseline!.rows.find((r) => r.metric === 'ttft_p95_ms')?.baseline_interval?.[1]).toBeNull();
    expect(slower.exitCode).toBe(1);

    const other = join(out, 'other');
    const longer = await run(fast, ['--prompt-tokens', '64'], other, join(first, 'summary.json'));
    expect(longer.summary.baseline!.like_for_like).toBe(false);
    expect(longer.lines.join('\n')).toMatch(/NOT LIKE FOR LIKE: \d+ settings? differ[\s\S]*workload\.prompt_tokens/);
    const html = readFileSync(join(other, 'report.html'), 'utf8');
    expect(html).toMatch(/id="not-like-for-like"[\s\S]*workload\.prompt_tokens/);
    expect(html).toContain('id="baseline-overlay"');
    const strict = await run(fast, ['--prompt-tokens', '64', '--require-like-for-like'], undefined, join(first, 'summary.json'));
    expect(strict.exitCode).toBe(1);
  });
});
