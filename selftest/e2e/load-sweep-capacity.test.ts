// The sweep's answer checked against a known truth: the embedded reference with its
// engine model on has a capacity computable from its parameters (engineCapacity), and
// the sweep, bisecting after the first broken step, must find the highest rate meeting
// a TTFT p95 SLO within 10 % of it. Bounded by counts: 2 ladder steps and at most 8
// extra steps of 4 s at 6-12 req/s (about 300 streams, 30-40 s on a loaded 2-core machine).
import { canaryFor } from '../../lib/spec/rules/cross-talk.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { loadConfig } from '../../lib/run/config.ts';
import { parseArgs } from '../../load/setup/options.ts';
import { executeRun } from '../../load/run.ts';
import { startReferenceProcess, type EmbeddedReference } from '../../load/setup/reference-process.ts';
import { referenceOptionsFor, referenceTarget } from '../../load/setup/load-target.ts';
import { StopToken } from '../../load/setup/stop.ts';
import { engineCapacity, resolveEngineModel } from '../../reference/engine-model.ts';

// About 100 prompt tokens at 1000 tokens/s: a lone request's TTFT is 100 ms, and the
// prefill unit serves 10 req/s. The SLO leaves 150 ms for the machine's own jitter,
// and the driver-lag bound is raised to 150 ms for a shared 2-core machine (a step
// past it is still invalid, never a verdict).
const PROMPT = Array.from({ length: 95 }, () => 'hello').join(' ');
const FLAGS = [
  'sweep', '--quiet', '--warmup', '2',
  '--ref-engine', '--ref-prefill-tps', '1000', '--ref-decode-step-ms', '5', '--ref-decode-step-per-seq-ms', '0.1', '--ref-max-batch', '64',
  '--prompt', PROMPT, '--max-tokens', '8',
  '--arrival', 'constant', '--sweep-start', '6', '--sweep-factor', '2', '--sweep-steps', '2', '--step-duration', '4',
  '--slo-ttft-p95-ms', '250', '--sweep-tolerance', '0.05', '--sweep-refine-steps', '8', '--sweep-max-driver-lag-ms', '150',
];

describe('sweep against the reference engine model', () => {
  let ref: EmbeddedReference;
  const { options } = parseArgs(FLAGS, {});
  const out = mkdtempSync(join(tmpdir(), 'chatgate-capacity-'));
  beforeAll(async () => {
    ref = await startReferenceProcess(referenceOptionsFor(options));
  });
  afterAll(async () => {
    await ref?.close();
  });

  it('finds the highest rate meeting a TTFT p95 SLO within 10 % of the computed capacity', async () => {
    // The prompt as the reference counts it: the message's text in o200k_base tokens.
    const promptTokens = encode(`${PROMPT} (request 100, code ${canaryFor(100, 1)})`).length; // with its canary (SVC-9)
    const model = resolveEngineModel(referenceOptionsFor(options).engine!);
    const cap = engineCapacity(model, { promptTokens, outputTokens: 8 }, { ttftP95Ms: 250 });
    expect(cap.bound).toBe('prefill');
    const o = await executeRun({ scenario: 'sweep', options, config: loadConfig({}), target: referenceTarget(ref), stop: new StopToken(), outDir: out, log: () => {} });
    const d = o.summary.details as {
      steps: Array<{ offered: number; phase: string; valid: boolean; slo_met: boolean | null; ttft_p95_ms: number }>;
      max_meeting_slo: number | null; broken_at: number | null; bound_by: string[]; resolved: boolean; goodput_at_max_rps: number | null; note?: string;
    };
    const trail = d.steps.map((s) => `${s.offered}:${s.valid ? (s.slo_met ? 'met' : 'broken') : 'invalid'}@${s.ttft_p95_ms}`).join(' ');
    expect(o.summary.stop_reason, `${trail} ${d.note ?? ''}`).toBe('slo-broken');
    expect(d.steps.some((s) => s.phase === 'refine'), trail).toBe(true);
    expect(d.resolved, trail).toBe(true);
    expect(d.bound_by, trail).toContain('ttft_p95_ms');
    expect(d.max_meeting_slo, trail).not.toBeNull();
    const err = Math.abs(d.max_meeting_slo! - cap.rps) / cap.rps;
    expect(err, `sweep ${d.max_meeting_slo} req/s vs computed ${cap.rps.toFixed(2)} req/s; ${trail}`).toBeLessThanOrEqual(0.1);
    expect(d.goodput_at_max_rps!).toBeGreaterThan(0.8 * d.max_meeting_slo!);
    // Usage is counted by the engine model's tokenizer: 8 tokens per reply.
    expect(o.summary.output).toMatchObject({ tokens_source: 'usage' });
  });
});
