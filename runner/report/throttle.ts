// The one line that says how the run paced itself for the target's rate limit
// (console and summary.md): how many 429s, how long the governor held requests
// back, and how many tests a 429 left without a verdict.
import type { Results } from '../../lib/run/verdicts.ts';
import { MAX_CONCURRENCY } from '../../lib/run/governor.ts';

export function throttleLine(results: Results): string | undefined {
  const t = results.throttle;
  if (!t) return undefined;
  const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const pace = t.lowestConcurrency < MAX_CONCURRENCY
    ? ` (slowest pace: ${t.lowestConcurrency} in flight${t.widestIntervalMs ? `, starts ${t.widestIntervalMs} ms apart` : ''})` : '';
  const share = results.durationMs > 0 ? ` (${Math.round((100 * t.heldMs) / results.durationMs)}% of the run)` : '';
  return `throttling: the target answered 429 to ${t.answered429} paced request${t.answered429 === 1 ? '' : 's'}; `
    + `the governor held requests back for ${secs(t.heldMs)} of this ${secs(results.durationMs)} run${share}${pace}; `
    + `${t.throttledOutTests} test${t.throttledOutTests === 1 ? '' : 's'} throttled out (inconclusive: the target kept answering 429)`;
}
