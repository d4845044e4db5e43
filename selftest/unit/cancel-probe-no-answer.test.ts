// SVC-10's probe (harness/concurrency-probes.ts) against a target that never answers, with
// TIMEOUT_MS (300 ms) below the probe's own 3 s wait: a short stream the run's deadline cut
// is the capped figure "no first token within 300 ms", so with no idle figure SVC-10 is
// inconclusive, never failed on a missing answer (answering is SVC-1's and EV-10's). The
// server runs in this process on 127.0.0.1; the probe sends its 5 idle tries, each ended by the deadline.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/run/config.ts';
import { runContextOf, writeRunContext } from '../../lib/run/run-context.ts';
import type { Exchange } from '../../lib/http/http-client.ts';

const KEY = 'sk-cancel-probe-no-answer-unit-000';
let server: Server;
let dir: string;
let held = 0;
const pending: IncomingMessage[] = [];
const before = { CHATGATE_RUN_DIR: process.env.CHATGATE_RUN_DIR, API_KEY: process.env.API_KEY };

beforeAll(async () => {
  // Reads each request and never answers it.
  server = createServer((req) => { held++; pending.push(req); req.resume(); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  dir = mkdtempSync(join(tmpdir(), 'chatgate-svc10-hang-'));
  process.env.API_KEY = KEY;
  writeRunContext(dir, runContextOf(loadConfig({ TARGET_URL: url, API_KEY: KEY, TIMEOUT_MS: '300' }), { phase: 'run', target: { url, keys: { main: 'API_KEY' } } }));
  process.env.CHATGATE_RUN_DIR = dir;
});

afterAll(async () => {
  for (const [k, v] of Object.entries(before)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
  for (const req of pending) req.socket.destroy();
  await new Promise((r) => server?.close(r));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('SVC-10 against a target that never answers', () => {
  it('is inconclusive with no first token within the deadline, not failed on the missing responses', async () => {
    const { cancelFreesCapacity } = await import('../../harness/concurrency-probes.ts');
    const out: { verdict?: string; why?: string; checks: number } = { checks: 0 };
    const t = {
      // As clause()'s: a request with no response fails the test's clause.
      responded(ex: Exchange) { if (ex.status === undefined) t.fail('a response', `no response: ${ex.error?.message}`); },
      fail(expected: string, seen: string): never { Object.assign(out, { verdict: 'fail', why: `expected ${expected}, got ${seen}` }); throw new Error(out.why); },
      inconclusive(why: string): never { Object.assign(out, { verdict: 'inconclusive', why }); throw new Error(why); },
      check(ok: boolean, expected: string, seen: string) { if (!ok) t.fail(expected, seen); out.checks++; },
      note() {},
    };
    await expect(cancelFreesCapacity(t as never, 2)).rejects.toThrow();
    expect(out).toMatchObject({ verdict: 'inconclusive', checks: 0 });
    expect(out.why).toMatch(/^a short stream alone got no content within \d+ ms$/);
    // Five idle tries (the probe's bound), each cut by the 300 ms deadline; no held stream was opened.
    expect(held).toBe(5);
  }, 60_000);
});
