// The reference's rehearsal engine model: its computed capacity, checked against its
// own scheduler on a virtual clock (5 % below it TTFT stays flat, 5 % above it grows);
// the scheduler on a fake clock (FIFO prefill, TTFT growing with the prompt and with
// the queue, the batch limit, decode steps growing with the batch, aborts freeing
// slots); and over HTTP: TTFT growing with the prompt as the model says, usage in
// o200k_base tokens, the default reference untouched. Cost: about 5 s (two in-process
// servers, 12 requests; the virtual-clock runs take about 1.5 s of CPU).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { request } from 'undici';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { EngineModel, engineCapacity, resolveEngineModel, type EngineClock, type EngineModelOptions } from '../../reference/engine-model.ts';
import { startReferenceServer, type ReferenceServer } from '../../reference/server.ts';
import { parseArgs } from '../../load/setup/options.ts';
import { referenceOptionsFor } from '../../load/setup/load-target.ts';

const M = (o: Partial<EngineModelOptions>): EngineModelOptions => resolveEngineModel(o);

describe('engineCapacity', () => {
  it('is the prefill unit\'s rate when prefill binds', () => {
    const c = engineCapacity(M({ prefillTokensPerS: 1000, maxBatch: 64, decodeStepMs: 5, decodeStepPerSeqMs: 0.1 }), { promptTokens: 100, outputTokens: 8 }, { ttftP95Ms: 250 });
    expect(c).toMatchObject({ bound: 'prefill', prefillMs: 100, prefillRps: 10 });
    expect(c.rps).toBe(10);
    expect(c.batchRps).toBeGreaterThan(10);
  });

  it('is the slots\' rate (Little\'s law) when the batch binds', () => {
    // 4 slots, prefill ~free, 100.5 steps of 10 ms held per sequence: 4 / 1.005 s = 3.98 req/s.
    const c = engineCapacity(M({ prefillTokensPerS: 1e9, maxBatch: 4, decodeStepMs: 10, decodeStepPerSeqMs: 0 }), { promptTokens: 10, outputTokens: 101 }, { ttftP95Ms: 1000 });
    expect(c.bound).toBe('batch');
    expect(c.rps).toBeCloseTo(4 / 1.005, 2);
  });

  it('a decode step that grows with the batch lowers the batch bound', () => {
    const flat = engineCapacity(M({ prefillTokensPerS: 1e9, maxBatch: 32, decodeStepMs: 10, decodeStepPerSeqMs: 0 }), { promptTokens: 10, outputTokens: 101 }, { ttftP95Ms: 1000 });
    const growing = engineCapacity(M({ prefillTokensPerS: 1e9, maxBatch: 32, decodeStepMs: 10, decodeStepPerSeqMs: 1 }), { promptTokens: 10, outputTokens: 101 }, { ttftP95Ms: 1000 });
    // b = 32 at the bound: steps of 42 ms instead of 10.
    expect(growing.rps).toBeCloseTo(flat.rps * (10 / 42), 1);
  });

  it('is 0 when a lone request\'s TTFT is above the SLO', () => {
    const c = engineCapacity(M({ prefillTokensPerS: 1000 }), { promptTokens: 500, outputTokens: 8 }, { ttftP95Ms: 400 });
    expect(c).toMatchObject({ rps: 0, bound: 'ttft-slo', prefillMs: 500 });
  });

  it('refuses impossible parameters with one line naming the value', () => {
    expect(() => resolveEngineModel({ maxBatch: 0 })).toThrow(/engine.maxBatch must be an integer >= 1 \(got 0\)/);
    expect(() => resolveEngineModel({ prefillTokensPerS: 0 })).toThrow(/prefillTokensPerS/);
    expect(() => resolveEngineModel({ decodeStepMs: 0, decodeStepPerSeqMs: 0 })).toThrow(/decode step must take some time/);
  });
});

describe('the scheduler (fake clock)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Submits jobs at t = 0 and records when each token appears. */
  async function trace(model: EngineModelOptions, jobs: Array<{ prompt: number; out: number }>, abortAfterMs?: Array<number | undefined>): Promise<number[][]> {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const engine = new EngineModel(model);
    const t0 = performance.now();
    const times: number[][] = jobs.map(() => []);
    const running = jobs.map(async (j, i) => {
      const ac = new AbortController();
      const after = abortAfterMs?.[i];
      if (after !== undefined) setTimeout(() => ac.abort(), after);
      const job = engine.submit(j.prompt, j.out, ac.signal);
      for (let k = 1; k <= job.total; k++) {
        if (!(await job.until(k))) return;
        times[i]!.push(Math.round(performance.now() - t0));
      }
    });
    await vi.runAllTimersAsync();
    await Promise.all(running);
    return times;
  }

  it('prefills one prompt at a time in arrival order: TTFT grows with the prompt and with the queue', async () => {
    const t = await trace(M({ prefillTokensPerS: 1000, decodeStepMs: 10, decodeStepPerSeqMs: 0 }), [{ prompt: 100, out: 1 }, { prompt: 400, out: 1 }, { prompt: 100, out: 1 }]);
    expect(t.map((x) => x[0])).toEqual([100, 500, 600]);
  });

  it('decodes one token per step for every sequence in the batch, the step growing with the batch', async () => {
    const alone = await trace(M({ prefillTokensPerS: 1e6, decodeStepMs: 10, decodeStepPerSeqMs: 5 }), [{ prompt: 1, out: 4 }]);
    expect(alone[0]).toEqual([0, 15, 30, 45]);
    const two = await trace(M({ prefillTokensPerS: 1e6, decodeStepMs: 10, decodeStepPerSeqMs: 5 }), [{ prompt: 1, out: 4 }, { prompt: 1, out: 4 }]);
    // The second prompt is done just after the first step started: it joins at the next
    // step boundary, and the steps with both take 20 ms instead of 15.
    expect(two[0]).toEqual([0, 15, 35, 55]);
    expect(two[1]).toEqual([0, 35, 55, 70]);
  });

  it('holds at most maxBatch sequences: a later request waits for a slot', async () => {
    const t = await trace(M({ maxBatch: 1, prefillTokensPerS: 1000, decodeStepMs: 10, decodeStepPerSeqMs: 0 }), [{ prompt: 10, out: 3 }, { prompt: 10, out: 1 }]);
    expect(t[0]).toEqual([10, 20, 30]);
    // Slot free at 30, then its own 10 ms prefill.
    expect(t[1]).toEqual([40]);
  });

  it('an aborted request frees its slot', async () => {
    const t = await trace(M({ maxBatch: 1, prefillTokensPerS: 1000, decodeStepMs: 10, decodeStepPerSeqMs: 0 }), [{ prompt: 10, out: 100 }, { prompt: 10, out: 1 }], [25, undefined]);
    expect(t[0]).toEqual([10, 20]);
    expect(t[1]).toEqual([35]);
  });

  it('cancelled-stream-keeps-slot: an aborted request keeps its slot until its generation would have ended', async () => {
    const t = await trace(M({ maxBatch: 1, prefillTokensPerS: 1000, decodeStepMs: 10, decodeStepPerSeqMs: 0, keepsCancelled: true }), [{ prompt: 10, out: 100 }, { prompt: 10, out: 1 }], [25, undefined]);
    expect(t[0]).toEqual([10, 20]);
    // The slot frees at 10 + 99 steps of 10 ms, then its own 10 ms prefill.
    expect(t[1]).toEqual([1010]);
  });
});

/** A virtual clock: timers run in time order, instantly (what the model's own timers would do, without the wait). */
class SimClock implements EngineClock {
  t = 0;
  private q: Array<{ at: number; id: number; fn: () => void; dead?: boolean }> = [];
  private n = 0;
  now(): number { return this.t; }
  at(at: number, fn: () => void): unknown {
    const e = { at: Math.max(at, this.t), id: this.n++, fn };
    let i = this.q.length;
    while (i > 0 && this.q[i - 1]!.at > e.at) i--;
    this.q.splice(i, 0, e);
    return e;
  }
  cancel(e: unknown): void { (e as { dead?: boolean }).dead = true; }
  run(): void {
    while (this.q.length) {
      const e = this.q.shift()!;
      if (e.dead) continue;
      this.t = e.at;
      e.fn();
    }
  }
}

/** p95 TTFT of the last quarter of 90 s of evenly spaced arrivals at `rate`, on the virtual clock. */
function simulatedTtftP95(m: EngineModelOptions, rate: number, promptTokens: number, outputTokens: number): number {
  const clock = new SimClock();
  const engine = new EngineModel(m, clock);
  const n = Math.round(rate * 90);
  const ttft: number[] = [];
  const arrive = (i: number) => {
    const t = clock.now();
    engine.submit(promptTokens, outputTokens, new AbortController().signal, (k) => { if (k === 1) ttft.push(clock.now() - t); });
    if (i + 1 < n) clock.at(((i + 1) * 1000) / rate, () => arrive(i + 1));
  };
  clock.at(0, () => arrive(0));
  clock.run();
  const last = ttft.slice(-Math.floor(n / 4)).sort((a, b) => a - b);
  return last[Math.floor(last.length * 0.95)]!;
}

describe('the computed capacity against the scheduler itself (virtual clock)', () => {
  // 5 % either side of the computed figure: TTFT stays at the prefill below it and grows without bound above.
  it.each([
    ['batch-bound, decode step growing with the batch', M({ maxBatch: 8, prefillTokensPerS: 10_000, decodeStepMs: 12, decodeStepPerSeqMs: 0.25 }), 1000, 64, 'batch'],
    ['batch-bound, flat decode step, short replies', M({ maxBatch: 4, prefillTokensPerS: 1e7, decodeStepMs: 5, decodeStepPerSeqMs: 0 }), 10, 20, 'batch'],
    ['prefill-bound', M({ maxBatch: 64, prefillTokensPerS: 10_000, decodeStepMs: 12, decodeStepPerSeqMs: 0.25 }), 1000, 64, 'prefill'],
  ] as const)('%s', (_name, m, p, t, bound) => {
    const cap = engineCapacity(m, { promptTokens: p, outputTokens: t }, { ttftP95Ms: 60_000 });
    expect(cap.bound).toBe(bound);
    const below = simulatedTtftP95(m, cap.rps * 0.95, p, t);
    const above = simulatedTtftP95(m, cap.rps * 1.05, p, t);
    expect(below).toBeLessThanOrEqual(cap.prefillMs + 1);
    expect(above).toBeGreaterThan(cap.prefillMs + 2000);
  });
});

describe('the reference with the engine model on (HTTP)', () => {
  async function stream(ref: ReferenceServer, content: string, maxTokens: number): Promise<{ ttftMs: number; chunks: number; usage: { prompt_tokens: number; completion_tokens: number }; text: string }> {
    const t0 = performance.now();
    const res = await request(`${ref.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ref.keys.main}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc', stream: true, stream_options: { include_usage: true }, max_tokens: maxTokens, messages: [{ role: 'user', content }] }),
    });
    let buf = '';
    let ttftMs = -1;
    for await (const piece of res.body) {
      buf += piece.toString();
      if (ttftMs < 0 && buf.includes('"content":"') && /"content":"[^"]/.test(buf)) ttftMs = performance.now() - t0;
    }
    const events = buf.split('\n\n').filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]').map((e) => JSON.parse(e.slice(6)));
    const contents = events.flatMap((e) => e.choices.map((c: { delta: { content?: string } }) => c.delta.content ?? '')).filter((c: string) => c !== '');
    return { ttftMs, chunks: contents.length, usage: events[events.length - 1].usage, text: contents.join('') };
  }

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

  it('TTFT grows with the prompt as the model says; usage counts o200k_base tokens', async () => {
    const ref = await startReferenceServer({ engine: { prefillTokensPerS: 2000, decodeStepMs: 2, decodeStepPerSeqMs: 0 } });
    try {
      const short = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
      const long = Array.from({ length: 400 }, (_, i) => `w${i}`).join(' ');
      const [pShort, pLong] = [encode(short).length, encode(long).length];
      const ttft: Record<string, number[]> = { short: [], long: [] };
      // One at a time, alternating: an idle engine, so TTFT is the prompt's prefill alone.
      for (let i = 0; i < 5; i++) {
        for (const [name, content, tokens] of [['short', short, pShort], ['long', long, pLong]] as const) {
          const r = await stream(ref, content, 6);
          expect(r.usage.prompt_tokens).toBe(tokens);
          expect(r.usage.completion_tokens).toBe(6);
          expect(r.chunks).toBe(6);
          expect(encode(r.text).length).toBe(6);
          ttft[name]!.push(r.ttftMs);
        }
      }
      const expectedGrowth = ((pLong - pShort) / 2000) * 1000;
      const growth = median(ttft.long!) - median(ttft.short!);
      expect(median(ttft.short!)).toBeGreaterThanOrEqual((pShort / 2000) * 1000 - 1);
      expect(growth, `TTFT ${median(ttft.short!)} -> ${median(ttft.long!)} ms`).toBeGreaterThan(0.8 * expectedGrowth);
      expect(growth, `TTFT ${median(ttft.short!)} -> ${median(ttft.long!)} ms`).toBeLessThan(1.25 * expectedGrowth);
    } finally {
      await ref.close();
    }
  });

  it('the load CLI\'s --ref-engine options reach the reference; off by default', () => {
    const on = referenceOptionsFor(parseArgs(['stream', '--ref-engine', '--ref-max-batch', '8', '--ref-prefill-tps', '500', '--ref-decode-step-ms', '20', '--ref-decode-step-per-seq-ms', '1.5'], {}).options);
    expect(on.engine).toEqual({ maxBatch: 8, prefillTokensPerS: 500, decodeStepMs: 20, decodeStepPerSeqMs: 1.5 });
    expect(referenceOptionsFor(parseArgs(['stream'], {}).options).engine).toBeUndefined();
  });

  it('without the option the reference counts words and uses its fixed delays, as before', async () => {
    const ref = await startReferenceServer({ replyWords: 5 });
    try {
      const r = await stream(ref, 'one two three', 100);
      expect(r.usage).toMatchObject({ prompt_tokens: 3 + 3, completion_tokens: 5 });
      expect(r.chunks).toBe(5);
    } finally {
      await ref.close();
    }
  });
});
