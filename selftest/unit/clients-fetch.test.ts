// The fetch the client libraries get: it must keep the raw client's guarantees (no
// redirect followed, one deadline, a body cap) and count what crossed the wire
// truthfully, since the error cells judge "no retry of a 4xx" by that count.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeGuardedFetch, Wire } from '../../harness/clients/fetch.ts';
import { addSecret } from '../../lib/run/redact.ts';
import type { ExchangeSummary } from '../../harness/exchange-log.ts';

const ECHOED_KEY = 'sk-clients-fetch-echo-0123456789';

let server: http.Server;
let base: string;
const hits = new Map<string, number>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    const n = (hits.get(path) ?? 0) + 1;
    hits.set(path, n);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (path === '/bad') return json(400, { error: { message: 'model must be a string', type: 'invalid_request_error', code: 'invalid_type' } });
    if (path === '/flat') return json(401, { message: 'no wrapper' });
    if (path === '/boom') return json(500, { error: { message: 'boom', type: 'server_error', code: null } }, { 'x-debug-key': ECHOED_KEY });
    // Throttled on the first request only, with a short advertised wait.
    if (path === '/throttled') return n === 1 ? json(429, { error: { message: 'slow down', type: 'rate_limit_error', code: 'rate_limited' } }, { 'retry-after-ms': '50' }) : json(200, { ok: true });
    if (path === '/redirect') { res.writeHead(302, { location: 'http://example.invalid/steal' }); return res.end(); }
    if (path === '/big') { res.writeHead(200, { 'content-type': 'text/plain' }); return res.end('x'.repeat(64 * 1024)); }
    if (path === '/hang') { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.write('data: {}\n\n'); return; }
    json(200, { ok: true });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('Wire', () => {
  it('records each request with its status and the error body\'s error.message', async () => {
    const w = new Wire({ timeoutMs: 2000, retry429: true });
    const res = await w.fetch(`${base}/bad`, { method: 'POST', body: '{"model":null}' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { message: 'model must be a string' } }); // the client still reads the body
    expect(w.requests).toHaveLength(1);
    expect(w.serverMessage(400)).toBe('model must be a string');
    expect(w.retriesAfterClientError()).toEqual([]);
  });

  it('leaves serverMessage undefined when the body has no error wrapper', async () => {
    const w = new Wire({ timeoutMs: 2000, retry429: true });
    await w.fetch(`${base}/flat`);
    expect(w.serverMessage(401)).toBeUndefined();
  });

  it('sees a second request after a 400 as a retry', async () => {
    const w = new Wire({ timeoutMs: 2000, retry429: true });
    await w.fetch(`${base}/bad`, { method: 'POST', body: '{}' });
    await w.fetch(`${base}/bad`, { method: 'POST', body: '{}' });
    expect(w.retriesAfterClientError()).toHaveLength(1);
    expect(w.statuses()).toBe('400, 400');
  });

  it('waits out a 429 (retry-after-ms) and re-sends when asked to, counting it as throttling', async () => {
    hits.delete('/throttled');
    const w = new Wire({ timeoutMs: 2000, retry429: true });
    const res = await w.fetch(`${base}/throttled`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(200);
    expect(w.throttled).toBe(1);
    expect(w.statuses()).toBe('429, 200');
  });

  it('hands the 429 to the client when the 429 is the subject', async () => {
    hits.delete('/throttled');
    const w = new Wire({ timeoutMs: 2000, retry429: false });
    const res = await w.fetch(`${base}/throttled`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(429);
    expect(w.serverMessage(429)).toBe('slow down');
  });

  it('builds a curl of the last request with the key masked', async () => {
    const w = new Wire({ timeoutMs: 2000, retry429: true });
    await w.fetch(`${base}/ok`, { method: 'POST', body: '{"stream":true}', headers: { authorization: 'Bearer sk-secret-never-shown-123' } });
    const curl = w.curl()!;
    expect(curl).toContain('Authorization: Bearer ***');
    expect(curl).not.toContain('sk-secret');
    expect(curl).toContain(' -N ');
  });
});

describe('guarded fetch', () => {
  it('never follows a redirect', async () => {
    await expect(makeGuardedFetch(2000)(`${base}/redirect`)).rejects.toThrow();
  });

  it('cuts off a body over the cap', async () => {
    const res = await makeGuardedFetch(2000, 1024)(`${base}/big`);
    await expect(res.text()).rejects.toThrow(/exceeded 1\.0 KiB/);
  });

  it('ends a response that never finishes at the deadline', async () => {
    // The headers come at once and the body never ends: the body read is what the deadline ends
    // (the test's own timeout is the hang guard; 300 ms was too short for the headers at load 20).
    const res = await makeGuardedFetch(3000)(`${base}/hang`);
    await expect(res.text()).rejects.toThrow();
  });
});

describe('Wire and the exchange log', () => {
  it('logs every client exchange in the run\'s exchange log, in the one summary format, redacted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatgate-wire-log-'));
    process.env.CHATGATE_RUN_DIR = dir;
    addSecret(ECHOED_KEY, 'API_KEY');
    try {
      const w = new Wire({ timeoutMs: 2000, retry429: true });
      expect((await w.fetch(`${base}/boom`, { method: 'POST', body: '{}' })).status).toBe(500);
      expect((await w.fetch(`${base}/ok`)).status).toBe(200);
      await w.settled();
      const lines = readdirSync(dir).flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean));
      const logged = lines.map((l) => JSON.parse(l) as ExchangeSummary);
      expect(logged.map((e) => `${e.source} ${e.method} ${new URL(e.url).pathname} ${e.status}`)).toEqual(['client POST /boom 500', 'client GET /ok 200']);
      const boom = logged[0]!;
      expect(boom.keyEchoes).toEqual(['API_KEY']);
      expect(boom.hasErrorObject).toBe(true);
      expect(boom.errorCode).toBeNull();
      expect(boom.errorBodyProblems!.join()).toMatch(/code/);
      expect(lines.join('\n')).not.toContain(ECHOED_KEY);
    } finally {
      delete process.env.CHATGATE_RUN_DIR;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
