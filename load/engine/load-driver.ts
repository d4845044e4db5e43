// The streaming (and plain-request) load driver: sends lean requests on an undici
// Pool either open-loop (each request at its scheduled time, whatever the target is
// doing: constant, Poisson, gamma or trace arrivals) or closed-loop (a fixed number of requests in
// flight, each one sent when the previous finished). One timer drives the schedule
// and one sweeps time limits; requests own no timers or promises, which is what lets
// one core hold thousands of streams.
import { createRequire } from 'node:module';
import { Pool, type Dispatcher } from 'undici';
import { arrivals, type ArrivalKind, type ArrivalOptions } from './arrivals.ts';
import { send, type LeanCall, type LeanRequest, type Outcome } from './lean-client.ts';
import type { StopToken } from '../setup/stop.ts';

export type DriveMode =
  | { kind: 'rate'; rate: number; arrival: ArrivalKind; seed: number; arrivalOptions?: ArrivalOptions }
  | { kind: 'concurrency'; concurrency: number; rampUpMs: number };

export interface DrivePlan {
  mode: DriveMode;
  durationMs: number;
  maxRequests?: number;
  /** Open loop: arrivals while this many are in flight (or waiting for a slot) are not sent (and counted). */
  maxInFlight: number;
  /** Open loop with a client cap (vLLM's --max-concurrency): arrivals beyond it wait in the client's queue for a slot. */
  maxConcurrency?: number;
  /** With maxConcurrency: how long each request waited in the client's queue (0 when a slot was free). */
  onQueued?(waitMs: number): void;
  timeoutMs: number;
  /** Builds request number `seq`, due at `intendedAt` (performance.now() ms). */
  makeRequest(seq: number, intendedAt: number): LeanRequest;
  onSent(req: LeanRequest, lagMs: number): void;
  onNotSent(intendedAt: number): void;
  onOutcome(o: Outcome): void;
}

export interface DriveResult {
  startedAt: number;
  sendingEndedAt: number;
  endedAt: number;
  sent: number;
  /** Requests still in flight when the drain time ran out (stopped runs only). */
  abortedInFlight: number;
  stoppedEarly: boolean;
  peakInFlight: number;
}

export function createPool(origin: string, connections: number, timeoutMs: number): Pool {
  return new (IdleStackPool ?? Pool)(origin, {
    connections,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 60_000,
    // The driver's sweep enforces the whole-request limit; these are backstops.
    headersTimeout: timeoutMs + 2_000,
    bodyTimeout: timeoutMs + 2_000,
    connect: { timeout: Math.min(10_000, timeoutMs) },
  });
}

// undici's Pool finds a free connection by walking all of them, twice per request
// (Pool's kGetDispatcher: once to dispatch, once more to see whether one is still free,
// which also opens a new connection whenever none is): with thousands of streams open,
// nearly all busy, every request walks thousands of clients. IdleStackPool is the same
// Pool (draining, closing, errors all undici's) with one change: a connection that
// emits 'drain' is pushed on a stack, and a request takes the top one that is still
// free, or opens a connection if the limit allows, O(1). When every connection is busy
// the request goes on undici's own pool queue, as Pool's dispatch does, without the
// walk. That is the common case in a closed loop, not a corner: with pipelining 1 a
// client frees its connection on a setImmediate after the response ends, so the next
// request of the loop arrives just before it (measured at 10,000 streams: 35,964 of
// 50,939 requests, each walking 10,000 clients, before this). It reaches undici's
// internal symbols; if a future undici moves them, plain Pool is used and nothing
// else changes.
const IdleStackPool = ((): typeof Pool | undefined => {
  const require = createRequire(import.meta.url);
  let base: Record<string, unknown>;
  let core: Record<string, unknown>;
  try {
    base = require('undici/lib/dispatcher/pool-base.js');
    core = require('undici/lib/core/symbols.js');
  } catch {
    return undefined;
  }
  const proto = Pool.prototype as unknown as Record<symbol, unknown>;
  // Pool's own fields (symbols private to pool.js), found by name on an unused instance.
  const probe = new Pool('http://127.0.0.1:9');
  const own = (name: string) => Object.getOwnPropertySymbols(probe).find((sym) => sym.description === name);
  const found = [base.kAddClient, base.kNeedDrain, base.kClients, core.kDispatch, own('connections'), own('factory'), own('url'), own('options'), own('queue'), own('queued')];
  void probe.close();
  if (found.some((sym) => typeof sym !== 'symbol')) return undefined;
  const [ADD, NEED_DRAIN, CLIENTS, DISPATCH, CONNECTIONS, FACTORY, URL_, OPTIONS, QUEUE, QUEUED] = found as symbol[];
  if (typeof proto[ADD!] !== 'function' || typeof proto[DISPATCH!] !== 'function') return undefined;
  type Client = Dispatcher & { closed?: boolean; destroyed?: boolean } & Record<symbol, unknown>;
  class StackPool extends Pool {
    private readonly idle: Client[] = [];
    private readonly gone = new WeakSet<Client>();
    [ADD!](client: Client): unknown {
      const r = (proto[ADD!] as (c: Client) => unknown).call(this, client);
      client.on('drain', () => this.idle.push(client));
      // undici drops a client whose connection failed from the pool without closing it: never reuse it.
      client.on('connectionError', () => this.gone.add(client));
      return r;
    }
    [DISPATCH!](opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      const self = this as unknown as Record<symbol, unknown>;
      let client: Client | undefined;
      const idle = this.idle;
      while (idle.length > 0) {
        const c = idle.pop()!;
        if (!c[NEED_DRAIN!] && !c.closed && !c.destroyed && !this.gone.has(c)) {
          client = c;
          break;
        }
      }
      if (!client) {
        const max = self[CONNECTIONS!] as number | null;
        if (max && (self[CLIENTS!] as Client[]).length >= max) {
          // All busy: queued exactly as Pool's own dispatch queues it (pool-base.js);
          // the next connection to drain takes it (PoolBase's drain handler).
          (self[QUEUE!] as { push(item: unknown): void }).push({ opts, handler });
          self[QUEUED!] = (self[QUEUED!] as number) + 1;
          self[NEED_DRAIN!] = true;
          return false;
        }
        client = (self[FACTORY!] as (url: unknown, options: unknown) => Client)(self[URL_!], self[OPTIONS!]);
        (self[ADD!] as (c: Client) => unknown).call(this, client);
      }
      if (!client.dispatch(opts, handler)) client[NEED_DRAIN!] = true;
      return true;
    }
  }
  return StackPool;
})();

export class Driver {
  private readonly inFlight = new Set<LeanCall>();
  private seq = 0;
  private sending = false;
  private peak = 0;
  private onIdle: (() => void) | undefined;
  /** Intended times of arrivals waiting for a slot under maxConcurrency, oldest first. */
  private readonly queue: number[] = [];

  constructor(private readonly pool: Pool, private readonly plan: DrivePlan, private readonly stop: StopToken) {}

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /**
   * Sends for the planned duration (or count), then waits for the requests in flight:
   * up to their time limit normally, up to `drainMs` once the stop token fired; the
   * rest are aborted and reported as such.
   */
  async run(drainMs: number): Promise<DriveResult> {
    const { plan } = this;
    const startedAt = performance.now();
    // Time limits are coarse (seconds): a sweep four times a second is plenty and
    // keeps walking thousands of streams off the hot path.
    const sweep = setInterval(() => this.expire(), 250);
    this.sending = true;
    let sendingEndedAt = startedAt;
    try {
      await new Promise<void>((resolve) => {
        const finish = () => {
          if (!this.sending) return;
          this.sending = false;
          sendingEndedAt = performance.now();
          clearTimeout(endTimer);
          this.stop.off(finish);
          resolve();
        };
        const endTimer = setTimeout(finish, plan.durationMs);
        this.stop.on(finish);
        if (plan.mode.kind === 'rate') this.openLoop(startedAt, plan.mode, finish);
        else this.closedLoop(startedAt, plan.mode, finish);
      });
      await this.drain(this.stop.stopped ? drainMs : plan.timeoutMs + 1_000, drainMs);
    } finally {
      clearInterval(sweep);
    }
    // Arrivals still waiting for a slot never went out: counted as not sent.
    for (const at of this.queue.splice(0)) this.plan.onNotSent(at);
    const abortedInFlight = this.inFlight.size;
    for (const call of [...this.inFlight]) call.cancel('aborted');
    return {
      startedAt, sendingEndedAt, endedAt: performance.now(), sent: this.seq,
      abortedInFlight, stoppedEarly: this.stop.stopped, peakInFlight: this.peak,
    };
  }

  private countReached(): boolean {
    return this.plan.maxRequests !== undefined && this.seq + this.queue.length >= this.plan.maxRequests;
  }

  private openLoop(startedAt: number, mode: Extract<DriveMode, { kind: 'rate' }>, finish: () => void): void {
    const schedule = arrivals(mode.arrival, mode.rate, this.plan.durationMs, mode.seed, mode.arrivalOptions);
    let next = schedule.next();
    const tick = () => {
      if (!this.sending) return;
      const now = performance.now();
      // Send everything that is due, each with its own intended time: a late timer
      // sends a small batch, and the lateness is measured, not lost.
      while (!next.done && startedAt + next.value <= now && !this.countReached()) {
        const intendedAt = startedAt + next.value;
        const cap = this.plan.maxConcurrency;
        if (this.inFlight.size + this.queue.length >= this.plan.maxInFlight) this.plan.onNotSent(intendedAt);
        else if (cap !== undefined && (this.inFlight.size >= cap || this.queue.length > 0)) this.queue.push(intendedAt);
        else {
          if (cap !== undefined) this.plan.onQueued?.(0);
          this.dispatch(intendedAt, now);
        }
        next = schedule.next();
      }
      if (next.done || this.countReached()) return finish();
      setTimeout(tick, Math.max(0, startedAt + next.value - performance.now()));
    };
    tick();
  }

  private closedLoop(startedAt: number, mode: Extract<DriveMode, { kind: 'concurrency' }>, finish: () => void): void {
    const n = mode.concurrency;
    const dueAt = (i: number) => startedAt + (n <= 1 ? 0 : (i * mode.rampUpMs) / n);
    const worker = () => {
      if (!this.sending) return;
      if (this.countReached()) return finish();
      const now = performance.now();
      this.dispatch(now, now, worker);
    };
    // Stagger the first requests over the ramp-up so connection setup does not land
    // in one burst and the streams do not all tick in phase.
    let started = 0;
    const startDue = () => {
      const now = performance.now();
      while (started < n && this.sending && dueAt(started) <= now) {
        started++;
        worker();
      }
      if (started < n && this.sending) setTimeout(startDue, Math.max(1, dueAt(started) - now));
    };
    startDue();
  }

  private dispatch(intendedAt: number, now: number, then?: () => void, queueMs?: number): void {
    const req = this.plan.makeRequest(this.seq++, intendedAt);
    this.plan.onSent(req, now - intendedAt);
    const call = send(this.pool, req, (o) => {
      this.inFlight.delete(call);
      this.plan.onOutcome(o);
      // A freed slot goes to the oldest queued arrival (from a fresh tick, not inside undici's callback).
      if (this.queue.length > 0 && !this.stop.stopped) setImmediate(() => this.dequeue());
      else if (this.inFlight.size === 0) this.onIdle?.();
      // Closed loop: the next request goes out from a fresh tick, not inside undici's callback.
      if (then) setImmediate(then);
    });
    call.deadline = call.outcome.sentAt + this.plan.timeoutMs;
    if (queueMs !== undefined) call.outcome.queueMs = queueMs;
    this.inFlight.add(call);
    if (this.inFlight.size > this.peak) this.peak = this.inFlight.size;
  }

  /** Sends the oldest queued arrival; its latency runs from when it left the client's queue, the wait is reported apart. */
  private dequeue(): void {
    const at = this.queue.shift();
    if (at === undefined) return;
    if (this.stop.stopped) {
      this.plan.onNotSent(at);
      return;
    }
    const now = performance.now();
    this.plan.onQueued?.(now - at);
    this.dispatch(now, now, undefined, now - at);
  }

  private expire(): void {
    const now = performance.now();
    for (const call of this.inFlight) if (now > call.deadline) call.cancel('timeout');
  }

  /** Resolves when nothing is in flight or `limitMs` passed; a stop shortens the wait to `drainMs`. */
  private drain(limitMs: number, drainMs: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        this.onIdle = undefined;
        this.stop.off(onStop);
        resolve();
      };
      const onStop = () => {
        clearTimeout(timer);
        timer = setTimeout(done, drainMs);
      };
      if (this.inFlight.size === 0 && this.queue.length === 0) return done();
      timer = setTimeout(done, limitMs);
      this.stop.on(onStop);
      this.onIdle = done;
    });
  }
}
