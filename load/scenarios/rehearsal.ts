// A stream run in phases with a change during it (stream --phases / --at / --run /
// --slice): the open-loop arrivals follow the phases, the change runs at its time (or is
// marked from outside), every figure is kept per time slice and judged against the
// SLOs, and the damage and the recovery are assessed: graceful or not, with the figures.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Recorder } from '../engine/recorder.ts';
import type { LeanRequest } from '../engine/lean-client.ts';
import { toCurl } from '../../lib/http/curl.ts';
import { drivePhase } from './drive.ts';
import { streamMetrics } from './stream.ts';
import type { ScenarioContext, ScenarioResult } from './context.ts';
import { phasedOffsets, rateAt, resolveRehearsal, type PhasePlan } from '../setup/phases.ts';
import { ChangeRunner } from '../setup/change.ts';
import { SliceRecorder, slicesCsv } from '../report/slices.ts';
import { assessDamage, LostRequests } from '../report/damage.ts';

export async function runRehearsal(ctx: ScenarioContext): Promise<ScenarioResult> {
  const o = ctx.options;
  const { plan, atS, sliceS, arrival } = resolveRehearsal(o);
  const recorder = new Recorder(true, ctx.findings);
  recorder.slo = { ttftMs: o.sloTtftP95Ms, itlP95Ms: o.sloItlP95Ms, e2eMs: o.sloE2eP95Ms };
  // Slices and the change run on the driver's clock, started in onStart (after the lone requests, which take seconds).
  let t0 = performance.now();
  const sliceRecorder = () => new SliceRecorder(t0, sliceS * 1000, { ttftP95Ms: o.sloTtftP95Ms, errorShare: o.sloErrorShare, itlP95Ms: o.sloItlP95Ms, e2eP95Ms: o.sloE2eP95Ms }, ctx.timeoutMs + 1000);
  let slices = sliceRecorder();
  const env: Record<string, string> = { CHATGATE_TARGET_URL: ctx.target.baseUrl };
  if (ctx.target.reference?.controlUrl) env.CHATGATE_REF_CONTROL = ctx.target.reference.controlUrl;
  const changeRunner = () => new ChangeRunner(t0, { atS, run: o.run, markStdin: o.markStdin, env });
  let change: ChangeRunner | undefined;
  const inFlight = new Map<number, LeanRequest>();
  const lost = new LostRequests(ctx.findings, recorder);
  let result;
  try {
    result = await drivePhase(ctx, {
      label: `stream in ${plan.phases.length} phase${plan.phases.length === 1 ? '' : 's'}`,
      mode: { kind: 'rate', rate: plan.peakRps, arrival: 'trace', seed: o.seed, arrivalOptions: { schedule: () => phasedOffsets(plan, arrival, o.seed) } },
      durationMs: plan.totalS * 1000,
      maxRequests: o.requests,
      request: { stream: true, key: ctx.target.keys.main, keyLabel: 'main' },
      recorders: [recorder],
      onSent: (req) => {
        inFlight.set(req.seq, req);
        slices.sent(req.intendedAt);
      },
      onStart: () => {
        t0 = performance.now();
        slices = sliceRecorder();
        change = changeRunner();
        change.start();
      },
      onNotSent: (at) => slices.notSent(at),
      onOutcome: (out) => {
        const req = inFlight.get(out.seq);
        inFlight.delete(out.seq);
        const curl = () => (req ? toCurl({ method: 'POST', url: `${ctx.target.origin}${req.path}`, headers: req.headers, body: req.body, stream: true }) : undefined);
        slices.outcome(out, lost.add(out, curl, Math.round(out.intendedAt - t0) / 1000));
      },
    });
  } finally {
    // Stopped before the driver started (no target answer): the change never ran.
    change ??= changeRunner();
    await change.stop(10_000);
  }
  const losses = lost.tally;
  losses.attempted = recorder.attempted;
  const rows = slices.rows((t) => rateAt(plan, t), (t) => phaseAt(plan, t), change.marks);
  const first = change.marks[0];
  const cmd = change.command;
  const cmdProblem = cmd && (cmd.exit_code !== 0 || cmd.signal) ? `the change command ${cmd.exit_code === null ? `ended by ${cmd.signal ?? 'an error'}` : `exited ${cmd.exit_code}`} (did the change happen?)` : undefined;
  const damage = assessDamage(rows, sliceS, o.recoverSlices, first ? { t_s: first.t_s, label: first.label } : undefined, losses, cmdProblem);
  if (ctx.requestLog) writeFileSync(join(dirname(ctx.requestLog.path), 'slices.csv'), slicesCsv(rows));
  const secs = recorder.activeSeconds();
  return {
    stopReason: result.stoppedEarly ? 'interrupted' : 'completed',
    recorder,
    details: {
      mode: { kind: 'phases', arrival, seed: o.seed, ...(plan.capacity ? { capacity_rps: plan.capacity.rps, capacity_from: plan.capacity.source } : {}) },
      sending_s: Math.round(result.sendingEndedAt - result.startedAt) / 1000,
      peak_concurrent_streams: result.peakInFlight,
      aborted_in_flight: result.abortedInFlight,
      schedule_lag_p99_ms: recorder.scheduleLag.percentileMs(99),
      sse_events: recorder.sseEvents,
      rehearsal: {
        phases: plan.phases.map((p) => ({ phase: p.text, start_s: p.startS, duration_s: p.durationS, from_rps: p.fromRps, to_rps: p.toRps })),
        slice_s: sliceS,
        slo: { ttft_p95_ms: o.sloTtftP95Ms, error_share: o.sloErrorShare, itl_p95_ms: o.sloItlP95Ms ?? null, e2e_p95_ms: o.sloE2eP95Ms ?? null },
        marks: change.marks,
        command: change.command ?? null,
        damage,
        lost_examples: lost.examples,
        slices_csv: ctx.requestLog ? 'slices.csv' : null,
        note: 'Each request belongs to the slice of its intended send time (sent, ok: of those sent, how many succeeded; its TTFT, ITL, E2E, errors, cut streams); finished_ok and output tokens/s count by the time a stream ended (what was served then, so finished_ok may exceed sent); in_flight is what was open at the slice\'s end. A slice with nothing sent is not judged. Every slice is in plots.extra.slices.',
      },
    },
    metrics: streamMetrics(recorder, secs),
    plots: { slices: rows },
  };
}

function phaseAt(plan: PhasePlan, tS: number): string {
  return plan.phases.find((p) => tS < p.startS + p.durationS)?.text ?? 'after the phases (drain)';
}
