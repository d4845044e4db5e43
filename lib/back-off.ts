// The one 429 back-off loop (docs/RUNNER.md: a 429 met by a test other than the
// rate-limit ones is waited out and the request sent again, at most 3 retries and 30 s
// of waiting), used by the raw client (lib/http-client.ts) and by the fetch the client
// libraries get (harness/clients/fetch.ts). The wait comes from lib/retry-hints.ts.
import { retryDelayMs } from './retry-hints.ts';

export interface BackOffBudget { maxRetries: number; maxTotalWaitMs: number }

export const DEFAULT_429_BUDGET: BackOffBudget = { maxRetries: 3, maxTotalWaitMs: 30_000 };

export interface Throttled { status?: number; headers: Record<string, string | undefined> }

/**
 * Runs `attempt` and, while it answers 429 and the budget allows, waits the advised
 * time and runs it again. `onRetry` sees each throttled answer before the wait (the
 * run still saw it); the last answer is returned as it is, 429 or not.
 */
export async function with429BackOff<T>(
  attempt: (retries: Array<{ status: number; waitedMs: number }>) => Promise<T>,
  view: (r: T) => Throttled,
  opts: { budget?: BackOffBudget; enabled?: boolean; onRetry?: (r: T, waitMs: number) => void | Promise<void> } = {},
): Promise<T> {
  const budget = opts.budget ?? DEFAULT_429_BUDGET;
  const retries: Array<{ status: number; waitedMs: number }> = [];
  let waited = 0;
  for (;;) {
    const r = await attempt([...retries]);
    const { status, headers } = view(r);
    if (status !== 429 || opts.enabled === false || retries.length >= budget.maxRetries) return r;
    const wait = retryDelayMs(headers, retries.length);
    if (waited + wait > budget.maxTotalWaitMs) return r;
    await opts.onRetry?.(r, wait);
    retries.push({ status: 429, waitedMs: wait });
    waited += wait;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
