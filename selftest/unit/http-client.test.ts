// The raw client's guarantees: decoding, caps, deadlines, no redirects, retries on
// 429, key-echo detection; each failure comes back as exchange.error, never a throw.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient, retryDelayMs } from '../../lib/http/http-client.ts';
import { addSecret } from '../../lib/run/redact.ts';
import { reuseRetryEvidence } from '../../lib/spec/rules/connection-reuse.ts';

const KEY = 'sk-unit-http-0123456789abcdef';
addSecret(KEY, 'API_KEY');
let hits429 = 0;
const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  '/v1/gzip': (_q, r) => { r.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }); r.end(gzipSync('{"ok":true}')); },
  '/v1/weird': (_q, r) => { r.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'zstd-x' }); r.end('{}'); },
  '/v1/redirect': (_q, r) => { r.writeHead(302, { location: 'http://127.0.0.2:9/v1/x' }); r.end(); },
  '/v1/huge': (_q, r) => {
    r.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const pump = () => { while (sent < 64 * 1024 * 1024 && r.write(chunk)) sent += chunk.length; if (sent < 64 * 1024 * 1024) r.once('drain', pump); else r.end(); };
    r.on('close', () => { sent = Infinity; });
    pump();
  },
  '/v1/hang': () => { /* never answers */ },
  '/v1/slow-body': (_q, r) => { r.writeHead(200, { 'content-type': 'application/json' }); r.write('{"a":'); },
  '/v1/done-open': (_q, r) => { r.writeHead(200, { 'content-type': 'text/event-stream' }); r.write('data: {"x":1}\n\ndata: [DONE]\n\n'); },
  '/v1/echo': (_q, r) => { r.writeHead(400, { 'content-type': 'application/json', 'x-key': KEY }); r.end('{}'); },
  '/v1/limited': (_q, r) => {
    hits429++;
    if (hits429 < 3) { r.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': '50' }); r.end('{"error":{"message":"slow down","type":"t","code":"c"}}'); return; }
    r.writeHead(200, { 'content-type': 'application/json' }); r.end('{}');
  },
};
const server = createServer((req, res) => (routes[req.url ?? ''] ?? ((_q, r) => { r.writeHead(404); r.end(); }))(req, res));
let client: HttpClient;
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  client = new HttpClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, timeoutMs: 800, maxBodyBytes: 1024 * 1024 });
});
afterAll(async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)); await client.close(); });

const get = (path: string, extra = {}) => client.send({ method: 'GET', path, auth: { key: KEY }, ...extra });

describe('HttpClient', () => {
  it('decodes gzip bodies', async () => {
    const ex = await get('/gzip');
    expect(ex.json).toEqual({ ok: true });
    expect(ex.error).toBeUndefined();
  });
  it('reports an unknown content-encoding instead of guessing', async () => {
    expect((await get('/weird')).error).toMatchObject({ kind: 'bad-encoding', message: 'unsupported Content-Encoding "zstd-x"' });
  });
  it('never follows a redirect', async () => {
    const ex = await get('/redirect');
    expect(ex.status).toBe(302);
    expect(ex.headers.location).toBe('http://127.0.0.2:9/v1/x');
  });
  it('cuts a huge body at the cap and keeps only its start', async () => {
    const before = process.memoryUsage().rss;
    const ex = await get('/huge');
    expect(ex.error).toMatchObject({ kind: 'body-too-large' });
    expect(ex.error!.message).toMatch(/^body exceeded 1 MiB/);
    expect((ex.text ?? '').length).toBeLessThanOrEqual(64 * 1024);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });
  it('has one deadline for headers and one for the body', async () => {
    expect((await get('/hang')).error).toEqual({ kind: 'timeout-headers', message: 'no response headers within 800 ms' });
    expect((await get('/slow-body')).error).toMatchObject({ kind: 'timeout-body' });
  });
  it('ends a stream that stays open after [DONE]', async () => {
    const ex = await get('/done-open', { stream: true });
    expect(ex.stream?.doneIndex).toBe(1);
    expect(ex.error?.kind === 'never-closed' || ex.error?.kind === 'timeout-body').toBe(true);
  });
  it('notices a key echoed in a header, by name', async () => {
    expect((await get('/echo')).keyEchoes).toEqual(['API_KEY']);
  });
  it('retries a 429 after retry-after-ms, and records it', async () => {
    const ex = await get('/limited');
    expect(ex.status).toBe(200);
    expect(ex.retries).toEqual([{ status: 429, waitedMs: 50 }, { status: 429, waitedMs: 50 }]);
  });
  it('does not retry when told not to', async () => {
    hits429 = 0;
    expect((await get('/limited', { retryOn429: false })).status).toBe(429);
  });
  it('refuses to send anywhere but the configured origin', () => {
    expect(() => client.urlFor({ root: '//evil.example/v1' })).toThrow(/another origin/);
  });
  it('reads Retry-After as seconds or a date, retry-after-ms first', () => {
    expect(retryDelayMs({ 'retry-after-ms': '250', 'retry-after': '9' }, 0)).toBe(250);
    expect(retryDelayMs({ 'retry-after': '2' }, 0)).toBe(2000);
    expect(retryDelayMs({ 'retry-after': new Date(Date.now() + 3000).toUTCString() }, 0)).toBeGreaterThan(1000);
    expect(retryDelayMs({}, 2)).toBe(4000);
  });
  it('shows the key nowhere in what it records', async () => {
    const ex = await get('/gzip');
    expect(JSON.stringify({ ...ex.request, curl: ex.curl })).not.toContain(KEY);
  });
});

// A server that drops a kept-alive connection when the next request arrives on it, before
// answering: what a server that closes silently after a stream looks like to the next request.
describe('HttpClient on a connection the server dropped', () => {
  const served = new WeakMap<object, number>();
  const dropper = createServer((req, res) => {
    const n = served.get(req.socket) ?? 0;
    served.set(req.socket, n + 1);
    if (n > 0 || req.url === '/v1/always-drop') { req.socket.destroy(); return; }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  let base = '';
  const pause = () => new Promise((r) => setTimeout(r, 20));
  beforeAll(async () => {
    await new Promise<void>((r) => dropper.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(dropper.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => { dropper.closeAllConnections(); await new Promise((r) => dropper.close(r)); });

  it('sends a request that failed on a reused connection before any response once more, on a new connection, and records it', async () => {
    const c = new HttpClient({ baseUrl: base, timeoutMs: 2000 });
    const seen: number[] = [];
    const logged = new HttpClient({ baseUrl: base, timeoutMs: 2000, onExchange: (ex) => seen.push(ex.seq) });
    try {
      const first = await c.send({ method: 'GET', path: '/x', auth: { key: KEY } });
      expect(first).toMatchObject({ status: 200, reusedConnection: false });
      await pause(); // the pool hands a connection back a moment after its response ends
      const second = await c.send({ method: 'POST', path: '/y', auth: { key: KEY }, json: { a: 1 } });
      expect(second.status).toBe(200);
      expect(second.reusedConnection).toBe(false); // the answer came on the new connection
      expect(second.reuseRetry).toMatchObject({ error: 'connection reset before any response' });
      expect(second.reuseRetry!.firstSeq).toBeLessThan(second.seq);
      expect(second.reuseRetry!.idleMs).toBeGreaterThanOrEqual(0);
      expect(seen).toEqual([]);
    } finally {
      await c.close();
      await logged.close();
    }
  });
  it('does not re-send a reset on a new connection, nor on a connection given for a probe', async () => {
    const c = new HttpClient({ baseUrl: base, timeoutMs: 2000 });
    const one = c.singleConnection();
    try {
      const ex = await c.send({ method: 'GET', path: '/always-drop', auth: { key: KEY } });
      expect(ex.status).toBeUndefined();
      expect(ex.error?.kind).toBe('reset');
      expect(ex.reuseRetry).toBeUndefined();
      expect((await c.send({ method: 'GET', path: '/x', auth: { key: KEY }, connection: one })).status).toBe(200);
      await pause();
      const probe = await c.send({ method: 'GET', path: '/x', auth: { key: KEY }, connection: one });
      expect(probe.status).toBeUndefined();
      expect(probe).toMatchObject({ reusedConnection: true, error: { kind: 'reset' } });
      expect(probe.reuseRetry).toBeUndefined();
    } finally {
      await one.destroy();
      await c.close();
    }
  });
  it('turns re-sends into SVC-8 evidence only when the connection was reused at once, within its Keep-Alive timeout', () => {
    const s = (idleMs: number, keepAliveTimeoutMs?: number) => ({
      method: 'POST', url: 'http://t/v1/chat/completions', test: 'CHAT-8 x',
      reuseRetry: { error: 'connection reset before any response', firstSeq: 1, idleMs, keepAliveTimeoutMs },
    });
    expect(reuseRetryEvidence([s(3), { method: 'GET', url: 'http://t/v1/models' }])).toEqual([
      'POST http://t/v1/chat/completions (CHAT-8 x): connection reset before any response on a connection left open 3 ms after its previous response; sent again on a new connection',
    ]);
    expect(reuseRetryEvidence([s(1500), s(600, 500)])).toEqual([]);
  });
});
