// Starts a target in this process and gives the environment that points the suite at
// it as a remote target (TARGET_URL + keys), the way a platform team runs it.
import { startReferenceServer, type ReferenceOptions } from '../../reference/server.ts';

export interface RunningTarget { env: Record<string, string>; keys: string[]; close(): Promise<void> }

export async function referenceTarget(opts: ReferenceOptions = {}): Promise<RunningTarget> {
  const ref = await startReferenceServer(opts);
  return {
    env: {
      TARGET_URL: ref.url, API_KEY: ref.keys.main, LIMITED_API_KEY: ref.keys.limited,
      RATE_LIMIT_API_KEY: ref.keys.rateLimit, BRAIN_ID: ref.brainId,
    },
    keys: Object.values(ref.keys),
    close: () => ref.close(),
  };
}

/**
 * Tight-limit variants run in combination with a retry-hint style, by the throttled-run
 * self-test (selftest/e2e/throttled-variants.test.ts): there the whole suite must reach the
 * unthrottled run's verdicts test for test, which is stricter than the legal-variant
 * self-test's "no fail, no pass lost", so that one leaves these out.
 */
export const THROTTLED_COMBINATIONS: Array<[string, string[]]> = [
  ['per key, 2 s windows, Retry-After as an HTTP-date', ['limit-per-key-2s', 'retry-after-http-date']],
  ['account-wide, 2 s windows, x-ratelimit-reset-* only', ['limit-account-2s', 'ratelimit-reset-only']],
  ['token-bucket bursts, retry-after-ms only', ['limit-burst', 'retry-after-ms-only']],
];

/**
 * Tight rate-limit variants the client matrix does not group (they only make a run wait):
 * every client meets them in whole-suite runs, client suites included, here or in
 * legal-variants.test.ts.
 */
export const THROTTLING_VARIANTS = ['limit-per-key-2s', 'limit-account-2s', 'limit-account-5s', 'limit-burst', 'retry-after-seconds-only'];
