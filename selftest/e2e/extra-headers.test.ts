// HEADERS and HEADERS_FILE on every traffic path. The reference records every request
// it receives (its onRequest hook); the whole suite (preflight, raw probes, the client
// library matrix, the fuzz phase), the load harness on both engines (the Node driver
// and autocannon) and the k6 bundles (through the stand-in runtime) are pointed at it
// with two harmless and two secret extra headers. Every request that arrived must carry
// all four, and no output of any path may hold a secret value.
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReceivedRequest } from '../../reference/server.ts';
import { buildK6 } from '../../load/k6/build.ts';
import { runSuite } from '../support/run-suite.ts';
import { runLoad } from '../support/run-load.ts';
import { referenceTarget, type RunningTarget } from '../support/targets.ts';
import { loadBundle } from '../support/k6-shim.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

const rand = () => Math.random().toString(36).slice(2, 12);
const PORTKEY_KEY = `pk-secret-${rand()}`;
const CF_SECRET = `cf-secret-${rand()}${rand()}`;
const SECRETS = [PORTKEY_KEY, CF_SECRET];
const EXPECTED: Record<string, string> = {
  'x-tenant': 'team-a',
  'x-portkey-provider': 'openai',
  'x-portkey-api-key': PORTKEY_KEY,
  'cf-access-client-secret': CF_SECRET,
};

let ref: RunningTarget;
let dir: string;
let env: Record<string, string>;
const received: ReceivedRequest[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chatgate-extra-headers-'));
  const file = join(dir, 'headers.txt');
  // The secrets come from the file, as a platform team keeps them; the harmless ones inline.
  writeFileSync(file, `# gateway credentials\nx-portkey-api-key: ${PORTKEY_KEY}\r\nCF-Access-Client-Secret: ${CF_SECRET}\n`);
  ref = await referenceTarget({ onRequest: (r) => received.push(r) });
  env = { ...ref.env, HEADERS: 'x-tenant: team-a\nx-portkey-provider: openai', HEADERS_FILE: file };
}, HANG_GUARD_MS);
afterAll(async () => {
  await ref?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Requests (since `from`) that lack one of the headers or carry another value. */
function missing(from: number): string[] {
  return received.slice(from).flatMap((r) => Object.entries(EXPECTED)
    .filter(([name, value]) => r.headers[name] !== value)
    .map(([name]) => `${r.method} ${r.url} (user-agent ${String(r.headers['user-agent'])}): ${name} ${r.headers[name] === undefined ? 'missing' : 'wrong'}`));
}

function agents(from: number): string[] {
  return [...new Set(received.slice(from).map((r) => String(r.headers['user-agent'] ?? '(none)')))];
}

function allFiles(root: string): string {
  if (!existsSync(root)) return '';
  return readdirSync(root).map((f) => {
    const p = join(root, f);
    return statSync(p).isDirectory() ? allFiles(p) : readFileSync(p, 'utf8');
  }).join('\n');
}

describe('extra headers on every path, secrets in no output', () => {
  it('the whole suite: preflight, raw probes, every client library, the fuzz phase', async () => {
    const from = received.length;
    const run = await runSuite(env);
    expect(run.exitCode, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);
    expect(run.clauses('fail')).toEqual([]);
    expect(received.length - from).toBeGreaterThan(200);
    expect(missing(from)).toEqual([]);
    // Each path did send: the preflight, our raw client, the openai majors (and LangChain on top of openai), the Vercel AI SDK.
    const uas = agents(from);
    expect(uas).toContain('chatgate-preflight');
    expect(uas).toContain('chatgate');
    expect(uas.some((u) => /^OpenAI\/JS/.test(u))).toBe(true);
    expect(uas.some((u) => /ai-sdk/.test(u))).toBe(true);
    for (const clause of ['SVC-4', 'SVC-4b']) expect(run.tests(clause).filter((t) => t.verdict === 'pass').length, clause).toBeGreaterThan(0);
    const fuzz = (run.results?.tests ?? []).filter((t) => /fuzz/.test(t.title) && t.verdict === 'pass');
    expect(fuzz.length).toBeGreaterThan(0);
    // Curl lines carry every extra header, the secret ones as ***.
    const curls = (run.results?.tests ?? []).map((t) => t.curl).filter((c): c is string => !!c);
    expect(curls.length).toBeGreaterThan(0);
    for (const c of curls) {
      expect(c).toContain(`-H 'x-tenant: team-a'`);
      expect(c).toMatch(/-H '(?:x-portkey-api-key|X-Portkey-Api-Key): \*\*\*'/i);
      expect(c).toMatch(/-H 'cf-access-client-secret: \*\*\*'/i);
    }
    const everything = run.stdout + run.stderr + allFiles(run.reportsDir);
    for (const s of SECRETS) expect(everything).not.toContain(s);
  }, HANG_GUARD_MS);

  it('a target that echoes a secret header value fails AUTH-9, which names the header and never shows the value', async () => {
    // A relay in front of the reference that echoes x-portkey-api-key back as a response header.
    const upstream = new URL(ref.env.TARGET_URL!);
    const relay = createServer((req, res) => {
      const fwd = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, { ...up.headers, 'x-echo': String(req.headers['x-portkey-api-key'] ?? '') });
        up.pipe(res);
      });
      fwd.on('error', () => res.destroy());
      req.pipe(fwd);
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()));
    try {
      const run = await runSuite({ ...env, TARGET_URL: `http://127.0.0.1:${(relay.address() as AddressInfo).port}/v1` }, { args: ['models'] });
      expect(run.exitCode, run.stderr).toBe(1);
      const auth9 = run.tests('AUTH-9');
      expect(auth9.map((t) => t.verdict)).toEqual(['fail']);
      expect(JSON.stringify(auth9[0])).toContain('HEADERS x-portkey-api-key');
      for (const s of SECRETS) expect(run.stdout + run.stderr + allFiles(run.reportsDir)).not.toContain(s);
    } finally {
      await new Promise<void>((r) => { relay.closeAllConnections(); relay.close(() => r()); });
    }
  }, HANG_GUARD_MS);

  it('the load harness, Node driver (stream and fixed-rate throughput): every request carries them', async () => {
    for (const args of [['stream', '--rate', '4', '--duration', '2'], ['throughput', '--rate', '20', '--connections', '2', '--duration', '2']]) {
      const from = received.length;
      const out = join(dir, `load-${args[0]}`);
      const r = await runLoad([...args, '--warmup', '1', '--quiet', '--out', out], env);
      expect(r.code, r.stderr).toBe(0);
      expect(agents(from)).toContain('chatgate-load');
      expect(received.length - from).toBeGreaterThan(3);
      expect(missing(from)).toEqual([]);
      for (const s of SECRETS) expect(r.stdout + r.stderr + allFiles(out)).not.toContain(s);
    }
  }, HANG_GUARD_MS);

  it('the load harness on autocannon (throughput at fixed connections): every request carries them', async () => {
    const from = received.length;
    const out = join(dir, 'load-autocannon');
    const r = await runLoad(['throughput', '--connections', '2', '--duration', '2', '--warmup', '1', '--quiet', '--out', out], env);
    expect(r.code, r.stderr).toBe(0);
    expect(received.length - from).toBeGreaterThan(3);
    expect(missing(from)).toEqual([]);
    for (const s of SECRETS) expect(r.stdout + r.stderr + allFiles(out)).not.toContain(s);
  }, HANG_GUARD_MS);

  it('the k6 scripts send HEADERS on every request (setup and iterations) and redact secret values from their logs', async () => {
    const out = join(dir, 'k6');
    await buildK6({ outdir: out });
    const k6env = {
      TARGET_URL: ref.env.TARGET_URL!, API_KEY: ref.env.API_KEY!, BRAIN_ID: ref.env.BRAIN_ID!,
      HEADERS: Object.entries(EXPECTED).map(([k, v]) => `${k}: ${v}`).join('\n'),
    };
    for (const script of ['chat-throughput', 'chat-stream', 'chat-stream-sse', 'brain-mix', 'ratelimit-probe']) {
      // A hostile answer that echoes the secrets: whatever the script logs must not show them.
      const { exports, shim } = loadBundle(join(out, `${script}.js`), k6env, () => ({ status: 500, headers: { 'content-type': 'text/plain' }, body: `echo ${SECRETS.join(' ')}` }));
      try { exports.setup?.(); } catch { /* a 500 may stop the script: the requests it sent are what counts */ }
      try { exports.default?.(); } catch { /* idem */ }
      expect(shim.requests.length, script).toBeGreaterThan(0);
      // setup()'s reachability GET alone is not the script's traffic: an iteration's request must be there too.
      expect(shim.requests.filter((r) => r.method === 'POST').length, script).toBeGreaterThan(0);
      for (const req of shim.requests) {
        const sent = Object.fromEntries(Object.entries(req.params.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
        for (const [name, value] of Object.entries(EXPECTED)) expect(sent[name], `${script} ${req.method} ${req.url} ${name}`).toBe(value);
      }
      for (const s of SECRETS) expect(shim.logs.join('\n'), script).not.toContain(s);
    }
  }, HANG_GUARD_MS);

  it('k6: a refused header name stops the script at init with one line', async () => {
    const out = join(dir, 'k6');
    if (!existsSync(join(out, 'chat-throughput.js'))) await buildK6({ outdir: out });
    expect(() => loadBundle(join(out, 'chat-throughput.js'), { TARGET_URL: ref.env.TARGET_URL!, HEADERS: 'Authorization: Bearer x' }))
      .toThrow(/^chatgate k6: HEADERS: the header: Authorization may not be set here/);
  }, HANG_GUARD_MS);
});
