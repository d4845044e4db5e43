// The phases of a stream run (--phases): ramps and holds of the open-loop arrival rate,
// each rate in req/s or as a share of a capacity (--capacity: a number, or a sweep's
// summary.json). One line of text or a file of them; bad syntax is one UsageError.
//   ramp 30s to 70%, hold 300s          ramp 10s to 8, hold 2m, ramp 10s to 0
//   hold 60s at 5                       @plan.txt (one phase a line, # comments)
import { readFileSync } from 'node:fs';
import { seededRandom } from '../../lib/run/seeded-random.ts';
import { parseSeconds, runSeconds, UsageError, type LoadOptions } from './options.ts';
import { parsePhaseText, PhaseError, type PhasePlan } from '../engine/phase-plan.ts';

export type { Phase, PhasePlan } from '../engine/phase-plan.ts';

/** The capacity a % refers to: a rate, or a sweep's summary.json (its max_rate_meeting_slo_rps). */
export function readCapacity(raw: string): { rps: number; source: string } {
  if (/^\d*\.?\d+$/.test(raw.trim())) {
    const rps = Number(raw);
    if (!(rps > 0)) throw new UsageError(`--capacity: "${raw}" must be above 0 req/s`);
    return { rps, source: `--capacity ${raw}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(raw, 'utf8'));
  } catch (e) {
    throw new UsageError(`--capacity: cannot read ${raw} as a sweep's summary.json (${(e as Error).message.split('\n')[0]}); give a rate in req/s or that file`);
  }
  const s = json as { scenario?: unknown; metrics?: Record<string, unknown>; details?: Record<string, unknown> };
  const v = s.metrics?.max_rate_meeting_slo_rps ?? s.details?.max_rate_meeting_slo_rps;
  if (s.scenario !== 'sweep' || typeof v !== 'number' || !(v > 0)) {
    throw new UsageError(`--capacity: ${raw} is not a sweep's summary.json with max_rate_meeting_slo_rps above 0; run npm run load -- sweep first, or give a rate in req/s`);
  }
  return { rps: v, source: `${raw} (sweep: max_rate_meeting_slo_rps ${v})` };
}

/** Parses --phases (text, or @file) into phases with their start times. */
export function parsePhases(raw: string, capacity?: { rps: number; source: string }): PhasePlan {
  let text = raw;
  if (raw.startsWith('@')) {
    try {
      text = readFileSync(raw.slice(1), 'utf8').split(/\r?\n/).map((l) => l.replace(/#.*/, '').trim()).filter(Boolean).join(',');
    } catch (e) {
      throw new UsageError(`--phases: cannot read ${raw.slice(1)} (${(e as Error).message.split('\n')[0]})`);
    }
  }
  try {
    return parsePhaseText(text, capacity, '--capacity <req/s | a sweep\'s summary.json>');
  } catch (e) {
    if (e instanceof PhaseError) throw new UsageError(`--phases: ${e.message}`);
    throw e;
  }
}

/** The planned rate at `tS` seconds (the report's offered rate per slice). */
export function rateAt(plan: PhasePlan, tS: number): number {
  for (const p of plan.phases) {
    if (tS < p.startS + p.durationS) return p.fromRps + ((p.toRps - p.fromRps) * Math.max(0, tS - p.startS)) / p.durationS;
  }
  return 0;
}

/**
 * Arrival offsets (ms) of the phases: the rate's integral L(t) is inverted at the
 * points 0.5, 1.5, ... (constant) or at sums of unit exponentials (Poisson), so the
 * arrivals follow the ramps exactly. A generator: nothing grows with the run.
 */
export function* phasedOffsets(plan: PhasePlan, arrival: 'constant' | 'poisson', seed: number): Generator<number> {
  const random = seededRandom(seed);
  const step = () => (arrival === 'constant' ? 1 : -Math.log(1 - random()));
  let target = arrival === 'constant' ? 0.5 : step();
  let done = 0; // L at the start of the phase
  for (const p of plan.phases) {
    const a = p.fromRps;
    const k = (p.toRps - p.fromRps) / p.durationS; // rate slope, req/s per s
    const area = (a + p.toRps) / 2 * p.durationS;
    while (target < done + area) {
      const need = target - done;
      // a t + k t^2 / 2 = need
      const t = Math.abs(k) < 1e-12 ? need / a : (-a + Math.sqrt(Math.max(0, a * a + 2 * k * need))) / k;
      yield (p.startS + Math.min(p.durationS, Math.max(0, t))) * 1000;
      target += step();
    }
    done += area;
  }
}

/** Whether a stream run is sliced and judged per slice (any of the rehearsal options given). */
export function isRehearsal(o: LoadOptions): boolean {
  return o.phases !== undefined || o.at !== undefined || o.run !== undefined || o.slice !== undefined || o.markStdin;
}

export interface Rehearsal {
  plan: PhasePlan;
  /** When --at (or the default middle of the run with --run) falls, seconds from the start. */
  atS?: number;
  sliceS: number;
  arrival: 'constant' | 'poisson';
}

/** The phases (or one hold at --rate for --duration), the change's time and the slice length; UsageError on a bad combination. */
export function resolveRehearsal(o: LoadOptions): Rehearsal {
  if (o.concurrency !== undefined || o.arrival === 'trace') throw new UsageError('--phases, --at, --run and --slice work on open-loop arrivals; drop --concurrency / --trace');
  if (o.arrival === 'gamma') throw new UsageError('--phases, --at, --run and --slice take --arrival poisson or constant');
  if (o.capacity !== undefined && o.phases === undefined) throw new UsageError('--capacity is what a % in --phases is a share of; give --phases too');
  let plan: PhasePlan;
  if (o.phases !== undefined) {
    if (o.rate !== undefined || o.duration !== undefined) throw new UsageError('--phases sets the rate and the duration; drop --rate / --duration');
    plan = parsePhases(o.phases, o.capacity !== undefined ? readCapacity(o.capacity) : undefined);
  } else {
    const secs = runSeconds(o);
    const rate = o.rate ?? 10;
    plan = { phases: [{ kind: 'hold', text: `hold ${secs}s at ${rate}`, startS: 0, durationS: secs, fromRps: rate, toRps: rate }], totalS: secs, peakRps: rate };
  }
  let atS: number | undefined;
  if (o.at !== undefined) {
    const m = /^phase:(\d+)$/.exec(o.at.trim());
    if (m) {
      const p = plan.phases[Number(m[1]) - 1];
      if (!p) throw new UsageError(`--at ${o.at}: there are ${plan.phases.length} phases (phase:1 to phase:${plan.phases.length})`);
      atS = p.startS;
    } else {
      atS = parseSeconds(o.at);
      if (atS === undefined) throw new UsageError(`--at: "${o.at}" is not a time (120s, 2m) or a phase (phase:2)`);
    }
    if (atS >= plan.totalS) throw new UsageError(`--at ${o.at} is at or after the end of the run (${plan.totalS} s); the change must happen while the load runs`);
  } else if (o.run !== undefined) atS = plan.totalS / 2;
  return { plan, atS, sliceS: o.slice ?? 5, arrival: o.arrival === 'constant' ? 'constant' : 'poisson' };
}
