// lib/run/governor.ts and runner/governor-server.ts: the run's one pace for a rate-limited
// target. Bounded by counts and ordering; the only times asserted are lower bounds
// (a wait the target advised is kept), which a loaded machine cannot break.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Governor, GovernorConnection, MAX_CONCURRENCY } from '../../lib/run/governor.ts';
import { startGovernorServer, type GovernorServer } from '../../runner/governor-server.ts';
import { HttpClient } from '../../lib/http/http-client.ts';
import { Wire } from '../../harness/clients/fetch.ts';

const T429 = (ms: number) => ({ status: 429, headers: { 'retry-after-ms': String(ms) } });
const OK = { status: 200, headers: {} };

describe('Governor', () => {
  it('holds every turn until the wait a 429 advised', async () => {
    const g = new Governor();
    const a = await g.acquire(10_000);
    a.release(T429(150));
    const b = await g.acquire(10_000);
    expect(b.forced).toBe(false);
    expect(b.waitedMs).toBeGreaterThanOrEqual(120);
    b.release(OK);
    expect(g.stats.answered429).toBe(1);
  });

  it('halves the requests in flight once per throttling episode', async () => {
    const g = new Governor();
    const leases = await Promise.all(Array.from({ length: 8 }, () => g.acquire(10_000)));
    // The 429s of one burst: one slowdown, not eight.
    for (const l of leases) l.release(T429(30));
    expect(g.stats.lowestConcurrency).toBe(4);
    // After the pause, 4 go at once and the others wait for them.
    const next = Array.from({ length: 6 }, () => g.acquire(10_000));
    let granted = 0;
    next.forEach((p) => void p.then(() => granted++));
    const first = await Promise.all(next.slice(0, 4));
    await new Promise((r) => setTimeout(r, 50));
    expect(granted).toBe(4);
    for (const l of first) l.release(OK);
    for (const l of await Promise.all(next.slice(4))) l.release(OK);
    expect(granted).toBe(6);
  });

  it('at one in flight, spaces the starts further apart', async () => {
    const g = new Governor();
    for (let i = 0; i < 8 && g.stats.widestIntervalMs === 0; i++) {
      const l = await g.acquire(10_000);
      l.release(T429(1));
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(g.stats.lowestConcurrency).toBe(1);
    expect(g.stats.widestIntervalMs).toBeGreaterThanOrEqual(100);
  });

  it('gives a request that met a 429 its turn before requests not yet sent', async () => {
    // At the back of the queue a retry can lose the race for a token bucket's next token
    // again and again, until its budget runs out.
    const g = new Governor();
    const release = await g.hold(60_000);
    const order: string[] = [];
    const take = (name: string, retry: boolean) => g.acquire(10_000, retry).then((l) => { order.push(name); return l; });
    const all = [take('fresh 1', false), take('fresh 2', false), take('retry 1', true), take('fresh 3', false), take('retry 2', true)];
    release();
    for (const l of await Promise.all(all)) l.release(OK);
    expect(order).toEqual(['retry 1', 'retry 2', 'fresh 1', 'fresh 2', 'fresh 3']);
  });

  it('raises the pace again only after several answers without a 429', async () => {
    // Raised after each answer, one in flight went straight back to two against a slow token
    // bucket, and half the paced requests met a 429.
    const g = new Governor();
    const [a, b] = await Promise.all([g.acquire(10_000), g.acquire(10_000)]);
    a!.release(T429(1));
    expect(g.stats.lowestConcurrency).toBe(1);
    await new Promise((r) => setTimeout(r, 5));
    b!.release(OK);
    let granted = 0;
    const next = [g.acquire(10_000), g.acquire(10_000)];
    next.forEach((p) => void p.then(() => granted++));
    const c = await next[0]!;
    await new Promise((r) => setTimeout(r, 50));
    expect(granted).toBe(1);
    c.release(OK);
    (await next[1]!).release(OK);
  });

  it('at one in flight, starts are at least the wait a 429 advised apart', async () => {
    const g = new Governor();
    for (let i = 0; i < 8 && g.stats.widestIntervalMs === 0; i++) {
      const l = await g.acquire(10_000);
      l.release(T429(300));
    }
    expect(g.stats.widestIntervalMs).toBeGreaterThanOrEqual(300);
  });

  it('waits for x-ratelimit-reset-* when x-ratelimit-remaining-* is used up by the requests out', async () => {
    const g = new Governor();
    const a = await g.acquire(10_000);
    a.release({ status: 200, headers: { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '150ms' } });
    const b = await g.acquire(10_000);
    expect(b.waitedMs).toBeGreaterThanOrEqual(120);
    b.release(OK);
    expect(g.stats.answered429).toBe(0);
  });

  it('lets a request go when it has waited its longest (forced), and a hold stops new turns', async () => {
    const g = new Governor();
    const release = await g.hold(60_000);
    const a = await g.acquire(60);
    expect(a.forced).toBe(true);
    a.release(OK);
    release();
    const b = await g.acquire(10_000);
    expect(b.forced).toBe(false);
    b.release(OK);
    expect(g.stats.forced).toBe(1);
  });
});

describe('quiet sections (Gate.quiet): a probe with none of the run\'s other requests in flight', () => {
  // Order, not time: who got a turn before whom. The drain and max times only bound the test.
  it('opens once the requests out are answered, lets only its own requests through, then the others', async () => {
    const g = new Governor();
    const order: string[] = [];
    // A request of another test: asked from outside the section's async context.
    const outsideOf = AsyncLocalStorage.snapshot();
    const out = await g.acquire(10_000);
    const section = g.quiet(10_000, 60_000, async () => {
      order.push('section opened');
      const own = await g.acquire(10_000);
      order.push('own request');
      const late = outsideOf(() => g.acquire(10_000)).then((l) => { order.push('later outside request'); return l; });
      // The outside request asked first (below) still waits: the section's own go ahead of it.
      await new Promise((r) => setTimeout(r, 20));
      own.release(OK);
      order.push('section ends');
      return { late };
    });
    const outside = g.acquire(10_000).then((l) => { order.push('outside request'); return l; });
    await new Promise((r) => setTimeout(r, 20));
    order.push('request out answered');
    out.release(OK);
    const { value: { late }, quiet } = await section;
    const o = await outside;
    (await late).release(OK);
    o.release(OK);
    expect(quiet).toBe(true);
    expect(order.slice(0, 4)).toEqual(['request out answered', 'section opened', 'own request', 'section ends']);
    expect(order.slice(4).sort()).toEqual(['later outside request', 'outside request']);
    expect(g.stats.forced).toBe(0);
    // Waiting for the section is not throttling: the run's pace line must not show it (only
    // the synchronous step from the section's end to the next turn counts as held).
    expect(g.stats.quietMs).toBeGreaterThanOrEqual(19);
    expect(g.stats.heldMs).toBeLessThan(g.stats.quietMs / 4);
  });

  it('never stalls a run: a request out past the drain time opens it unquiet, and it ends by itself after maxMs', async () => {
    const g = new Governor();
    const outsideOf = AsyncLocalStorage.snapshot();
    const stuck = await g.acquire(10_000);
    let outsideGot = false;
    const { quiet } = await g.quiet(30, 60, async () => {
      const outside = outsideOf(() => g.acquire(10_000)).then((l) => { outsideGot = true; return l; });
      // fn runs on past maxMs: the outside request gets its turn without the section's end.
      (await outside).release(OK);
    });
    expect(quiet).toBe(false);
    expect(outsideGot).toBe(true);
    stuck.release(OK);
  });

  it('two sections take turns: the second opens when the first ends, each quiet', async () => {
    const g = new Governor();
    const order: string[] = [];
    const one = g.quiet(10_000, 60_000, async () => {
      order.push('one opened');
      const l = await g.acquire(10_000);
      await new Promise((r) => setTimeout(r, 20));
      l.release(OK);
      order.push('one ends');
    });
    const two = g.quiet(10_000, 60_000, async () => { order.push('two opened'); (await g.acquire(10_000)).release(OK); });
    const [a, b] = await Promise.all([one, two]);
    expect([a.quiet, b.quiet]).toEqual([true, true]);
    expect(order).toEqual(['one opened', 'one ends', 'two opened']);
  });
});

describe('unpaced probes (Gate.occupy) and quiet sections keep out of each other', () => {
  it('a section waits for an unpaced probe to end; a probe asked for during a section starts after it', async () => {
    const g = new Governor();
    const order: string[] = [];
    const vacate = await g.occupy();
    const section = g.quiet(10_000, 60_000, async () => { order.push('section'); });
    await new Promise((r) => setTimeout(r, 20));
    order.push('probe ends');
    vacate();
    const { quiet } = await section;
    expect(quiet).toBe(true);
    let later: Promise<() => void> | undefined;
    await g.quiet(10_000, 60_000, async () => {
      later = g.occupy().then((v) => { order.push('second probe'); return v; });
      await new Promise((r) => setTimeout(r, 20));
      order.push('second section ends');
    });
    (await later!)();
    expect(order).toEqual(['probe ends', 'section', 'second section ends', 'second probe']);
  });

  it('a probe with a longest wait starts past it, inside a section that is still open (never stalls on a slow one)', async () => {
    const g = new Governor();
    const order: string[] = [];
    let probe: Promise<() => void> | undefined;
    await g.quiet(10_000, 60_000, async () => {
      probe = g.occupy(30).then((v) => { order.push('probe starts'); return v; });
      // The section stays open until the probe starts (5 s at most: without the bound it never would).
      await Promise.race([probe, new Promise((r) => setTimeout(r, 5_000))]);
      order.push('section ends');
    });
    (await probe!)();
    expect(order).toEqual(['probe starts', 'section ends']);
  });
});

describe('the run-wide governor across workers (Unix socket)', () => {
  let dir: string;
  let server: GovernorServer;
  // A governor of its own per test: what one test taught it must not pace the next.
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chatgate-governor-'));
    server = await startGovernorServer(dir);
  });
  afterEach(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a 429 one worker met holds the other worker back', async () => {
    const one = new GovernorConnection(server.path);
    const two = new GovernorConnection(server.path);
    const a = await one.acquire(10_000);
    a.release(T429(200));
    const b = await two.acquire(10_000);
    expect(b.waitedMs).toBeGreaterThanOrEqual(150);
    b.release(OK);
    expect(server.stats().answered429).toBe(1);
  });

  it('a worker that goes away gives its turns back; a hold from one worker holds the other', async () => {
    const one = new GovernorConnection(server.path);
    const leases = await Promise.all(Array.from({ length: MAX_CONCURRENCY }, () => one.acquire(10_000)));
    expect(leases).toHaveLength(MAX_CONCURRENCY);
    (one as unknown as { socket: { destroy(): void } }).socket.destroy();
    const two = new GovernorConnection(server.path);
    const c = await two.acquire(10_000);
    expect(c.forced).toBe(false);
    c.release(OK);
    const unhold = await two.hold(60_000);
    const three = new GovernorConnection(server.path);
    const held = await three.acquire(80);
    expect(held.forced).toBe(true);
    held.release(OK);
    unhold();
    const free = await three.acquire(10_000);
    expect(free.forced).toBe(false);
    free.release(OK);
  });

  it('a quiet section of one worker holds the other worker\'s requests, not its own; a worker that goes away ends its section', async () => {
    const one = new GovernorConnection(server.path);
    const two = new GovernorConnection(server.path);
    const order: string[] = [];
    // Workers are threads of their own; here both lines live in one process, so the other's request is asked from outside the section's async context.
    const outsideOf = AsyncLocalStorage.snapshot();
    let outside: Promise<unknown> | undefined;
    const { quiet } = await one.quiet(10_000, 60_000, async () => {
      outside = outsideOf(() => two.acquire(10_000)).then((l) => { order.push('other worker'); l.release(OK); });
      const own = await one.acquire(10_000);
      order.push('own request');
      await new Promise((r) => setTimeout(r, 20));
      own.release(OK);
      order.push('section ends');
    });
    await outside;
    expect(quiet).toBe(true);
    expect(order).toEqual(['own request', 'section ends', 'other worker']);
    // (How long the other waited is the local test's to judge: here its ask crosses a socket first.)
    // A worker gone mid-section: the others are not held until its maxMs.
    const three = new GovernorConnection(server.path);
    let opened!: () => void;
    const isOpen = new Promise<void>((r) => { opened = r; });
    void three.quiet(10_000, 600_000, () => { opened(); return new Promise(() => {}); });
    await isOpen;
    (three as unknown as { socket: { destroy(): void } }).socket.destroy();
    const after = await two.acquire(10_000);
    expect(after.forced).toBe(false);
    after.release(OK);
  });

  it('another worker\'s probe with a longest wait crosses the socket and starts past it, inside the section', async () => {
    const one = new GovernorConnection(server.path);
    const two = new GovernorConnection(server.path);
    const order: string[] = [];
    const outsideOf = AsyncLocalStorage.snapshot();
    let probe: Promise<() => void> | undefined;
    await one.quiet(10_000, 60_000, async () => {
      probe = outsideOf(() => two.occupy(30)).then((v) => { order.push('probe starts'); return v; });
      await Promise.race([probe, new Promise((r) => setTimeout(r, 5_000))]);
      order.push('section ends');
    });
    (await probe!)();
    expect(order).toEqual(['probe starts', 'section ends']);
  });

  it('a broken line never stalls a request: it goes at once, paced by a governor of its own', async () => {
    const lost = new GovernorConnection(join(dir, 'no-such.sock'));
    const l = await lost.acquire(10_000);
    l.release(OK);
    expect(l.forced).toBe(false);
  });
});

describe('throttled out: a 429 past the back-off budget', () => {
  let srv: Server;
  let base: string;
  let hits = 0;
  beforeAll(async () => {
    srv = createServer((req, res) => {
      hits++;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': '20' });
      res.end('{"error":{"message":"slow down","type":"rate_limit_error","code":"rate_limited"}}');
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((r) => srv.close(() => r())));

  it('the raw client marks the exchange throttled out after its retries, paced by the gate', async () => {
    hits = 0;
    const gate = new Governor();
    const c = new HttpClient({ baseUrl: base, timeoutMs: 2000, gate, retry429: { maxRetries: 2, maxTotalWaitMs: 10_000 } });
    const ex = await c.send({ method: 'GET', path: '/models', auth: 'none' });
    expect(ex.status).toBe(429);
    expect(ex.throttledOut).toBe(true);
    expect(ex.retries).toHaveLength(2);
    expect(hits).toBe(3);
    expect(gate.stats.answered429).toBe(3);
    // A request that judges the 429 itself is neither paced nor marked.
    const probe = await c.send({ method: 'GET', path: '/models', auth: 'none', retryOn429: false });
    expect(probe.throttledOut).toBeUndefined();
    expect(gate.stats.answered429).toBe(3);
    await c.close();
  });

  it('the client libraries\' fetch marks its wire throttled out', async () => {
    const w = new Wire({ timeoutMs: 2000, retry429: true, gate: new Governor(), budget: { maxRetries: 3, maxTotalWaitMs: 10_000 } });
    const res = await w.fetch(`${base}/models`);
    expect(res.status).toBe(429);
    expect(w.throttledOut).toBe(true);
    expect(w.throttled).toBe(3);
  });
});

describe('the throttling line (console and summary.md)', () => {
  it('says how many 429s, how long the governor held requests back, and how many tests were throttled out', async () => {
    const { fixtureResults } = await import('./reports-fixture.ts');
    const { renderConsole } = await import('../../runner/report/console.ts');
    const { renderMarkdown } = await import('../../runner/report/markdown.ts');
    const { reportModel } = await import('../../runner/report/model.ts');
    const r = fixtureResults();
    expect(renderConsole(reportModel(r))).not.toContain('throttling:');
    r.durationMs = 100_000;
    r.throttle = { answered429: 12, heldMs: 40_000, waitedMs: 90_000, lowestConcurrency: 2, widestIntervalMs: 0, throttledOutTests: 1 };
    const line = 'throttling: the target answered 429 to 12 paced requests; the governor held requests back for 40.0 s of this 100.0 s run (40% of the run) (slowest pace: 2 in flight); 1 test throttled out';
    expect(renderConsole(reportModel(r), { color: false })).toContain(line);
    expect(renderMarkdown(reportModel(r))).toContain(`T${line.slice(1)}`);
  });
});
