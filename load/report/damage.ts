// What a change did to a run, against the SLOs: seconds of violation and when they
// began and ended relative to the change, the time to recover (the change to the first
// of N consecutive slices within the SLOs), the requests lost and how. Shedding with 429
// or 503 and a proper error body is graceful; no answer, a 5xx other than 503, an error
// status without a proper body, a stream cut before [DONE], a timeout are not. The
// rules are the shared ones (lib/spec/rules/status.ts, lib/spec/error-body.ts).
import { errorBodyClause, isDroppedOrServerError, isServerError } from '../../lib/spec/rules/status.ts';
import { errorBodyProblems } from '../../lib/spec/error-body.ts';
import { errorSchemaProblems } from '../../lib/spec/schema-validator.ts';
import type { Outcome } from '../engine/lean-client.ts';
import { isCutStream, outcomeFailureClause, type Recorder } from '../engine/recorder.ts';
import type { Findings } from './findings.ts';

export interface Loss {
  /** shed_429, shed_503 (graceful); refused, dropped, reset, stream_cut, status_<n>, improper_<n>, timeout, bad_body, other. */
  cls: string;
  graceful: boolean;
  /** The clause it breaks (undefined: a capacity figure, no clause: a timeout). */
  clause?: string;
  detail: string;
}

/** How a request that did not succeed was lost; undefined for a success or a request the driver itself aborted. */
export function classifyLoss(o: Outcome): Loss | undefined {
  if (o.ok || o.failure === 'aborted') return undefined;
  const s = o.status;
  if (s !== undefined && s >= 300) {
    if (isServerError(s)) return { cls: `status_${s}`, graceful: false, clause: 'ERR-2', detail: `answered ${s} (a 5xx other than 503)` };
    const problems = errorBodyProblems(o.headers?.['content-type'], o.errorBody ?? '', errorSchemaProblems);
    if (s === 429 || s === 503) {
      return problems.length === 0
        ? { cls: `shed_${s}`, graceful: true, detail: `${s} with a proper error body` }
        : { cls: `improper_${s}`, graceful: false, clause: errorBodyClause(s), detail: `${s} without a proper error body: ${problems[0]}` };
    }
    return { cls: `status_${s}`, graceful: false, clause: problems.length ? errorBodyClause(s) : undefined, detail: `answered ${s}${problems.length ? ` without a proper error body: ${problems[0]}` : ''}` };
  }
  if (isCutStream(o)) return { cls: 'stream_cut', graceful: false, clause: outcomeFailureClause(o)!.id, detail: `stream cut after ${o.events} events, without data: [DONE]` };
  if (o.failure === 'refused' || o.failure === 'dropped' || o.failure === 'reset') {
    // No answer at all where a 429/503 was owed (LIM-1's rule, lib/spec/rules/status.ts).
    return { cls: o.failure, graceful: false, clause: isDroppedOrServerError(undefined) ? 'LIM-1' : undefined, detail: o.failureDetail ?? o.failure };
  }
  if (o.failure === 'timeout') return { cls: 'timeout', graceful: false, detail: 'no complete answer within the time limit' };
  // A wrong 2xx answer (bad_body): the clause the recorder's rule names (EV-3, CHAT-1, ...).
  const broke = outcomeFailureClause({ ...o, failure: o.failure ?? 'other' });
  return { cls: o.failure ?? 'other', graceful: false, clause: broke && broke.level !== 'INFO' ? broke.id : undefined, detail: o.failureDetail ?? 'failed' };
}

export interface SliceVerdict {
  t_start_s: number;
  t_end_s: number;
  /** null: nothing was sent in the slice (no evidence either way). */
  within_slo: boolean | null;
}

export interface LossTally {
  lost: number;
  attempted: number;
  graceful: Record<string, number>;
  not_graceful: Record<string, number>;
  clauses: string[];
}

export interface Damage {
  change_at_s: number | null;
  change: string | null;
  slice_s: number;
  violation_s: number;
  violation_slices: number;
  /** First violated slice's start and last one's end, seconds relative to the change (from the run's start without one). */
  violation_from_s: number | null;
  violation_to_s: number | null;
  /** The change to the first of `recover_slices` consecutive slices within the SLOs after the first violation; 0 when nothing broke; null when it never recovered within the run. */
  recovery_s: number | null;
  recover_slices: number;
  recovered: boolean;
  losses: LossTally;
  graceful: boolean;
  verdict: string;
}

const MAX_EXAMPLES = 10;

/**
 * A rehearsal's lost requests: tallied by class, and each one not graceful listed once
 * in the findings, on the clause it broke, with its curl line (the recorder, told so,
 * leaves these requests' findings to it).
 */
export class LostRequests {
  readonly tally: LossTally = { lost: 0, attempted: 0, graceful: {}, not_graceful: {}, clauses: [] };
  readonly examples: Array<{ sent_at_s: number; class: string; clause: string | null; detail: string; curl: string | null }> = [];

  constructor(private readonly findings: Findings, recorder: Recorder) {
    recorder.requestFindings = false;
  }

  /** Classifies one outcome; `curl` reproduces its request, `atS` is its send time from the start. */
  add(out: Outcome, curl: () => string | undefined, atS: number): Loss | undefined {
    const loss = classifyLoss(out);
    if (!loss) return undefined;
    const t = this.tally;
    t.lost++;
    const into = loss.graceful ? t.graceful : t.not_graceful;
    into[loss.cls] = (into[loss.cls] ?? 0) + 1;
    if (loss.graceful) return loss;
    if (loss.clause && !t.clauses.includes(loss.clause)) t.clauses.push(loss.clause);
    const c = curl();
    this.findings.add(loss.clause ?? 'LOAD', `not graceful during the rehearsal: ${loss.cls.replace(/_/g, ' ')}`, `${loss.detail} (sent at ${atS} s)${c ? `; reproduce: ${c}` : ''}`, loss.clause ? undefined : 'INFO');
    if (this.examples.length < MAX_EXAMPLES) this.examples.push({ sent_at_s: atS, class: loss.cls, clause: loss.clause ?? null, detail: loss.detail, curl: c ?? null });
    return loss;
  }
}

/** The figures and the one verdict line, from the judged slices and the run's losses. */
export function assessDamage(slices: SliceVerdict[], sliceS: number, recoverSlices: number, change: { t_s: number; label: string } | undefined, losses: LossTally, commandProblem?: string): Damage {
  const zero = change?.t_s ?? 0;
  const rel = (t: number) => Math.round((t - zero) * 1000) / 1000;
  const violated = slices.filter((s) => s.within_slo === false);
  const after = slices.filter((s) => s.t_end_s > zero);
  const firstBad = after.findIndex((s) => s.within_slo === false);
  let recovery: number | null = 0;
  if (firstBad >= 0) {
    recovery = null;
    let run = 0;
    let start = -1;
    for (let i = firstBad + 1; i < after.length; i++) {
      const s = after[i]!;
      if (s.within_slo === null) continue; // an empty slice neither breaks nor extends a streak
      if (!s.within_slo) {
        run = 0;
        continue;
      }
      if (run++ === 0) start = i;
      if (run === recoverSlices) {
        recovery = rel(after[start]!.t_start_s);
        break;
      }
    }
  }
  const violationS = Math.round(violated.reduce((a, s) => a + (s.t_end_s - s.t_start_s), 0) * 1000) / 1000;
  const graceful = Object.values(losses.not_graceful).every((n) => n === 0);
  const shed = Object.entries(losses.graceful).map(([k, n]) => `${n} shed with ${k.replace('shed_', '')} and an error body`);
  const bad = Object.entries(losses.not_graceful).map(([k, n]) => `${n} ${k.replace('_', ' ')}`);
  const where = change ? `change at ${change.t_s} s` : 'no change';
  const figures = [
    `SLO violated ${violationS} s${violated.length ? ` (${fmtRel(rel(violated[0]!.t_start_s))} to ${fmtRel(rel(violated[violated.length - 1]!.t_end_s))}${change ? ' from the change' : ''})` : ''}`,
    firstBad < 0 ? 'nothing to recover from' : recovery === null ? `not recovered within the run (recovery is ${recoverSlices} slices in a row within the SLO)` : `recovered ${recovery} s after the ${change ? 'change' : 'start'} (then ${recoverSlices} slices in a row within the SLO)`,
    `lost ${losses.lost} of ${losses.attempted}${losses.lost ? `: ${[...shed, ...bad].join(', ')}` : ''}`,
    ...(commandProblem ? [commandProblem] : []),
  ];
  const verdict = `rehearsal (${where}): ${graceful ? 'graceful' : `NOT graceful (${losses.clauses.join(', ') || 'timeouts'})`}: ${figures.join('; ')}`;
  return {
    change_at_s: change?.t_s ?? null,
    change: change?.label ?? null,
    slice_s: sliceS,
    violation_s: violationS,
    violation_slices: violated.length,
    violation_from_s: violated.length ? rel(violated[0]!.t_start_s) : null,
    violation_to_s: violated.length ? rel(violated[violated.length - 1]!.t_end_s) : null,
    recovery_s: recovery,
    recover_slices: recoverSlices,
    recovered: recovery !== null,
    losses,
    graceful,
    verdict,
  };
}

function fmtRel(t: number): string {
  return t >= 0 ? `+${t} s` : `${t} s`;
}
