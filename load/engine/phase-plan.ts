// The phase syntax of a rehearsal, shared by the Node harness (--phases) and the k6
// scripts (PHASES): "ramp 30s to 70%, hold 300s". Plain module (no Node APIs, ES2017),
// so the k6 bundles take it whole; the callers add the file reading and the option name.

export interface Phase {
  kind: 'ramp' | 'hold';
  /** As written, for the report. */
  text: string;
  startS: number;
  durationS: number;
  fromRps: number;
  toRps: number;
}

export interface PhasePlan {
  phases: Phase[];
  totalS: number;
  peakRps: number;
  /** The capacity a % is a share of, and where it came from. */
  capacity?: { rps: number; source: string };
}

export const PHASE_SYNTAX = 'phases are "ramp <duration> to <rate>" or "hold <duration> [at <rate>]", separated by commas; a rate is req/s (8, 8rps) or a share of the capacity (70%); e.g. "ramp 30s to 70%, hold 300s"';

/** A phase that cannot be read: the message names the part and the form. */
export class PhaseError {
  readonly name = 'PhaseError';
  constructor(readonly message: string) {}
}

/** "10", "10s", "500ms", "2m", "1h" in seconds (the options' duration form). */
function seconds(raw: string): number | undefined {
  const m = /^(\d*\.?\d+)(ms|s|m|h)?$/.exec(raw.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = m[2] || 's';
  return unit === 'ms' ? n / 1000 : unit === 'm' ? n * 60 : unit === 'h' ? n * 3600 : n;
}

/**
 * Phases from their text. `capacityName` is what the caller calls the capacity a % is a
 * share of (--capacity, CAPACITY), for the error that asks for it.
 */
export function parsePhaseText(text: string, capacity: { rps: number; source: string } | undefined, capacityName: string): PhasePlan {
  const SYNTAX = PHASE_SYNTAX;
  const parts = text.split(/[,;]/).map((p) => p.trim()).filter(Boolean);
  if (parts.length === 0) throw new PhaseError(`empty; ${SYNTAX}`);
  const rate = (r: string, part: string): number => {
    const m = /^(\d*\.?\d+)\s*(%|rps|req\/s)?$/.exec(r.trim());
    if (!m) throw new PhaseError(`"${part}": "${r}" is not a rate; ${SYNTAX}`);
    const n = Number(m[1]);
    if (m[2] !== '%') return n;
    if (!capacity) throw new PhaseError(`"${part}" is a share of a capacity; give ${capacityName}`);
    return Math.round(capacity.rps * n) / 100;
  };
  const phases: Phase[] = [];
  let at = 0;
  let current: number | undefined;
  for (const part of parts) {
    const words = part.split(/\s+/);
    const dur = (w: string | undefined): number => {
      const s = w === undefined ? undefined : seconds(w);
      if (s === undefined || !(s > 0)) throw new PhaseError(`"${part}": "${w || ''}" is not a duration above 0 (10s, 500ms, 2m); ${SYNTAX}`);
      return s;
    };
    let p: Phase;
    if (words[0] === 'ramp' && words[2] === 'to' && words.length >= 4) {
      const to = rate(words.slice(3).join(''), part);
      p = { kind: 'ramp', text: part, startS: at, durationS: dur(words[1]), fromRps: current === undefined ? 0 : current, toRps: to };
    } else if (words[0] === 'hold' && (words.length === 2 || (words[2] === 'at' && words.length >= 4))) {
      const r = words.length === 2 ? current : rate(words.slice(3).join(''), part);
      if (r === undefined) throw new PhaseError(`"${part}": a first hold needs its rate ("hold 60s at 5"); ${SYNTAX}`);
      p = { kind: 'hold', text: part, startS: at, durationS: dur(words[1]), fromRps: r, toRps: r };
    } else {
      throw new PhaseError(`"${part}" is not a phase; ${SYNTAX}`);
    }
    phases.push(p);
    at += p.durationS;
    current = p.toRps;
  }
  const peakRps = Math.max(...phases.map((p) => Math.max(p.fromRps, p.toRps)));
  if (!(peakRps > 0)) throw new PhaseError('every rate is 0; nothing would be sent');
  const plan: PhasePlan = { phases, totalS: at, peakRps };
  if (capacity) plan.capacity = capacity;
  return plan;
}

/**
 * The phases as k6 ramping-arrival-rate stages (req/s): a ramp is a stage to its rate,
 * a hold a stage at its rate, a hold at a new rate a 0 s step first.
 */
export function phaseStages(plan: PhasePlan): { startRate: number; stages: Array<{ target: number; duration: string }> } {
  const stages: Array<{ target: number; duration: string }> = [];
  let current = plan.phases[0]!.fromRps;
  for (const p of plan.phases) {
    if (p.fromRps !== current) stages.push({ target: p.fromRps, duration: '0s' });
    stages.push({ target: p.toRps, duration: `${Math.round(p.durationS * 1000)}ms` });
    current = p.toRps;
  }
  return { startRate: plan.phases[0]!.fromRps, stages };
}
