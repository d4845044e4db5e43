// The one 429 back-off loop (docs/RUNNER.md: a 429 met by a test other than the
// rate-limit ones is waited out and the request sent again, within a budget of retries
// and waiting), used by the raw client (lib/http/http-client.ts) and by the fetch the client
// libraries get (harness/clients/fetch.ts). With a gate (the run's governor,
// lib/run/governor.ts) every attempt waits for its turn and reports its answer, so the
// 429's advised wait is kept by the whole run, not by this request alone; without one
// the request waits the advised time itself (lib/spec/retry-hints.ts).
import { retryDelayMs } from '../spec/retry-hints.ts';
import type { Gate } from './governor.ts';

export interface BackOffBudget { maxRetries: number; maxTotalWaitMs: number }

/**
 * Per request: re-sends after a 429 until 60 s have passed since it was first sent
 * (the governor's turns, the advised waits and the attempts together), at most 20. The
 * time bounds a test; the count only a target that throttles at once and forever. A
 * token bucket advising waits of 100 ms can answer 429 to the same request five times
 * in a second, so the count is not what decides. Past the budget the request's last
 * answer, a 429, is returned marked as throttled out, and the test that sent it is
 * `inconclusive`, never judged on it.
 */
export const DEFAULT_429_BUDGET: BackOffBudget = { maxRetries: 20, maxTotalWaitMs: 60_000 };

/**
 * What a request's caller must allow beyond its own deadline for the waits above: the
 * client libraries' own timeouts and the tests' vitest timeouts add it, so time spent
 * waiting for a turn is never counted as the target's slowness.
 */
export const THROTTLE_ALLOWANCE_MS = DEFAULT_429_BUDGET.maxTotalWaitMs + 1_000;

/** How the message of a test left inconclusive by a throttled-out request starts (the runner counts them). */
export const THROTTLED = 'throttled: the target kept answering 429';

export interface Throttled { status?: number; headers: Record<string, string | undefined> }

/** How a request fared with throttling: what the test reports. */
export interface ThrottleAccount {
  /** 429s met and waited out (or, for the last one, given up on). */
  retries: Array<{ status: number; waitedMs: number }>;
  /** Time waited for the governor's turns and advised waits, ms. */
  waitedMs: number;
  /** The last answer is a 429 the budget could not outlast. */
  throttledOut: boolean;
}

/**
 * Runs `attempt` and, while it answers 429 and the budget allows, waits (for the gate's
 * turn, or the advised time) and runs it again. `onRetry` sees each throttled answer
 * before the wait (the run still saw it); the last answer is returned as it is, 429 or
 * not; `onDone` gets the account.
 */
export async function with429BackOff<T>(
  attempt: (retries: Array<{ status: number; waitedMs: number }>) => Promise<T>,
  view: (r: T) => Throttled,
  opts: {
    budget?: BackOffBudget; enabled?: boolean; gate?: Gate;
    onRetry?: (r: T, waitMs: number) => void | Promise<void>;
    onDone?: (r: T, account: ThrottleAccount) => void;
  } = {},
): Promise<T> {
  const budget = opts.budget ?? DEFAULT_429_BUDGET;
  const retries: Array<{ status: number; waitedMs: number }> = [];
  // Requests that judge the 429 itself (retries off) neither wait for turns nor teach the governor.
  const gate = opts.enabled === false ? undefined : opts.gate;
  let waited = 0;
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  for (;;) {
    const lease = gate ? await gate.acquire(Math.max(0, budget.maxTotalWaitMs - elapsed()), retries.length > 0) : undefined;
    if (lease) {
      waited += lease.waitedMs;
      if (retries.length) retries[retries.length - 1]!.waitedMs += lease.waitedMs;
    }
    let r: T;
    try {
      r = await attempt([...retries]);
    } catch (err) {
      lease?.release({ headers: {} });
      throw err;
    }
    const { status, headers } = view(r);
    lease?.release({ status, headers });
    const done = (throttledOut: boolean) => { opts.onDone?.(r, { retries, waitedMs: waited, throttledOut }); return r; };
    if (status !== 429 || opts.enabled === false) return done(false);
    if (retries.length >= budget.maxRetries || elapsed() >= budget.maxTotalWaitMs || lease?.forced) return done(true);
    if (gate) {
      // The governor now holds every turn until the advised wait is over.
      await opts.onRetry?.(r, 0);
      retries.push({ status: 429, waitedMs: 0 });
      continue;
    }
    const wait = retryDelayMs(headers, retries.length);
    if (waited + wait > budget.maxTotalWaitMs || elapsed() + wait > budget.maxTotalWaitMs) return done(true);
    await opts.onRetry?.(r, wait);
    retries.push({ status: 429, waitedMs: wait });
    waited += wait;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
