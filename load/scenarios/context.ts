// What every scenario gets (options, target, stop token, progress, findings, one
// shared connection pool) and gives back (its recorder, its own section of the
// summary, its metrics).
import type { Pool } from 'undici';
import type { LoadOptions, Scenario } from '../setup/options.ts';
import type { LoadTarget } from '../setup/load-target.ts';
import type { StopToken } from '../setup/stop.ts';
import type { Progress } from '../report/progress.ts';
import type { Findings } from '../report/findings.ts';
import type { Recorder } from '../engine/recorder.ts';
import type { MetricName } from '../report/metric-names.ts';
import type { Workload } from '../workload/workload.ts';
import type { Tokenizer } from '../workload/tokenizer.ts';
import type { RequestLog } from '../report/request-log.ts';

export interface ScenarioContext {
  scenario: Scenario;
  options: LoadOptions;
  target: LoadTarget;
  timeoutMs: number;
  stop: StopToken;
  progress: Progress;
  findings: Findings;
  /** One keep-alive pool per run (created on first use, closed by the runner). */
  pool(): Pool;
  /** What the requests say (load/workload); undefined = the fixed --prompt (rate-limit, autocannon). */
  workload?: Workload;
  /** Counts tokens the target did not report (--tokenizer; undefined = none). */
  tokenizer?: Tokenizer;
  /** requests.jsonl, when the run writes reports. */
  requestLog?: RequestLog;
}

export interface ScenarioResult {
  /** Why sending ended: completed, interrupted, slo-broken, shedding-dominates, no-429, ... */
  stopReason: string;
  /** The run-wide recorder (counts, histograms, timeline). */
  recorder: Recorder;
  /** The scenario's own summary section (sweep steps, rate-limit phases, ...). */
  details: Record<string, unknown>;
  metrics: Partial<Record<MetricName, number | null>>;
  /** Extra series for the report (sweep curve, rate-limit timeline). */
  plots?: Record<string, unknown>;
}
