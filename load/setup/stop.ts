// A run's stop request (Ctrl-C, or a sweep step's end): whoever sends requests
// listens, stops sending, and lets what is in flight drain for a bounded time.

export class StopToken {
  stopped = false;
  reason: string | undefined;
  private readonly listeners = new Set<() => void>();

  on(listener: () => void): void {
    if (this.stopped) queueMicrotask(listener);
    else this.listeners.add(listener);
  }

  off(listener: () => void): void {
    this.listeners.delete(listener);
  }

  trigger(reason: string): void {
    if (this.stopped) return;
    this.stopped = true;
    this.reason = reason;
    for (const l of [...this.listeners]) l();
    this.listeners.clear();
  }

  /** A token that stops when this one does (or on its own). */
  child(): StopToken {
    const c = new StopToken();
    this.on(() => c.trigger(this.reason ?? 'stopped'));
    return c;
  }
}

/** Sleeps up to `ms`; resolves early when the token stops. */
export function sleepUnlessStopped(ms: number, stop: StopToken): Promise<void> {
  if (stop.stopped || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stop.off(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    stop.on(done);
  });
}
