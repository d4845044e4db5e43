// A small semaphore: suite runs are heavy child processes, and this machine has 2 cores.
export function limiter(slots: number) {
  let free = slots;
  const waiting: Array<() => void> = [];
  return async function run<T>(fn: () => Promise<T>): Promise<T> {
    if (free === 0) await new Promise<void>((r) => waiting.push(r));
    else free--;
    try { return await fn(); } finally {
      const next = waiting.shift();
      if (next) next(); else free++;
    }
  };
}

/**
 * vitest's timeout for an end-to-end self-test (suite runs, child processes, servers,
 * queueing for a `limiter` slot). It is a hang guard only: each suite run ends by the
 * suite's own deadlines (TIMEOUT_MS per request, bounded probes), and how long a run takes
 * on a loaded machine says nothing about the target, so it must not fail a test (a 120 s
 * bound did, at load average 30).
 */
export const HANG_GUARD_MS = 20 * 60_000;
