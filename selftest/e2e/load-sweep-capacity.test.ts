// The sweep's answer checked against a known truth: the embedded reference with its
// engine model on has a capacity computable from its parameters (engineCapacity). Three
// seeds (each its own synthetic prompts) must each answer within 5 % of it, and the
// first seed's ladder goes to twice the capacity, where no step may report completed
// throughput above what the engine completes (within 15 %). Bounded by counts: 4-s steps
// of at least 30 requests, 2 ladder steps and at most 6 extra steps per seed (about 600
// streams in all, 1-2 minutes on a loaded 2-core machine).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/run/config.ts';
import { parseArgs } from '../../load/setup/options.ts';
import { executeRun } from '../../load/run.ts';
import { startReferenceProcess, type EmbeddedReference } from '../../load/setup/reference-process.ts';
import { referenceOptionsFor, referenceTarget } from '../../load/setup/load-target.ts';
import { StopToken } from '../../load/setup/stop.ts';
import { engineCapacity, resolveEngineModel } from '../../reference/engine-model.ts';
import type { SweepStep } from '../../load/scenarios/sweep.ts';

// 100 prompt tokens at 1000 tokens/s: a lone request's TTFT is 100 ms, and the prefill
// unit serves 10 req/s. Even arrivals: below capacity TTFT stays 100 ms, above it the
// queue grows through the step. The SLO leaves 200 ms for the machine's own jitter (a 4-s step 5 % over capacity ends 200 ms behind, its p95 just under that), and
// the driver-lag bound is raised to 150 ms for a shared 2-core machine (a step past it is
// still invalid, never a verdict).
const ENGINE = ['--ref-engine', '--ref-prefill-tps', '1000', '--ref-decode-step-ms', '5', '--ref-decode-step-per-seq-ms', '0.1', '--ref-max-batch', '64'];
const COMMON = [
  'sweep', '--quiet', '--warmup', '2', ...ENGINE,
  '--prompt-tokens', '100', '--output-tokens', '8',
  '--arrival', 'constant', '--step-duration', '4', '--step-min-requests', '30',
  '--slo-ttft-p95-ms', '300', '--sweep-tolerance', '0.05', '--sweep-refine-steps', '6', '--sweep-max-driver-lag-ms', '150',
];
// Seed 1 climbs from half to twice the capacity; the others start around it.
const LADDERS: Record<number, string[]> = {
  1: ['--sweep-start', '5', '--sweep-factor', '4', '--sweep-steps', '2'],
  2: ['--sweep-start', '9', '--sweep-factor', '1.25', '--sweep-steps', '2'],
  3: ['--sweep-start', '9', '--sweep-factor', '1.25', '--sweep-steps', '2'],
};

describe('sweep against the reference engine model', () => {
  let ref: EmbeddedReference;
  const base = parseArgs([...COMMON, ...LADDERS[1]!], {}).options;
  const model = resolveEngineModel(referenceOptionsFor(base).engine!);
  const cap = engineCapacity(model, { promptTokens: 100, outputTokens: 8 }, { ttftP95Ms: 300 });
  beforeAll(async () => {
    ref = await startReferenceProcess(referenceOptionsFor(base));
  });
  afterAll(async () => {
    await ref?.close();
  });

  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: answers within 5 % of the computed capacity, and no step completes more than the engine`, async () => {
      expect(cap.bound).toBe('prefill');
      const { options } = parseArgs([...COMMON, ...LADDERS[seed]!, '--seed', String(seed)], {});
      const out = mkdtempSync(join(tmpdir(), 'chatgate-capacity-'));
      const o = await executeRun({ scenario: 'sweep', options, config: loadConfig({}), target: referenceTarget(ref), stop: new StopToken(), outDir: out, log: () => {} });
      const d = o.summary.details as {
        steps: SweepStep[]; max_meeting_slo: number | null; broken_at: number | null; bound_by: string[]; resolved: boolean; note?: string;
        answer: { highest_met: number | null; lowest_broken: number | null; samples_at_met: number | null };
      };
      const trail = d.steps.map((s) => `${s.offered}:${s.valid ? (s.slo_met ? 'met' : 'broken') : 'invalid'}@${s.ttft_p95_ms}ms,done ${s.completed_rps}/s,n=${s.samples}`).join(' ');
      const tokens = o.summary.tokens as { input_tokens_total: number } | null;
      // The prompt the engine prefilled is the one the capacity was computed for.
      expect(tokens!.input_tokens_total / o.summary.counts.ok, trail).toBeCloseTo(100, 0);
      expect(o.summary.stop_reason, `${trail} ${d.note ?? ''}`).toBe('slo-broken');
      expect(d.resolved, trail).toBe(true);
      expect(d.bound_by, trail).toContain('ttft_p95_ms');
      expect(d.answer.highest_met, trail).toBe(d.max_meeting_slo);
      expect(d.answer.lowest_broken, trail).toBe(d.broken_at);
      expect(d.answer.samples_at_met!, trail).toBeGreaterThanOrEqual(30);
      const err = Math.abs(d.max_meeting_slo! - cap.rps) / cap.rps;
      process.stdout.write(`capacity seed ${seed}: answer [${d.answer.highest_met}, ${d.answer.lowest_broken}] vs computed ${cap.rps.toFixed(2)} req/s (${(err * 100).toFixed(1)} %); ${trail}\n`);
      expect(err, `sweep ${d.max_meeting_slo} req/s vs computed ${cap.rps.toFixed(2)} req/s; ${trail}`).toBeLessThanOrEqual(0.05);
      // What completed inside a step never exceeds what the engine can complete, however much was offered.
      for (const s of d.steps) {
        expect(s.completed_rps, trail).toBeLessThanOrEqual(cap.rps * 1.15);
        expect(s.goodput_rps, trail).toBeLessThanOrEqual(s.completed_rps);
      }
      if (seed === 1) {
        const twice = d.steps.find((s) => s.offered >= 2 * cap.rps * 0.95);
        expect(twice, trail).toBeDefined();
        // Saturated: the backlog at the step's end holds what the engine could not complete.
        expect(twice!.backlog_at_end, trail).toBeGreaterThan(0.25 * twice!.sent);
        expect(twice!.completed_rps, trail).toBeGreaterThan(0.7 * cap.rps);
      }
      expect(o.summary.output).toMatchObject({ tokens_source: 'usage' });
    });
  }
});
