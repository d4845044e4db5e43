// The Node harness's own summary.json merges the same way as the k6 runners': two real
// `npm run load -- stream` runs side by side against one reference (in a child process),
// then `npm run load -- merge` of their summary.json files. Bounded by count (rate x
// duration streams per run); nothing is asserted about how long anything took.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../lib/run/config.ts';
import { parseArgs } from '../../load/setup/options.ts';
import { executeRun } from '../../load/run.ts';
import { startReferenceProcess, type EmbeddedReference } from '../../load/setup/reference-process.ts';
import { referenceTarget } from '../../load/setup/load-target.ts';
import { StopToken } from '../../load/setup/stop.ts';
import { LatencyHistogram } from '../../load/engine/histogram.ts';
import { mergeMain } from '../../load/report/merge.ts';
import type { LoadSummary } from '../../load/report/summary.ts';

let work: string;
let ref: EmbeddedReference | undefined;
const parts: LoadSummary[] = [];
let code: number;
let log = '';

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'chatgate-merge-node-'));
  ref = await startReferenceProcess({ latency: { ttftMs: 20, itlMs: 10 }, replyWords: 8 });
  const { options } = parseArgs(['stream', '--quiet', '--rate', '5', '--arrival', 'constant', '--duration', '3', '--warmup', '0'], {});
  const runs = [1, 2].map((i) => executeRun({ scenario: 'stream', options, config: loadConfig({}), target: { ...referenceTarget(ref!), reference: ref! }, stop: new StopToken(), outDir: join(work, `run${i}`), log: () => {} }));
  for (const r of await Promise.all(runs)) parts.push(r.summary);
  const lines: string[] = [];
  code = mergeMain([join(work, 'run1', 'summary.json'), join(work, 'run2', 'summary.json'), '--out', join(work, 'merged')], {}, (l) => lines.push(l));
  log = lines.join('\n');
}, 120_000);

afterAll(async () => {
  await ref?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('merge of two real npm run load runs (summary.json, HDR histograms)', () => {
  it('latencies are the exact HDR sum of both runs, counts add, the percentile metrics come from the merged histograms', () => {
    expect(code, log).toBe(0);
    const m = JSON.parse(readFileSync(join(work, 'merged', 'summary.json'), 'utf8')) as LoadSummary;
    expect(m.format).toBe('chatgate-load-summary');
    expect(m.counts.sent).toBe(parts[0]!.counts.sent + parts[1]!.counts.sent);
    expect(m.counts.ok).toBe(parts[0]!.counts.ok + parts[1]!.counts.ok);
    expect(m.counts.ok).toBeGreaterThanOrEqual(20);
    for (const name of ['ttft', 'itl', 'e2e']) {
      const sum = LatencyHistogram.decode(parts[0]!.hdr_us[name]!);
      sum.add(LatencyHistogram.decode(parts[1]!.hdr_us[name]!));
      expect(m.latencies[`${name}_ms`], name).toEqual(sum.summary());
      expect(m.latencies[`${name}_ms`]!.count).toBe(parts[0]!.latencies[`${name}_ms`]!.count + parts[1]!.latencies[`${name}_ms`]!.count);
    }
    const ttft = LatencyHistogram.decode(m.hdr_us.ttft!);
    expect(m.metrics.ttft_p95_ms).toBe(ttft.percentileMs(95));
    expect(m.metrics.e2e_p99_ms).toBe(m.latencies.e2e_ms!.p99_ms);
    // Runs side by side: their rates add.
    expect(m.metrics.streams_ok_per_s).toBeCloseTo((parts[0]!.metrics.streams_ok_per_s ?? 0) + (parts[1]!.metrics.streams_ok_per_s ?? 0), 2);
    expect(readFileSync(join(work, 'merged', 'report.html'), 'utf8')).toContain('<html');
  });

  it('the merge reads as a --baseline, and a run against it compares', () => {
    const lines: string[] = [];
    expect(mergeMain([join(work, 'run1', 'summary.json'), join(work, 'run2', 'summary.json'), '--out', join(work, 'again'), '--baseline', join(work, 'merged', 'summary.json')], {}, (l) => lines.push(l))).toBe(0);
    expect(lines.join('\n')).toMatch(/Baseline .*: 0 regressions/);
  });
});
