// The open-loop rising schedule of the rate-limit probe and the error-429 cells
// (harness/rate-ramp.ts): how many requests are due when, and that requests go out on
// the schedule whatever the answers' latency (counts only, never wall-clock totals).
import { describe, expect, it } from 'vitest';
import { dueBy, ramp, stepRate, type RampOptions } from '../../harness/rate-ramp.ts';

const O: RampOptions = { max: 1000, timeCapMs: 60_000, startRate: 10, factor: 2, stepMs: 1000, ceilingRate: 50 };

describe('the schedule', () => {
  it('doubles the rate each step up to the ceiling', () => {
    expect([0, 1, 2, 3, 4].map((k) => stepRate(O, k))).toEqual([10, 20, 40, 50, 50]);
  });
  it('has the first request due at once and the rest at the offered rate', () => {
    expect(dueBy(O, 0)).toBe(1);
    expect(dueBy(O, 999)).toBe(10);
    expect(dueBy(O, 1000)).toBe(11);
    expect(dueBy(O, 2000)).toBe(31);
    expect(dueBy(O, 3000)).toBe(71);
    expect(dueBy(O, 4000)).toBe(121);
  });
});

describe('ramp', () => {
  // Steps of 50 ms: 200, 400, 800 per second; answers take 300 ms, longer than any step.
  const fast: RampOptions = { max: 60, timeCapMs: 10_000, startRate: 200, factor: 2, stepMs: 50, ceilingRate: 800 };
  const slowAnswer = (n: number) => new Promise<number>((r) => setTimeout(() => r(n), 300));

  it('sends without waiting for answers: the in-flight count follows from the latency', async () => {
    let n = 0;
    const r = await ramp(() => slowAnswer(n++), () => false, fast);
    expect(r.sent).toBe(60);
    expect(r.answers.map((a) => a.index)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    // No answer came before the first 300 ms, so everything due by then was out at once.
    expect(r.peakInFlight).toBeGreaterThan(20);
    expect(r.reachedRate).toBeGreaterThan(200);
  });

  it('stops sending at the first answer that ends it, and waits for those still out', async () => {
    let n = 0;
    const r = await ramp(() => Promise.resolve(n++), (v) => v === 4, { ...fast, startRate: 20, stepMs: 1000 });
    expect(r.answers.some((a) => a.value === 4)).toBe(true);
    expect(r.sent).toBe(r.answers.length);
    expect(r.sent).toBeLessThan(60);
  });

  it('stops at the time cap', async () => {
    let n = 0;
    const r = await ramp(() => Promise.resolve(n++), () => false, { ...fast, startRate: 1, factor: 1, timeCapMs: 100 });
    expect(r.sent).toBe(1);
  });
});

describe('a send that rejects (our fault, not the target\'s)', () => {
  it('stops the ramp and is thrown once every request is back', async () => {
    let n = 0;
    await expect(ramp(() => (n++ === 2 ? Promise.reject(new Error('boom')) : Promise.resolve(n)), () => false,
      { max: 50, timeCapMs: 10_000, startRate: 100, factor: 1, stepMs: 1000, ceilingRate: 100 })).rejects.toThrow('boom');
    expect(n).toBeLessThan(50);
  });
});
