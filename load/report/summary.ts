// summary.json: the machine-readable result of a load run. Field names are stable
// snake_case with units in the names (docs/LOAD.md lists them); `metrics` is the flat
// map baselines compare (names from metric-names.ts). Everything goes through
// redactDeep before it is written: no key reaches a report.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { redactDeep } from '../../lib/run/redact.ts';
import { LatencyHistogram, type BucketPlot, type LatencySummary, type PercentilePlot } from '../engine/histogram.ts';
import { OPTION_SPECS, type LoadOptions, type Scenario } from '../setup/options.ts';
import type { Finding } from './findings.ts';
import type { DriverStats } from '../engine/driver-cpu.ts';
import type { ScenarioResult } from '../scenarios/context.ts';
import type { LoadTarget } from '../setup/load-target.ts';
import type { TimelinePoint } from '../engine/recorder.ts';
import type { MetricName } from './metric-names.ts';
import type { BaselineComparison } from './baseline.ts';
import type { Gates } from './gates.ts';

export const SUMMARY_FORMAT = 'chatgate-load-summary';
export const SUMMARY_VERSION = 1;

export interface LoadSummary {
  format: typeof SUMMARY_FORMAT;
  format_version: number;
  scenario: Scenario;
  /** True when the run was stopped (Ctrl-C) before it finished: figures cover what ran. */
  partial: boolean;
  stop_reason: string;
  /** Null where not known (a merge of k6 runners whose summaries record none), `times_unknown` says why. */
  started_at: string | null;
  finished_at: string | null;
  times_unknown?: string;
  duration_s: number;
  target: { url: string; kind: LoadTarget['kind']; reference?: Record<string, unknown>; reference_cpu_s?: number | null };
  options: Record<string, unknown>;
  /** The load generator's own load; null where it was not measured (a merge of k6 runners), `driver_not_measured` says why. */
  driver: (DriverStats & { schedule_lag_p99_ms: number }) | null;
  driver_not_measured?: string;
  counts: { sent: number; not_sent: number; responses: number; ok: number; failed: number; aborted_at_stop: number; cancelled?: number };
  status_codes: Record<string, number>;
  failures: Record<string, number>;
  failure_examples: Array<{ kind: string; status?: number; detail: string }>;
  latencies: Record<string, LatencySummary>;
  output: Record<string, unknown> | null;
  routes: Record<string, unknown>;
  body_checks: { checked: number; invalid: number };
  error_answers: { checked: number; improper: number };
  findings: Finding[];
  details: Record<string, unknown>;
  metrics: Partial<Record<MetricName, number | null>>;
  timeline: TimelinePoint[];
  plots: {
    percentiles: Record<string, PercentilePlot>;
    buckets: Record<string, BucketPlot>;
    extra: Record<string, unknown>;
  };
  /** HdrHistogram compressed base64 (microseconds), for merging or re-analysis. */
  hdr_us: Record<string, string>;
  baseline: BaselineComparison | null;
  /** SLOs, absolute --threshold limits and the sweep's answer, each judged (a broken one is exit 1). */
  gates?: Gates;
  /** What the requests said (load/workload): source, lengths, tokenizer, seed. */
  workload?: Record<string, unknown>;
  /** Input/output/total tokens and rates, each count's source (usage or tokenizer). */
  tokens?: Record<string, unknown> | null;
  /** The per-request records beside summary.json. */
  requests_log?: { file: string; lines: number };
}

export interface SummaryInput {
  scenario: Scenario;
  options: LoadOptions;
  target: LoadTarget;
  startedAt: Date;
  finishedAt: Date;
  partial: boolean;
  result: ScenarioResult;
  driver: DriverStats;
  referenceCpuS?: number | null;
  findings: Finding[];
}

export function buildSummary(input: SummaryInput): LoadSummary {
  const { result } = input;
  const r = result.recorder;
  const shares = r.shares();
  const secs = r.activeSeconds();
  const histograms = r.histograms();
  const percentiles: Record<string, PercentilePlot> = {};
  const buckets: Record<string, BucketPlot> = {};
  const hdr: Record<string, string> = {};
  for (const [name, h] of Object.entries(histograms)) {
    if (h.count === 0) continue;
    percentiles[name] = h.percentilePlot();
    buckets[name] = h.bucketPlot();
    hdr[name.replace(/_ms$/, '')] = h.encode();
  }
  const extra: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(result.plots ?? {})) {
    if (v instanceof LatencyHistogram) {
      if (v.count > 0) percentiles[name] = v.percentilePlot();
    } else extra[name] = v;
  }
  const metrics: Partial<Record<MetricName, number | null>> = {
    responses_rps: round3(r.responses / secs),
    ok_rps: round3(r.ok / secs),
    ...shares,
    ...result.metrics,
    driver_cpu_cores: input.driver.cpu_cores,
  };
  const summary: LoadSummary = {
    format: SUMMARY_FORMAT,
    format_version: SUMMARY_VERSION,
    scenario: input.scenario,
    partial: input.partial,
    stop_reason: result.stopReason,
    started_at: input.startedAt.toISOString(),
    finished_at: input.finishedAt.toISOString(),
    duration_s: round3((input.finishedAt.getTime() - input.startedAt.getTime()) / 1000),
    target: {
      url: input.target.baseUrl,
      kind: input.target.kind,
      ...(input.target.reference ? { reference: input.target.reference.options as Record<string, unknown>, reference_cpu_s: input.referenceCpuS ?? null } : {}),
    },
    options: optionsFor(input.scenario, input.options, input.target.kind === 'embedded-reference'),
    driver: { ...input.driver, schedule_lag_p99_ms: r.scheduleLag.percentileMs(99) },
    counts: {
      sent: r.sent,
      not_sent: r.notSent,
      responses: r.responses,
      ok: r.ok,
      failed: Math.max(0, r.attempted - r.ok),
      aborted_at_stop: r.aborted,
      // --cancel-share: streams cancelled on purpose, not failures (only when there are any).
      ...(r.cancelled ? { cancelled: r.cancelled } : {}),
    },
    status_codes: r.statusCodes(),
    failures: r.failureCounts(),
    failure_examples: r.failureExamples,
    latencies: r.latencySummaries(),
    output: r.stream || r.withUsage > 0 ? r.output() : null,
    routes: r.routeStats(),
    body_checks: { checked: r.bodiesChecked, invalid: r.bodiesInvalid },
    error_answers: { checked: r.errorAnswersChecked, improper: r.errorAnswersImproper },
    findings: input.findings,
    details: result.details,
    metrics,
    timeline: r.timelinePoints(),
    plots: { percentiles, buckets, extra },
    hdr_us: hdr,
    baseline: null,
  };
  return summary;
}

function optionsFor(scenario: Scenario, o: LoadOptions, embedded: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of OPTION_SPECS) {
    if (spec.scenarios !== 'all' && !spec.scenarios.includes(scenario)) continue;
    if (spec.embeddedOnly && !embedded) continue;
    const v = o[spec.key];
    if (v !== undefined) out[snake(spec.key)] = v;
  }
  return out;
}

function snake(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Writes summary.json (redacted) and returns its path. */
export function writeSummary(dir: string, summary: LoadSummary): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'summary.json');
  writeFileSync(path, `${JSON.stringify(redactDeep(summary), null, 2)}\n`);
  return path;
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
