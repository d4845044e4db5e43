// Custom metrics shared by the scripts. Metrics must be created in the init context
// (module top level), which is where importing this module runs them.
// Every response adds to every counter, 0 when the event did not happen: a metric
// with samples always appears in the summary, and its thresholds are judged on data
// (a "count>0" threshold on a metric nobody touched would say nothing).
import { Counter, Rate } from 'k6/metrics';

/** 429 answers (rate limit reached). */
export const status429 = new Counter('chatgate_status_429');
/** 503 answers (overloaded). */
export const status503 = new Counter('chatgate_status_503');
/** Share of answers that were 429: the "how much of the load was refused" figure. */
export const rateLimited = new Rate('chatgate_rate_limited');
/** Responses whose body broke its schema (tags: schema, clause). */
export const bodyShapeFailures = new Counter('chatgate_body_shape_failures');
/** Completion tokens reported in usage; its rate is tokens per second. */
export const completionTokens = new Counter('chatgate_completion_tokens');

export function recordStatus(status: number, tags: Record<string, string>): void {
  status429.add(status === 429 ? 1 : 0, tags);
  status503.add(status === 503 ? 1 : 0, tags);
  rateLimited.add(status === 429, tags);
}

/**
 * 1 when setup() stopped the run before any load (API_KEY missing, or no HTTP answer
 * from the target), 0 otherwise: handleSummary then says the run did not happen
 * instead of summarising one.
 */
export const notRun = new Counter('chatgate_not_run');
