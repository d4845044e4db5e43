// Issue 12, part 3: TLS in the loop. The reference behind a real nginx (Debian's,
// started here as a child on 127.0.0.1 with a temporary prefix) terminating TLS with a
// CA made by this test, HTTP/2 offered, gzip on and proxy_buffering on, as a staging
// ingress often is. With NODE_EXTRA_CA_CERTS (read by Node at process start) the whole
// run passes, streams included; without it the run stops before any test with the
// exit-2 line of the preflight (lib/http/preflight.ts).
import { connect as h2connect } from 'node:http2';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSuite } from '../support/run-suite.ts';
import { referenceTarget, type RunningTarget } from '../support/targets.ts';
import { startNginx, type Daemon } from '../support/daemons.ts';
import { makeTestCerts, type TestCerts } from '../support/tls.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

let certs: TestCerts;
let ref: RunningTarget;
let nginx: Daemon;
let env: Record<string, string>;

beforeAll(async () => {
  certs = makeTestCerts();
  ref = await referenceTarget();
  nginx = await startNginx({ upstream: new URL(ref.env.TARGET_URL!).origin, cert: certs.localhost.cert, key: certs.localhost.key });
  env = { ...ref.env, TARGET_URL: `https://localhost:${nginx.port}/v1` };
}, HANG_GUARD_MS);
afterAll(async () => {
  await nginx?.close();
  await ref?.close();
  if (certs) rmSync(certs.dir, { recursive: true, force: true });
});

describe('the reference behind nginx (TLS with a private CA, HTTP/2, gzip, proxy_buffering)', () => {
  it('nginx offers HTTP/2 and answers through the CA (the setup is what it claims)', async () => {
    const session = h2connect(`https://localhost:${nginx.port}`, { ca: readFileSync(certs.ca) });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = session.request({ ':path': '/v1/models', authorization: `Bearer ${ref.env.API_KEY}`, 'accept-encoding': 'gzip' });
        req.on('response', (h) => resolve(Number(h[':status'])));
        req.on('error', reject);
        req.resume();
        req.end();
      });
      expect(session.alpnProtocol).toBe('h2');
      expect(status).toBe(200);
    } finally {
      session.close();
    }
  });

  it('with NODE_EXTRA_CA_CERTS the whole run passes, streams through proxy_buffering included', async () => {
    const run = await runSuite({ ...env, NODE_EXTRA_CA_CERTS: certs.ca });
    expect(run.exitCode, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);
    expect(run.clauses('fail')).toEqual([]);
    // The SSE path went through nginx and was judged, not skipped.
    for (const c of ['SVC-5', 'EV-1', 'EV-2', 'EV-4', 'EV-6']) expect(run.tests(c).map((t) => t.verdict), c).toContain('pass');
    const log = nginx.log();
    expect(log).toMatch(/POST \/v1\/chat\/completions 200 gzip=\d+\.\d+ type=text\/event-stream/);
    expect(log).toMatch(/GET \/v1\/models 200 gzip=\d+\.\d+ type=application\/json/);
    expect(run.results?.target).toBe(env.TARGET_URL);
    for (const key of ref.keys) expect(run.stdout + run.stderr + run.report('results.json')).not.toContain(key);
  }, HANG_GUARD_MS);

  it('without NODE_EXTRA_CA_CERTS: one line naming the fix, exit 2, nothing written', async () => {
    const before = nginx.log().length;
    const run = await runSuite(env);
    expect(run.exitCode, run.stderr).toBe(2);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^chatgate: configuration error: TARGET_URL: https:\/\/localhost:\d+\/v1 cannot be reached: TLS: the certificate of localhost is not signed by a CA Node trusts \([A-Z_]+\); .*set NODE_EXTRA_CA_CERTS=\/path\/to\/ca\.pem/);
    expect(existsSync(run.reportsDir) ? readdirSync(run.reportsDir) : []).toEqual([]);
    // The handshake failed: nginx never saw a request.
    expect(nginx.log().length).toBe(before);
  }, HANG_GUARD_MS);
});

// EV-13 through a real buffering proxy: the reference writes a 48-word stream over about
// 1.5 s; nginx that ignores X-Accel-Buffering holds it with proxy_buffering on (all of it
// at the end: a warning) and passes it on as written with proxy_buffering off (a pass).
describe('EV-13 behind nginx: proxy_buffering decides the verdict', () => {
  for (const buffering of ['on', 'off'] as const) {
    it(`proxy_buffering ${buffering}: EV-13 ${buffering === 'on' ? 'warns' : 'passes'}`, async () => {
      const slow = await referenceTarget({ latency: { ttftMs: 50, itlMs: 30 }, replyWords: 48 });
      const proxy = await startNginx({ upstream: new URL(slow.env.TARGET_URL!).origin, cert: certs.localhost.cert, key: certs.localhost.key, buffering });
      try {
        const run = await runSuite({ ...slow.env, TARGET_URL: `https://localhost:${proxy.port}/v1`, NODE_EXTRA_CA_CERTS: certs.ca }, { args: ['events'] });
        const ev13 = run.tests('EV-13');
        expect(ev13.map((t) => t.verdict), `${run.stderr}\n${run.stdout.slice(-2000)}`).toEqual([buffering === 'on' ? 'warn' : 'pass']);
        if (buffering === 'on') expect(ev13[0]!.message).toMatch(/all 48 content chunks arrived in the last \d+ ms of \d+ ms \([12] reads?\)/);
      } finally {
        await proxy.close();
        await slow.close();
      }
    }, HANG_GUARD_MS);
  }
});
