// What fails a load run besides findings and baseline regressions: the SLOs given to
// stream and throughput (a rehearsal judges them per time slice, in its damage verdict),
// the sweep's answer (no rate met the SLOs, or below --expect-capacity), and k6-style
// absolute limits (--threshold ttft_p95_ms<500). Each check names its limit and the value seen.
import { METRICS, parseLimit, type LimitOp, type MetricName } from './metric-names.ts';
import { UsageError, type LoadOptions, type Scenario } from '../setup/options.ts';

export interface GateCheck {
  /** slo: an --slo-* option; limit: an absolute --threshold; sweep: the sweep's answer. */
  kind: 'slo' | 'limit' | 'sweep';
  name: string;
  metric: string;
  op: '<' | '<=' | '>' | '>=';
  limit: number;
  unit: string;
  /** null: no sample to judge (a broken gate: no evidence is not a pass). */
  value: number | null;
  met: boolean;
}

export interface Gates { checks: GateCheck[]; failed: number }

export interface Limit { metric: MetricName; op: LimitOp; value: number }

/** The absolute limits among --threshold items ("ttft_p95_ms<500"); relative ones ("metric=10%") are the baseline's. */
export function parseLimits(list: string[]): Limit[] {
  const out: Limit[] = [];
  for (const item of list) {
    if (!/[<>]/.test(item)) continue;
    const l = parseLimit(item);
    if (typeof l === 'string') throw new UsageError(`--threshold ${l}`);
    out.push(l);
  }
  return out;
}

const SLO_METRIC: Record<string, { stream: MetricName; throughput?: MetricName }> = {
  sloTtftP95Ms: { stream: 'ttft_p95_ms' },
  sloItlP95Ms: { stream: 'itl_p95_ms' },
  sloE2eP95Ms: { stream: 'e2e_p95_ms', throughput: 'latency_p95_ms' },
  sloErrorShare: { stream: 'error_share', throughput: 'error_share' },
};

const FLAG: Record<string, string> = { sloTtftP95Ms: '--slo-ttft-p95-ms', sloItlP95Ms: '--slo-itl-p95-ms', sloE2eP95Ms: '--slo-e2e-p95-ms', sloErrorShare: '--slo-error-share' };

export function evaluateGates(
  scenario: Scenario,
  o: LoadOptions,
  metrics: Partial<Record<string, number | null>>,
  details: Record<string, unknown>,
  limits: Limit[],
): Gates {
  const checks: GateCheck[] = [];
  const judge = (kind: GateCheck['kind'], name: string, metric: string, op: GateCheck['op'], limit: number, unit: string, raw: unknown) => {
    const value = typeof raw === 'number' && Number.isFinite(raw) ? raw : null;
    const met = value !== null && (op === '<' ? value < limit : op === '<=' ? value <= limit : op === '>' ? value > limit : value >= limit);
    checks.push({ kind, name, metric, op, limit, unit, value, met });
  };
  // A rehearsal judges its SLOs per time slice (the damage and recovery verdict): a pooled p95 over a planned outage says nothing.
  const rehearsal = (details as { rehearsal?: unknown }).rehearsal !== undefined;
  if ((scenario === 'stream' && !rehearsal) || scenario === 'throughput') {
    for (const key of o.slosGiven ?? []) {
      const metric = SLO_METRIC[key]?.[scenario === 'stream' ? 'stream' : 'throughput'];
      if (!metric) continue;
      judge('slo', FLAG[key]!, metric, '<=', o[key as keyof LoadOptions] as number, METRICS[metric].unit, metrics[metric]);
    }
  }
  if (scenario === 'sweep') {
    const d = details as { max_meeting_slo?: number | null; unit?: string };
    const unit = d.unit ?? 'req/s';
    // No rate met the SLO: the sweep's answer is "none", which fails the run.
    judge('sweep', 'a rate met the SLO', 'max_meeting_slo', '>', 0, unit, d.max_meeting_slo ?? 0);
    if (o.expectCapacity !== undefined) judge('sweep', '--expect-capacity', 'max_meeting_slo', '>=', o.expectCapacity, unit, d.max_meeting_slo);
  }
  checks.push(...evaluateLimits(metrics, limits).checks);
  return { checks, failed: checks.filter((c) => !c.met).length };
}

/** Absolute limits alone (the merge: its inputs' SLOs were judged by each run). */
export function evaluateLimits(metrics: Partial<Record<string, number | null>>, limits: Limit[]): Gates {
  const checks: GateCheck[] = limits.map((l) => {
    const raw = metrics[l.metric];
    const value = typeof raw === 'number' && Number.isFinite(raw) ? raw : null;
    const met = value !== null && (l.op === '<' ? value < l.value : l.op === '<=' ? value <= l.value : l.op === '>' ? value > l.value : value >= l.value);
    return { kind: 'limit', name: '--threshold', metric: l.metric, op: l.op, limit: l.value, unit: METRICS[l.metric].unit, value, met };
  });
  return { checks, failed: checks.filter((c) => !c.met).length };
}

/** One line per check: "SLO --slo-ttft-p95-ms: ttft_p95_ms <= 1 ms, seen 153 ms: BROKEN". */
export function gateLine(c: GateCheck): string {
  const what = c.kind === 'slo' ? `SLO ${c.name}` : c.kind === 'limit' ? 'threshold' : `sweep (${c.name})`;
  const seen = c.value === null ? 'no sample to judge' : `seen ${c.value} ${c.unit}`;
  return `${what}: ${c.metric} ${c.op} ${c.limit} ${c.unit}, ${seen}: ${c.met ? 'met' : 'BROKEN'}`;
}
