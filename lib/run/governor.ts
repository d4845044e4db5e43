// The run-wide pace of requests to the target. A target with a tight rate limit
// answers 429 when the run is faster than its budget; every request re-trying on its
// own makes concurrent tests collide again and again. Instead every request that is
// not itself probing the limit asks this governor for a turn first, and tells it the
// answer's status and rate-limit headers afterwards. The governor:
// - stops all turns until the wait a 429 advises (lib/spec/retry-hints.ts, the one reader);
// - halves the number of requests in flight on a 429 (once per throttling episode),
//   and, once one at a time still meets 429s, spaces the starts further apart (at
//   least the wait the 429 advised: a token bucket's refill interval);
// - gives a request that met a 429 its next turn before any request not yet sent: a
//   retry at the back of the queue can lose the race for the next token again and
//   again (20 times in a row, seen against a 6-per-second bucket) and be throttled out;
// - stops turns until x-ratelimit-reset-* when x-ratelimit-remaining-* says the
//   budget left is used up by the requests already out, and raises the pace again
//   while answers come back without 429 or the remaining budget says there is room.
// A request waits at most its caller's `maxWaitMs`, then goes anyway (`forced`): the
// governor paces, it never stalls a run.
//
// One governor per run: the runner process holds it (runner/governor-server.ts) and
// the test workers ask it over a Unix socket (GovernorConnection below); a process
// without one (unit tests, benches) uses a governor of its own.
import { AsyncLocalStorage } from 'node:async_hooks';
import { connect, type Socket } from 'node:net';
import { lowerCaseHeaders, parseResetDuration, readRetryHints, MAX_HONOURED_WAIT_MS } from '../spec/retry-hints.ts';

/** What the governor reads of an answer: the status (undefined: no answer) and the rate-limit headers. */
export interface Outcome { status?: number; headers: Record<string, string | undefined> }

export interface Lease {
  /** How long the request waited for its turn. */
  waitedMs: number;
  /** Its turn came because `maxWaitMs` ran out, not because the pace allowed it. */
  forced: boolean;
  /** Reports the answer (once); frees the turn. */
  release(outcome: Outcome): void;
}

/** What the back-off loop (lib/run/back-off.ts) and the clients need of a governor. */
export interface Gate {
  /** A turn; `retry`: the request already met a 429 and goes ahead of those not yet sent. */
  acquire(maxWaitMs: number, retry?: boolean): Promise<Lease>;
  /**
   * Holds every new turn until `release()` (or `maxMs`): the rate-limit probe's recovery
   * request must meet the budget the target advertised, not one the rest of the run used up.
   */
  hold(maxMs: number): Promise<() => void>;
  /**
   * Runs `fn` with none of the run's other governed requests in flight: new turns outside it
   * wait, the ones out drain first (at most `drainMs`; `quiet` false when some were still out),
   * and only requests `fn` sends get turns until it ends (or `maxMs` passed). What a probe
   * learns of the target "alone" (SVC-9's lone replies, SVC-10's idle TTFT) must not meet
   * the run's own traffic. A request that waited its longest still goes (never stalls a run).
   */
  quiet<T>(drainMs: number, maxMs: number, fn: () => Promise<T>): Promise<{ value: T; quiet: boolean }>;
  /**
   * For a probe whose requests the governor does not pace (the rate-limit ramps, sent with
   * retries off): waits while a quiet section is asked for or open, then counts as traffic out
   * until the returned release, so a section drains it first. Its requests are never held.
   * Past `maxWaitMs` it starts anyway, as a paced request that waited its longest does.
   */
  occupy(maxWaitMs?: number): Promise<() => void>;
}

/** The quiet section the current async call runs in (its requests are the ones let through). */
const inSection = new AsyncLocalStorage<number>();

export interface GovernorStats {
  /** Answers to governed requests that were 429. */
  answered429: number;
  /** Turns given. */
  turns: number;
  /** Wall time during which at least one request waited for its turn to be paced, ms. */
  heldMs: number;
  /** Wall time during which requests waited for a quiet section (Gate.quiet) to drain or end, ms. */
  quietMs: number;
  /** Sum over requests of the time each waited, ms. */
  waitedMs: number;
  /** Turns given because a request had waited its longest. */
  forced: number;
  /** Fewest requests in flight the governor allowed. */
  lowestConcurrency: number;
  /** Widest spacing between starts it set, ms. */
  widestIntervalMs: number;
}

/** Most requests in flight at once while the target has not pushed back. */
export const MAX_CONCURRENCY = 64;
const MAX_INTERVAL_MS = 2_000;
/**
 * Answers without a 429 before the pace is raised, at least. Raised after every answer,
 * one in flight went back to two at once, and the spacing that fits a slow token bucket
 * was never reached: half the paced requests met a 429.
 */
const RAISE_AFTER = 4;

interface Waiter { since: number; deadline: number; retry: boolean; section?: number; grant: (forced: boolean) => void; timer?: NodeJS.Timeout }

/** A quiet section (Gate.quiet): waiting for the requests out to drain, then active. */
interface Section { id: number; drainMs: number; drainBy?: number; active: boolean; open: (quiet: boolean) => void; timer?: NodeJS.Timeout }

/** The pacing policy: one per run, in the process that holds it. */
export class Governor {
  private limit = MAX_CONCURRENCY;
  private intervalMs = 0;
  private inFlight = 0;
  private lastStart = -Infinity;
  private pausedUntil = 0;
  private holds = 0;
  private streak = 0;
  private episodeEnds = -Infinity;
  private noHintStreak = 0;
  private readonly queue: Waiter[] = [];
  private timer?: NodeJS.Timeout;
  /** When waiting time was last added up (account()). */
  private markAt?: number;
  /** Quiet sections in the order asked; the first is the active one once it is active. */
  private readonly sections: Section[] = [];
  private nextSection = 0;
  /** Unpaced probes under way (occupy()), and those waiting for the sections to end. */
  private occupied = 0;
  private readonly occupyQueue: Array<() => void> = [];
  readonly stats: GovernorStats = { answered429: 0, turns: 0, heldMs: 0, quietMs: 0, waitedMs: 0, forced: 0, lowestConcurrency: MAX_CONCURRENCY, widestIntervalMs: 0 };

  constructor(private readonly now: () => number = () => performance.now()) {}

  acquire(maxWaitMs: number, retry = false): Promise<Lease> {
    return this.acquireIn(inSection.getStore(), maxWaitMs, retry);
  }

  /** A turn for a request of quiet section `section` (undefined: of none); the runner's socket names it. */
  acquireIn(section: number | undefined, maxWaitMs: number, retry = false): Promise<Lease> {
    return new Promise((resolve) => {
      const since = this.now();
      const w: Waiter = {
        since, deadline: since + Math.max(0, maxWaitMs), retry, section,
        grant: (forced) => {
          const waitedMs = Math.round(this.now() - since);
          this.stats.waitedMs += waitedMs;
          if (forced) this.stats.forced++;
          let done = false;
          resolve({ waitedMs, forced, release: (o) => { if (!done) { done = true; this.release(o); } } });
        },
      };
      this.account();
      // Retries in the order they met their 429, all before the first request not yet sent.
      const firstFresh = retry ? this.queue.findIndex((q) => !q.retry) : -1;
      if (firstFresh === -1) this.queue.push(w);
      else this.queue.splice(firstFresh, 0, w);
      if (Number.isFinite(w.deadline)) w.timer = setTimeout(() => this.force(w), Math.max(0, maxWaitMs));
      this.pump();
    });
  }

  async hold(maxMs: number): Promise<() => void> {
    this.holds++;
    let released = false;
    const release = () => { if (released) return; released = true; clearTimeout(t); this.holds--; this.pump(); };
    const t = setTimeout(release, maxMs);
    return release;
  }

  async quiet<T>(drainMs: number, maxMs: number, fn: () => Promise<T>): Promise<{ value: T; quiet: boolean }> {
    const { id, quiet, close } = await this.openSection(drainMs, maxMs);
    try {
      return { value: await inSection.run(id, fn), quiet };
    } finally {
      close();
    }
  }

  /** Opens a quiet section once the requests out drained (or `drainMs` passed); `close` ends it (or `maxMs` after it opened). */
  openSection(drainMs: number, maxMs: number): Promise<{ id: number; quiet: boolean; close: () => void }> {
    return new Promise((resolve) => {
      const id = ++this.nextSection;
      let closed = false;
      const close = () => {
        if (closed) return;
        closed = true;
        clearTimeout(s.timer);
        const i = this.sections.indexOf(s);
        this.account();
        if (i !== -1) this.sections.splice(i, 1);
        this.pump();
      };
      const s: Section = {
        id, drainMs, active: false,
        open: (quiet) => {
          s.active = true;
          clearTimeout(s.timer);
          s.timer = setTimeout(close, Math.max(0, maxMs));
          s.timer.unref?.();
          resolve({ id, quiet, close });
        },
      };
      this.account();
      this.sections.push(s);
      this.pump();
    });
  }

  occupy(maxWaitMs = Infinity): Promise<() => void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const go = () => {
        clearTimeout(timer);
        this.occupied++;
        let done = false;
        resolve(() => { if (done) return; done = true; this.occupied--; this.pump(); });
      };
      this.occupyQueue.push(go);
      if (Number.isFinite(maxWaitMs)) {
        timer = setTimeout(() => {
          const i = this.occupyQueue.indexOf(go);
          if (i === -1) return;
          this.occupyQueue.splice(i, 1);
          go();
        }, Math.max(0, maxWaitMs));
        timer.unref?.();
      }
      this.pump();
    });
  }

  /** The answer to a governed request. */
  release(o: Outcome): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    const now = this.now();
    if (o.status === 429) this.on429(o.headers, now);
    else if (o.status !== undefined) this.onAnswer(o.headers, now);
    this.pump();
  }

  private on429(headers: Outcome['headers'], now: number): void {
    this.stats.answered429++;
    this.streak = 0;
    const advised = readRetryHints(headers).waitMs;
    // No hint: 1 s, doubling while 429s without a hint go on.
    const wait = advised !== undefined ? Math.min(advised, MAX_HONOURED_WAIT_MS) : Math.min(1000 * 2 ** this.noHintStreak++, MAX_HONOURED_WAIT_MS);
    if (advised !== undefined) this.noHintStreak = 0;
    this.pausedUntil = Math.max(this.pausedUntil, now + wait);
    // The 429s of one burst arrive together: slow down once per episode, not once per answer.
    if (now < this.episodeEnds) return;
    this.episodeEnds = this.pausedUntil;
    if (this.limit > 1) this.limit = Math.max(1, Math.floor(Math.min(this.limit, this.inFlight + 1) / 2));
    // One at a time still too fast: the starts must be at least the advised wait apart.
    else this.intervalMs = Math.min(MAX_INTERVAL_MS, Math.max(100, this.intervalMs * 2, advised ?? 0));
    this.stats.lowestConcurrency = Math.min(this.stats.lowestConcurrency, this.limit);
    this.stats.widestIntervalMs = Math.max(this.stats.widestIntervalMs, this.intervalMs);
  }

  private onAnswer(headers: Outcome['headers'], now: number): void {
    const h = lowerCaseHeaders(headers);
    const remaining = leastOf(h, 'x-ratelimit-remaining-', Number);
    if (remaining !== undefined) {
      if (remaining <= this.inFlight) {
        // The requests already out use up what is left: wait for the window to reset.
        const reset = leastOf(h, 'x-ratelimit-reset-', parseResetDuration);
        if (reset !== undefined) this.pausedUntil = Math.max(this.pausedUntil, now + Math.min(reset, MAX_HONOURED_WAIT_MS));
        else this.limit = Math.max(1, Math.min(this.limit, remaining + 1));
        return;
      }
      if (remaining >= 2 * this.limit + this.inFlight) {
        // The target says there is room: back to full pace.
        this.limit = MAX_CONCURRENCY;
        this.intervalMs = 0;
        return;
      }
    }
    // Additive increase: one more in flight per `limit` answers without a 429.
    if (++this.streak >= Math.max(this.limit, RAISE_AFTER)) {
      this.streak = 0;
      // The spacing shrinks by a tenth per round (at least RAISE_AFTER answers) without a
      // 429. Against doubling on a 429, a quarter per answer settled near 3 answers in 10
      // being 429s; this settles near 1 in 25 (17-30 of about 560 against the token bucket).
      if (this.intervalMs > 0) this.intervalMs = this.intervalMs < 20 ? 0 : Math.round(this.intervalMs * 0.9);
      else this.limit = Math.min(MAX_CONCURRENCY, this.limit + 1);
    }
  }

  private force(w: Waiter): void {
    const i = this.queue.indexOf(w);
    if (i === -1) return;
    this.account();
    this.queue.splice(i, 1);
    this.start(w, true);
  }

  private start(w: Waiter, forced: boolean): void {
    clearTimeout(w.timer);
    const now = this.now();
    this.inFlight++;
    this.lastStart = now;
    this.stats.turns++;
    w.grant(forced);
  }

  /** Adds the time since the last change during which requests waited: to quietMs while a section is asked or open, else heldMs. */
  private account(): void {
    const now = this.now();
    if (this.queue.length > 0 && this.markAt !== undefined) {
      const d = Math.max(0, now - this.markAt);
      if (this.sections.length > 0) this.stats.quietMs += d;
      else this.stats.heldMs += d;
    }
    this.markAt = now;
  }

  private pump(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    // The first section opens once nothing is out: while it drains, no new turn starts. Past
    // its drain time it opens with requests still out, and says so (never stalls a run).
    const head = this.sections[0];
    if (head && !head.active) {
      const now = this.now();
      if (head.drainBy === undefined) {
        head.drainBy = now + head.drainMs;
        head.timer = setTimeout(() => this.pump(), Math.max(0, head.drainMs));
        head.timer.unref?.();
      }
      const out = this.inFlight + this.occupied;
      if (out === 0 || now >= head.drainBy - 1) head.open(out === 0);
    }
    // An unpaced probe starts only with no section asked for or open.
    if (!head) for (let go = this.occupyQueue.shift(); go; go = this.occupyQueue.shift()) go();
    while (this.queue.length) {
      if (this.holds > 0 || this.inFlight >= this.limit) return;
      // Inside a section only its own requests; with one waiting to open, none.
      const i = head ? (head.active ? this.queue.findIndex((w) => w.section === head.id) : -1) : 0;
      if (i === -1) return;
      const now = this.now();
      const at = Math.max(this.pausedUntil, this.lastStart + this.intervalMs);
      if (now < at) {
        this.timer = setTimeout(() => this.pump(), Math.ceil(at - now));
        this.timer.unref?.();
        return;
      }
      this.account();
      this.start(this.queue.splice(i, 1)[0]!, false);
    }
  }
}

/** The least value of the headers starting with `prefix` that parse (x-ratelimit-remaining-requests / -tokens). */
function leastOf(h: Record<string, string>, prefix: string, parse: (raw: string) => number | undefined): number | undefined {
  let least: number | undefined;
  for (const [k, v] of Object.entries(h)) {
    if (!k.startsWith(prefix)) continue;
    const n = parse(v.trim());
    if (n !== undefined && Number.isFinite(n) && n >= 0 && (least === undefined || n < least)) least = n;
  }
  return least;
}

/** The headers the governor reads (only these cross to the coordinator: no body, no key). */
export function rateLimitHeadersOf(headers: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(lowerCaseHeaders(headers))) {
    if (k === 'retry-after' || k === 'retry-after-ms' || k.startsWith('x-ratelimit-')) out[k] = v;
  }
  return out;
}

// --- the workers' side: a connection to the runner's governor -----------------------

/** The runner's answer to one ask of a worker's line. */
interface Answer { waitedMs?: number; forced?: boolean; section?: number; quiet?: boolean }

/** Environment variable naming the runner's governor socket. */
export const GOVERNOR_SOCKET_ENV = 'CHATGATE_GOVERNOR_SOCKET';

/**
 * A worker's line to the runner's governor: newline-delimited JSON over a Unix socket.
 * acquire -> {op: 'acquire', id, maxWaitMs, retry}, answered {id, waitedMs, forced};
 * release -> {op: 'release', id, status, headers}; hold -> {op: 'hold', id, maxMs},
 * answered {id}; {op: 'unhold', id}; section -> {op: 'section', id, drainMs, maxMs}, answered
 * {id, section, quiet}, then acquire carries `section` for its requests, and {op: 'unsection',
 * ref: section} ends it; occupy -> {op: 'occupy', id}, answered {id}, and {op: 'vacate', ref: id}.
 * If the line breaks, every waiting request goes
 * at once and later ones use a governor of this process: the run goes on, less paced.
 */
export class GovernorConnection implements Gate {
  private socket?: Socket;
  private broken = false;
  private next = 0;
  private buffer = '';
  private readonly pending = new Map<number, (msg: Answer) => void>();
  private fallback?: Governor;

  constructor(private readonly path: string) {}

  private line(): Socket | undefined {
    if (this.broken) return undefined;
    if (this.socket) return this.socket;
    const s = connect(this.path);
    s.setEncoding('utf8');
    s.unref();
    s.on('data', (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) !== -1) {
        const msg = JSON.parse(this.buffer.slice(0, nl)) as { id: number; waitedMs?: number; forced?: boolean };
        this.buffer = this.buffer.slice(nl + 1);
        const done = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        done?.(msg);
      }
    });
    const fail = () => {
      this.broken = true;
      for (const done of this.pending.values()) done({ waitedMs: 0, forced: true });
      this.pending.clear();
    };
    s.on('error', fail);
    s.on('close', fail);
    this.socket = s;
    return s;
  }

  private local(): Governor {
    return (this.fallback ??= new Governor());
  }

  private ask(msg: Record<string, unknown>): { id: number; answer: Promise<Answer> } | undefined {
    const s = this.line();
    if (!s) return undefined;
    const id = ++this.next;
    // While a request waits for its turn the socket must keep the worker alive.
    s.ref();
    const answer = new Promise<Answer>((resolve) => this.pending.set(id, resolve))
      .finally(() => { if (this.pending.size === 0) this.socket?.unref(); });
    s.write(JSON.stringify({ ...msg, id }) + '\n');
    return { id, answer };
  }

  async acquire(maxWaitMs: number, retry = false): Promise<Lease> {
    const started = performance.now();
    const section = inSection.getStore();
    const asked = this.ask({ op: 'acquire', maxWaitMs, retry, ...(section !== undefined ? { section } : {}) });
    if (!asked) return this.local().acquire(maxWaitMs, retry);
    const { id } = asked;
    const answer = await asked.answer;
    if (this.broken && answer.forced) return this.local().acquire(0);
    let done = false;
    return {
      waitedMs: answer.waitedMs ?? Math.round(performance.now() - started),
      forced: answer.forced ?? false,
      release: (o) => {
        if (done) return;
        done = true;
        if (!this.broken) this.socket?.write(JSON.stringify({ op: 'release', ref: id, status: o.status ?? null, headers: rateLimitHeadersOf(o.headers) }) + '\n');
      },
    };
  }

  async hold(maxMs: number): Promise<() => void> {
    const asked = this.ask({ op: 'hold', maxMs });
    if (!asked) return this.local().hold(maxMs);
    await asked.answer;
    const { id } = asked;
    return () => { if (!this.broken) this.socket?.write(JSON.stringify({ op: 'unhold', ref: id }) + '\n'); };
  }

  async occupy(maxWaitMs = Infinity): Promise<() => void> {
    const asked = this.ask({ op: 'occupy', ...(Number.isFinite(maxWaitMs) ? { maxWaitMs } : {}) });
    if (!asked) return this.local().occupy(maxWaitMs);
    await asked.answer;
    const { id } = asked;
    return () => { if (!this.broken) this.socket?.write(JSON.stringify({ op: 'vacate', ref: id }) + '\n'); };
  }

  async quiet<T>(drainMs: number, maxMs: number, fn: () => Promise<T>): Promise<{ value: T; quiet: boolean }> {
    const asked = this.ask({ op: 'section', drainMs, maxMs });
    if (!asked) return this.local().quiet(drainMs, maxMs, fn);
    const answer = await asked.answer;
    // A broken line answers at once, with no section: the run goes on, unquiet.
    if (answer.section === undefined) return { value: await fn(), quiet: false };
    try {
      return { value: await inSection.run(answer.section, fn), quiet: answer.quiet === true };
    } finally {
      if (!this.broken) this.socket?.write(JSON.stringify({ op: 'unsection', ref: answer.section }) + '\n');
    }
  }
}

let shared: Gate | undefined;

/**
 * This process's gate to the run's governor: the runner's (over its socket) when the
 * runner started one, else a governor of this process. One per worker thread.
 */
export function runGovernor(): Gate {
  if (shared) return shared;
  const path = process.env[GOVERNOR_SOCKET_ENV];
  shared = path ? new GovernorConnection(path) : new Governor();
  return shared;
}
