// Stryker disable all: [not-api] banner
// An optional model of an inference server behind the reference, for rehearsing load
// runs against a target whose capacity is known: continuous batching with at most
// `maxBatch` sequences holding a slot, one prefill unit working through prompts in
// arrival order at `prefillTokensPerS` (the first token leaves when its prompt is
// done, so TTFT grows with the prompt and with the queue), and decode steps of
// `decodeStepMs + decodeStepPerSeqMs x batch` that give every decoding sequence one
// token. Token counts use the same tokenizer as the load harness (o200k_base).
// Prefill and decode overlap (as with chunked or disaggregated prefill), which keeps
// the capacity computable: see engineCapacity below and docs/REHEARSAL.md.

export interface EngineModelOptions {
  /** Sequences holding a slot (KV cache) at once: in prefill, waiting to decode or decoding. */
  maxBatch: number;
  /** Prompt tokens the prefill unit processes per second (one prompt at a time, in arrival order). */
  prefillTokensPerS: number;
  /** One decode step with one sequence in the batch, ms. */
  decodeStepMs: number;
  /** Added to a decode step per sequence in the batch, ms. */
  decodeStepPerSeqMs: number;
  /** cancelled-stream-keeps-slot (a defect): a cancelled job keeps its slot and decodes to its end for nobody. */
  keepsCancelled?: boolean;
}

export const DEFAULT_ENGINE_MODEL: EngineModelOptions = {
  maxBatch: 64,
  prefillTokensPerS: 10_000,
  decodeStepMs: 12,
  decodeStepPerSeqMs: 0.25,
};

/** Longest reply the model generates (tokens), whatever max_tokens asks. */
export const ENGINE_MAX_REPLY_TOKENS = 32_768;

/** Fills in defaults and checks the values: one line naming the bad one. */
export function resolveEngineModel(o: Partial<EngineModelOptions>): EngineModelOptions {
  const m = { ...DEFAULT_ENGINE_MODEL, ...Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) } as EngineModelOptions;
  if (!Number.isInteger(m.maxBatch) || m.maxBatch < 1) throw new Error(`engine.maxBatch must be an integer >= 1 (got ${m.maxBatch})`);
  if (!(m.prefillTokensPerS > 0) || !Number.isFinite(m.prefillTokensPerS)) throw new Error(`engine.prefillTokensPerS must be a number > 0 (got ${m.prefillTokensPerS})`);
  if (!(m.decodeStepMs >= 0) || !Number.isFinite(m.decodeStepMs)) throw new Error(`engine.decodeStepMs must be a number >= 0 (got ${m.decodeStepMs})`);
  if (!(m.decodeStepPerSeqMs >= 0) || !Number.isFinite(m.decodeStepPerSeqMs)) throw new Error(`engine.decodeStepPerSeqMs must be a number >= 0 (got ${m.decodeStepPerSeqMs})`);
  if (m.decodeStepMs + m.decodeStepPerSeqMs <= 0) throw new Error('engine: a decode step must take some time (decodeStepMs + decodeStepPerSeqMs > 0)');
  return m;
}

// --- the tokenizer ---------------------------------------------------------------------

export interface Tokenizer {
  encode(text: string): number[];
  decode(tokens: number[]): string;
}

/** o200k_base from gpt-tokenizer, loaded only when the model is on (about 0.2 s). */
export async function loadTokenizer(): Promise<Tokenizer> {
  const t = await import('gpt-tokenizer/encoding/o200k_base');
  // Special-token text in a prompt is plain text here, never a reason to fail the request.
  const plain = { disallowedSpecial: new Set<string>() };
  return { encode: (text) => t.encode(text, plain), decode: (tokens) => t.decode(tokens) };
}

// --- the scheduler -----------------------------------------------------------------------

/** One request's generation: `next()` resolves once another token exists (false when done or aborted). */
export interface EngineJob {
  /** Tokens produced so far. */
  readonly produced: number;
  readonly total: number;
  /** Resolves when `produced` reaches n (true), or the job ended without it (false). */
  until(n: number): Promise<boolean>;
}

/** Where the model reads the time and sets its timers (a test drives it with its own event queue). */
export interface EngineClock {
  now(): number;
  /** Calls fn at time `at` (ms on now()'s scale). */
  at(at: number, fn: () => void): unknown;
  cancel(timer: unknown): void;
}

const REAL_CLOCK: EngineClock = {
  now: () => performance.now(),
  at: (at, fn) => setTimeout(fn, Math.max(0, at - performance.now())),
  cancel: (t) => clearTimeout(t as NodeJS.Timeout),
};

interface Job extends EngineJob {
  promptTokens: number;
  produced: number;
  total: number;
  waiters: Array<{ n: number; resolve: (ok: boolean) => void }>;
  ended: boolean;
  holdsSlot: boolean;
  onToken?: (produced: number) => void;
}

export class EngineModel {
  private readonly waiting: Job[] = [];
  private readonly decoding = new Set<Job>();
  /** Joined after the current step started: they decode from the next step on. */
  private readonly joining: Job[] = [];
  private slotsUsed = 0;
  /** performance.now() ms when the prefill unit is free again (virtual time, so timer lateness does not lose capacity). */
  private prefillFreeAt = 0;
  private stepEndsAt: number | undefined;
  private stepBatch: Job[] = [];
  private stepTimer: unknown;
  private readonly timers = new Set<unknown>();
  /** Slots in service now, when a run-time change lowered them (reference/engine-changes.ts). */
  private slotCap: number | undefined;

  constructor(readonly opts: EngineModelOptions, private readonly clock: EngineClock = REAL_CLOCK) {}

  /** Counts for tests and the rehearsal doc: what is queued, in a slot, decoding. */
  stats(): { waiting: number; slotsUsed: number; decoding: number } {
    return { waiting: this.waiting.length, slotsUsed: this.slotsUsed, decoding: this.decoding.size + this.joining.length };
  }

  /** Serves with `n` slots from now on (undefined: maxBatch again); sequences holding a slot keep it. */
  setSlots(n: number | undefined): void {
    this.slotCap = n;
    this.admit(this.clock.now());
  }

  /** A request with `promptTokens` in and `outputTokens` (>= 1) out; ends early when `signal` aborts. */
  submit(promptTokens: number, outputTokens: number, signal: AbortSignal, onToken?: (produced: number) => void): EngineJob {
    const job: Job = {
      onToken,
      promptTokens,
      produced: 0,
      total: Math.max(1, outputTokens),
      waiters: [],
      ended: false,
      holdsSlot: false,
      until: (n) => {
        if (job.produced >= n) return Promise.resolve(true);
        if (job.ended) return Promise.resolve(false);
        return new Promise((resolve) => job.waiters.push({ n, resolve }));
      },
    };
    if (signal.aborted) {
      job.ended = true;
      return job;
    }
    signal.addEventListener('abort', () => (this.opts.keepsCancelled ? this.orphan(job) : this.end(job, this.clock.now())), { once: true });
    this.waiting.push(job);
    this.admit(this.clock.now());
    return job;
  }

  /** Stops every timer (server close); jobs in flight end as not done. */
  close(): void {
    for (const t of this.timers) this.clock.cancel(t);
    this.timers.clear();
    if (this.stepTimer !== undefined) this.clock.cancel(this.stepTimer);
    for (const j of [...this.waiting, ...this.decoding, ...this.joining, ...this.stepBatch]) this.end(j, this.clock.now());
  }

  /** Takes waiting jobs into free slots, at virtual time `at`, and books their prefill. */
  private admit(at: number): void {
    while (this.waiting.length > 0 && this.slotsUsed < (this.slotCap ?? this.opts.maxBatch)) {
      const job = this.waiting.shift()!;
      job.holdsSlot = true;
      this.slotsUsed++;
      const start = Math.max(at, this.prefillFreeAt);
      const done = start + (job.promptTokens * 1000) / this.opts.prefillTokensPerS;
      this.prefillFreeAt = done;
      this.later(done, () => this.prefilled(job, done));
    }
  }

  private later(at: number, fn: () => void): void {
    const t = this.clock.at(at, () => {
      this.timers.delete(t);
      fn();
    });
    this.timers.add(t);
  }

  /** The prompt is done: the first token leaves now; the rest are decoded. */
  private prefilled(job: Job, at: number): void {
    if (job.ended) return;
    this.produce(job);
    if (job.produced >= job.total) return this.end(job, at);
    this.joining.push(job);
    if (this.stepEndsAt === undefined) this.startStep(at);
  }

  private stepMs(batch: number): number {
    return this.opts.decodeStepMs + this.opts.decodeStepPerSeqMs * batch;
  }

  /** A decode step over every sequence decoding at `at`; the next starts where it ends. */
  private startStep(at: number): void {
    for (const j of this.joining.splice(0)) if (!j.ended) this.decoding.add(j);
    if (this.decoding.size === 0) {
      this.stepEndsAt = undefined;
      return;
    }
    this.stepBatch = [...this.decoding];
    const end = at + this.stepMs(this.stepBatch.length);
    this.stepEndsAt = end;
    this.stepTimer = this.clock.at(end, () => this.endStep(end));
  }

  private endStep(at: number): void {
    for (const j of this.stepBatch) {
      if (j.ended) continue;
      this.produce(j);
      if (j.produced >= j.total) this.end(j, at);
    }
    this.stepBatch = [];
    this.startStep(at);
  }

  private produce(job: Job): void {
    job.produced++;
    job.onToken?.(job.produced);
    const still: Job['waiters'] = [];
    for (const w of job.waiters) (job.produced >= w.n ? w.resolve(true) : still.push(w));
    job.waiters = still;
  }

  /** Its client is gone, but the job goes on: its waiters hear it ended, its slot stays taken. */
  private orphan(job: Job): void {
    for (const w of job.waiters) w.resolve(false);
    job.waiters = [];
  }

  /** Finished or aborted: frees the slot (the next waiting job gets it at `at`). */
  private end(job: Job, at: number): void {
    if (job.ended) return;
    job.ended = true;
    for (const w of job.waiters) w.resolve(job.produced >= w.n);
    job.waiters = [];
    this.decoding.delete(job);
    const i = this.waiting.indexOf(job);
    if (i >= 0) this.waiting.splice(i, 1);
    if (job.holdsSlot) {
      job.holdsSlot = false;
      this.slotsUsed--;
      this.admit(at);
    }
  }
}

// --- the capacity it has ------------------------------------------------------------------

export interface EngineWorkload {
  /** Prompt tokens per request (as the model counts them: the tokens of the messages' text). */
  promptTokens: number;
  /** Tokens generated per request (>= 1). */
  outputTokens: number;
}

export interface EngineCapacity {
  /** Highest evenly spaced arrival rate the model sustains with p95 TTFT within the SLO (0: not even one request alone). */
  rps: number;
  /** What bounds it: the prefill unit, the batch slots, or the SLO itself (a lone request's TTFT is above it). */
  bound: 'prefill' | 'batch' | 'ttft-slo';
  /** TTFT of a request that finds the engine idle: its prompt's prefill, ms. */
  prefillMs: number;
  /** The prefill unit alone: prefillTokensPerS / promptTokens, req/s. */
  prefillRps: number;
  /** The slots alone (Little's law, below), req/s. */
  batchRps: number;
}

/**
 * The capacity of the model under a TTFT p95 SLO, for evenly spaced arrivals.
 *
 * Derivation. A prompt of p tokens occupies the prefill unit S = p / P seconds, and the
 * first token leaves when it is done. Below the prefill unit's rate 1/S, evenly spaced
 * arrivals never queue (D/D/1), so TTFT = S for every request: the SLO holds iff
 * S <= SLO. At a rate above 1/S the queue grows without bound (request k waits
 * k (S - 1/rate)), so no p95 SLO holds for long: the prefill bound is 1/S.
 * The slots: a sequence holds one from admission to its last token, that is S, about
 * half a step waiting to join the batch, and (T - 1) steps of d(b) = d0 + d1 b,
 * with b the sequences decoding. By Little's law b = rate (T - 1/2) d(b), so
 * b = rate (T - 1/2) d0 / (1 - rate (T - 1/2) d1), and the slots hold while
 * rate S + b <= B; past that, requests wait for a slot and TTFT grows without bound.
 * The batch bound is the largest rate meeting that (found by bisection; a mean-value
 * estimate, which selftest/unit/engine-model.test.ts checks against the scheduler).
 * A finite step of D seconds lets a rate a little above the bound keep its p95 TTFT
 * within the SLO: by (SLO - S) / (0.95 D S) at most for the prefill bound, hence a
 * sweep's answer lies a few % above this figure when the SLO has slack.
 */
export function engineCapacity(m: EngineModelOptions, w: EngineWorkload, slo: { ttftP95Ms: number }): EngineCapacity {
  const s = w.promptTokens / m.prefillTokensPerS;
  const prefillRps = s > 0 ? 1 / s : Infinity;
  const t = Math.max(1, w.outputTokens);
  const decodeSteps = t > 1 ? t - 0.5 : 0;
  const d0 = m.decodeStepMs / 1000;
  const d1 = m.decodeStepPerSeqMs / 1000;
  const occupancy = (rate: number): number => {
    const k = rate * decodeSteps;
    if (k * d1 >= 1) return Infinity;
    return rate * s + (k * d0) / (1 - k * d1);
  };
  let lo = 0;
  let hi = 1;
  while (occupancy(hi) <= m.maxBatch && hi < 1e9) hi *= 2;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (occupancy(mid) <= m.maxBatch) lo = mid;
    else hi = mid;
  }
  const batchRps = lo;
  const prefillMs = s * 1000;
  if (prefillMs > slo.ttftP95Ms) return { rps: 0, bound: 'ttft-slo', prefillMs, prefillRps, batchRps };
  return prefillRps <= batchRps
    ? { rps: prefillRps, bound: 'prefill', prefillMs, prefillRps, batchRps }
    : { rps: batchRps, bound: 'batch', prefillMs, prefillRps, batchRps };
}
