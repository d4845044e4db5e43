// An open-loop, rising request rate: how the rate-limit probe (suites/limits.test.ts) and
// the error-429 client cells (harness/clients/suite.ts) reach a limit by rate, not by luck.
// Requests go out on a schedule, never waiting for earlier answers, so the number in
// flight follows from the target's latency (about 80 at 80 per second against a target
// that answers in 1 s): a fixed pool of N in flight cannot pass N per second there.

export interface RampOptions {
  /** Most requests in all. */
  max: number;
  /** No request is sent once this many ms have passed. */
  timeCapMs: number;
  /** Requests per second of the first step. */
  startRate: number;
  /** Each step's rate is the one before times this. */
  factor: number;
  /** One step, ms. */
  stepMs: number;
  /** The rate stops rising here, per second (a safety bound for a large max). */
  ceilingRate: number;
}

export interface RampAnswer<T> {
  value: T;
  /** The offered rate (per second) of the step the request went out in. */
  rate: number;
  /** Its place in sending order, from 0. */
  index: number;
}

export interface RampOutcome<T> {
  sent: number;
  /** From the first send to the last answer, ms. */
  elapsedMs: number;
  /** The offered rate of the last step a request went out in, per second. */
  reachedRate: number;
  /** Most requests out at once. */
  peakInFlight: number;
  /** Every answer, in sending order. */
  answers: Array<RampAnswer<T>>;
}

/** The offered rate of step k. */
export function stepRate(o: RampOptions, k: number): number {
  return Math.min(o.ceilingRate, o.startRate * o.factor ** k);
}

/** How many requests are due by `t` ms into the ramp (the first one at 0). */
export function dueBy(o: RampOptions, t: number): number {
  let due = 0;
  for (let k = 0; (k * o.stepMs) <= t; k++) {
    const inStep = Math.min(o.stepMs, t - k * o.stepMs);
    due += (stepRate(o, k) * inStep) / 1000;
  }
  return Math.floor(due + 1e-9) + 1;
}

/**
 * Sends on the schedule until `stop` holds for an answer, `max` requests went out or the
 * time cap passed; then waits for every request still out. `send` must not reject (an
 * answer carries its own failure); a rejection is our fault and is thrown.
 */
export async function ramp<T>(send: () => Promise<T>, stop: (answer: T) => boolean, o: RampOptions): Promise<RampOutcome<T>> {
  const started = performance.now();
  const answers: Array<RampAnswer<T>> = [];
  const pending: Array<Promise<void>> = [];
  let stopped = false;
  let inFlight = 0;
  let peakInFlight = 0;
  let reachedRate = 0;
  let lastAnswerAt = started;
  let failure: { err: unknown } | undefined;
  while (!stopped && pending.length < o.max) {
    const t = performance.now() - started;
    if (t >= o.timeCapMs) break;
    const rate = stepRate(o, Math.floor(t / o.stepMs));
    // Catch up with the schedule after a late timer: the rate is what was offered, not what the event loop managed.
    const due = Math.min(o.max, dueBy(o, t));
    while (!stopped && pending.length < due) {
      const index = pending.length;
      reachedRate = rate;
      inFlight++;
      peakInFlight = Math.max(peakInFlight, inFlight);
      pending.push(send().then((value) => {
        inFlight--;
        lastAnswerAt = performance.now();
        answers.push({ value, rate, index });
        if (stop(value)) stopped = true;
      }).catch((err: unknown) => {
        // Held until every request is back: a rejection left pending would crash the worker first.
        failure ??= { err };
        stopped = true;
      }));
    }
    if (pending.length >= o.max) break;
    await new Promise((r) => setTimeout(r, Math.max(2, Math.min(50, 1000 / rate))));
  }
  await Promise.all(pending);
  if (failure) throw failure.err;
  answers.sort((a, b) => a.index - b.index);
  return { sent: pending.length, elapsedMs: lastAnswerAt - started, reachedRate, peakInFlight, answers };
}

/** "at a rate rising to 80 requests per second, at most 78 in flight" */
export function describeRamp(r: Pick<RampOutcome<unknown>, 'reachedRate' | 'peakInFlight'>): string {
  return `the offered rate rising to ${+r.reachedRate.toFixed(1)} requests per second, at most ${r.peakInFlight} in flight`;
}
