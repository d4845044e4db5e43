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
