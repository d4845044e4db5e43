// The load metrics every chatgate load tool reports under the same names: this
// harness's summary.json (`metrics`), its baseline comparison, and the k6 scripts.
// Names are stable snake_case with the unit in the name; `better` tells a baseline
// comparison a regression from an improvement, `tolerance` is its default allowance.
//
// Plain module on purpose (no Node APIs, ES2017 library only): load/k6 bundles it
// for k6's runtime.

export type Better = 'higher' | 'lower';

export interface MetricInfo {
  unit: string;
  better: Better;
  description: string;
  /**
   * A change for the worse is a regression when it exceeds both the relative share of
   * the baseline and the absolute amount (the absolute floor keeps tiny baselines, such
   * as a 0.4 ms p50 or an error share of 0, from flapping).
   */
  tolerance: { relative: number; absolute: number };
}

const rate = (description: string): MetricInfo => ({ unit: 'req/s', better: 'higher', description, tolerance: { relative: 0.1, absolute: 0 } });
const ms = (description: string, relative: number, absolute = 2): MetricInfo => ({ unit: 'ms', better: 'lower', description, tolerance: { relative, absolute } });
const share = (description: string, absolute = 0.01): MetricInfo => ({ unit: 'share 0-1', better: 'lower', description, tolerance: { relative: 0, absolute } });

export const METRICS = {
  // --- every scenario ---------------------------------------------------------------
  responses_rps: rate('Responses received per second, any status.'),
  ok_rps: rate('Successful requests per second: 2xx, complete, and passing the body checks.'),
  error_share: share('Share of sent requests that did not succeed (any non-2xx, transport error, bad body).'),
  share_429: share('Share of sent requests answered 429.', 0.02),
  share_503: share('Share of sent requests answered 503.', 0.02),
  share_5xx_other: share('Share of sent requests answered with a 5xx other than 503 (never legal).', 0),
  share_transport_errors: share('Share of sent requests with no complete answer: timeouts, resets, refused or dropped connections.', 0),
  body_invalid_share: share('Share of schema-checked bodies that failed the schema (a fast wrong answer).', 0),

  // --- non-streaming latency (throughput, rate-limit) ----------------------------------
  latency_p50_ms: ms('Request latency, median.', 0.15),
  latency_p90_ms: ms('Request latency, 90th percentile.', 0.2),
  latency_p95_ms: ms('Request latency, 95th percentile.', 0.2),
  latency_p99_ms: ms('Request latency, 99th percentile.', 0.3, 5),

  // --- streaming (stream, sweep) -------------------------------------------------------
  ttft_p50_ms: ms('Time to first token (first chunk with content), median, from the intended send time.', 0.15),
  ttft_p95_ms: ms('Time to first token, 95th percentile.', 0.2),
  ttft_p99_ms: ms('Time to first token, 99th percentile.', 0.3, 5),
  itl_p50_ms: ms('Inter-token latency: gap between consecutive content chunks, median.', 0.15, 1),
  itl_p95_ms: ms('Inter-token latency, 95th percentile.', 0.2, 2),
  itl_p99_ms: ms('Inter-token latency, 99th percentile.', 0.3, 5),
  tpot_p50_ms: ms('Time per output token after the first ((last content chunk - first content chunk) / (tokens - 1), tokens from usage), median.', 0.15, 1),
  e2e_p50_ms: ms('End-to-end stream time (intended send to end of stream), median.', 0.15),
  e2e_p95_ms: ms('End-to-end stream time, 95th percentile.', 0.2),
  e2e_p99_ms: ms('End-to-end stream time, 99th percentile.', 0.3, 5),
  output_tokens_per_s: { unit: 'tokens/s', better: 'higher', description: 'Output tokens per second over the run, from usage.completion_tokens (absent when the target sends no usage).', tolerance: { relative: 0.1, absolute: 0 } } as MetricInfo,
  streams_ok_per_s: rate('Streams completed successfully per second.'),
  tpot_p95_ms: ms('Time per output token after the first, 95th percentile.', 0.2, 1),
  input_tokens_per_s: { unit: 'tokens/s', better: 'higher', description: 'Prompt tokens of successful requests per second: usage.prompt_tokens, else the tokenizer\'s count of what was sent (summary.json tokens says which).', tolerance: { relative: 0.1, absolute: 0 } } as MetricInfo,
  total_tokens_per_s: { unit: 'tokens/s', better: 'higher', description: 'Input plus output tokens of successful requests per second.', tolerance: { relative: 0.1, absolute: 0 } } as MetricInfo,
  goodput_output_tokens_per_s: { unit: 'tokens/s', better: 'higher', description: 'Output tokens per second of the successful requests that met every per-request SLO.', tolerance: { relative: 0.1, absolute: 0 } } as MetricInfo,

  // --- sweep ---------------------------------------------------------------------------
  max_rate_meeting_slo_rps: rate('Highest offered rate (or concurrency, see the unit in the summary) whose step met the SLO.'),
  goodput_rps: rate('Requests per second that met every per-request SLO (stream: over the run; sweep: at the best step).'),

  // --- rate-limit ----------------------------------------------------------------------
  first_429_offered_rps: { unit: 'req/s', better: 'higher', description: 'Offered rate of the ramp step where the throttled key first got a 429.', tolerance: { relative: 0.2, absolute: 0 } } as MetricInfo,
  max_ok_rps: rate('Most 2xx answers the throttled key got in one second (the effective limit).'),
  recovery_ms: ms('Time from the end of the burst to the throttled key\'s first 2xx.', 0.5, 500),
  bystander_error_share: share('Share of the second key\'s requests that failed while the first key was throttled.', 0),

  // --- the driver itself -----------------------------------------------------------------
  driver_cpu_cores: { unit: 'cores', better: 'lower', description: 'CPU the load driver used, in cores (1 = one core busy for the whole run).', tolerance: { relative: 0.5, absolute: 0.05 } } as MetricInfo,
} as const;

export type MetricName = keyof typeof METRICS;


export function isMetricName(name: string): name is MetricName {
  return Object.prototype.hasOwnProperty.call(METRICS, name);
}

export type LimitOp = '<' | '<=' | '>' | '>=';

/**
 * An absolute limit, k6-style: "ttft_p95_ms<500", "output_tokens_per_s>100",
 * "error_share<0.01". The Node harness (--threshold), the merge and the k6 scripts
 * (THRESHOLDS) all read it here. Returns the error's text for a malformed one.
 */
export function parseLimit(item: string): { metric: MetricName; op: LimitOp; value: number } | string {
  const m = /^([a-z0-9_]+)\s*(<=|>=|<|>)\s*(-?\d*\.?\d+)$/.exec(item.trim());
  if (!m) return `"${item}": use metric<limit or metric>limit, e.g. ttft_p95_ms<500 or output_tokens_per_s>100`;
  if (!isMetricName(m[1]!)) return `"${item}": unknown metric ${m[1]}; known: ${Object.keys(METRICS).join(', ')}`;
  return { metric: m[1], op: m[2] as LimitOp, value: Number(m[3]) };
}
