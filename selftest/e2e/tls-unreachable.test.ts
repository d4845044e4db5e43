// Issue 12, part 1: a target the run cannot reach at all is a configuration problem.
// Before any test the runner sends one GET /models (lib/http/preflight.ts); no HTTP answer
// is exit 2 with ONE line naming the cause and the fix, and nothing written: no
// reports, no history entry. Each cause is provoked for real: a closed port, a name
// under .invalid (RFC 6761: NXDOMAIN without any network), a server that never
// answers, TLS servers started here with certificates made here (self-signed, a
// private CA not trusted, expired, wrong host name), a proxy that refuses.
// The legal counterparts: the same TLS server with its CA trusted, and any HTTP
// answer even a 503, let the run go on. The load harness shares the check.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoad } from '../support/run-load.ts';
import { runSuite, type SuiteRun } from '../support/run-suite.ts';
import { freePort } from '../support/daemons.ts';
import { makeTestCerts, pem, type Pair, type TestCerts } from '../support/tls.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

const KEY = 'sk-staging-test-0123456789abcdef';
let certs: TestCerts;
const servers: Array<Server | TcpServer> = [];
const held = new Set<Socket>();
let answered = 0;

async function listen(server: Server | TcpServer): Promise<number> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return (server.address() as AddressInfo).port;
}

/** An https server with this certificate; answers 503 with an error body to anything that gets through. */
function tlsServer(pair: Pair): Promise<number> {
  return listen(createHttpsServer({ cert: pem(pair.cert), key: pem(pair.key) }, (_q, r) => {
    answered++;
    r.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"down","type":"server_error","code":"down"}}');
  }));
}

const ports: Record<string, number> = {};
beforeAll(async () => {
  certs = makeTestCerts();
  ports.selfSigned = await tlsServer(certs.selfSigned);
  ports.localhost = await tlsServer(certs.localhost);
  ports.expired = await tlsServer(certs.expired);
  ports.wrongHost = await tlsServer(certs.wrongHost);
  // Accepts connections and never answers (a hung ingress).
  ports.silent = await listen(createTcpServer((s) => { held.add(s); s.on('error', () => {}); }));
  ports.closed = await freePort();
  ports.http = await listen(createHttpServer((_q, r) => { answered++; r.writeHead(404).end(); }));
}, HANG_GUARD_MS);
afterAll(async () => {
  for (const s of held) s.destroy();
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  if (certs) rmSync(certs.dir, { recursive: true, force: true });
});

function expectNothingWritten(run: SuiteRun): void {
  const written = existsSync(run.reportsDir) ? readdirSync(run.reportsDir) : [];
  expect(written, 'no reports, no history entry').toEqual([]);
}

function expectOneLine(run: SuiteRun, variable: string, cause: RegExp): string {
  expect(run.exitCode, run.stderr).toBe(2);
  const lines = run.stderr.trim().split('\n');
  expect(lines, run.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^chatgate: configuration error: ${variable}: `));
  expect(lines[0]).toMatch(cause);
  expect(run.stdout + run.stderr).not.toContain(KEY);
  expectNothingWritten(run);
  return lines[0]!;
}

const target = (origin: string) => ({ TARGET_URL: `${origin}/v1`, API_KEY: KEY });

// Concurrent (vitest runs up to 5 at once): each is a short child process that fails before any test.
describe.concurrent('a target the run cannot reach: one line, exit 2, nothing written', () => {
  const cases: Array<[string, () => Record<string, string>, string, RegExp]> = [
    ['connection refused', () => target(`http://127.0.0.1:${ports.closed}`), 'TARGET_URL', /was refused \(ECONNREFUSED\); check the address and port/],
    ['unknown host (.invalid)', () => target('https://chatgate-staging.invalid'), 'TARGET_URL', /host chatgate-staging\.invalid is not found \(DNS ENOTFOUND\)|the DNS lookup of chatgate-staging\.invalid got no answer \(EAI_AGAIN\)/],
    ['no answer within TIMEOUT_MS', () => ({ ...target(`http://127.0.0.1:${ports.silent}`), TIMEOUT_MS: '1000' }), 'TARGET_URL', /no HTTP answer within 1000 ms \(timeout\); .*raise TIMEOUT_MS/],
    ['a self-signed certificate', () => target(`https://localhost:${ports.selfSigned}`), 'TARGET_URL', /not signed by a CA Node trusts \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\); .*set NODE_EXTRA_CA_CERTS=\/path\/to\/ca\.pem/],
    ['a private CA that is not trusted', () => target(`https://localhost:${ports.localhost}`), 'TARGET_URL', /not signed by a CA Node trusts \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN)\); .*NODE_EXTRA_CA_CERTS=/],
    ['an expired certificate (CA trusted)', () => ({ ...target(`https://localhost:${ports.expired}`), NODE_EXTRA_CA_CERTS: certs.ca }), 'TARGET_URL', /the certificate of localhost has expired \(CERT_HAS_EXPIRED\)/],
    ['a certificate for another host (CA trusted)', () => ({ ...target(`https://localhost:${ports.wrongHost}`), NODE_EXTRA_CA_CERTS: certs.ca }), 'TARGET_URL', /not valid for localhost \(it names DNS:other\.chatgate\.invalid\) \(ERR_TLS_CERT_ALTNAME_INVALID\)/],
    ['a proxy that refuses', () => ({ ...target('https://staging.chatgate.invalid'), HTTPS_PROXY: `http://user:proxy-pass-123@127.0.0.1:${ports.closed}` }), 'HTTPS_PROXY', /proxy http:\/\/user:\*\*\*@127\.0\.0\.1:\d+\/ \(for staging\.chatgate\.invalid:443\): it refused the connection \(ECONNREFUSED\); .*NO_PROXY=staging\.chatgate\.invalid/],
  ];
  for (const [what, env, variable, cause] of cases) {
    it(`${what}`, async () => {
      const before = answered;
      const run = await runSuite(env());
      const line = expectOneLine(run, variable, cause);
      expect(line).not.toContain('proxy-pass-123');
      expect(answered).toBe(before);
    }, HANG_GUARD_MS);
  }
});

describe('the legal counterparts: any HTTP answer lets the run go on', () => {
  it('the same TLS server with its CA trusted (NODE_EXTRA_CA_CERTS), answering 503: the run goes on and judges it', async () => {
    const before = answered;
    const run = await runSuite({ ...target(`https://localhost:${ports.localhost}`), NODE_EXTRA_CA_CERTS: certs.ca }, { args: ['models'] });
    expect(run.exitCode, run.stderr).toBe(1);
    expect(answered - before).toBeGreaterThan(1);
    expect(run.results?.summary.fail).toBeGreaterThan(0);
    expect(run.stdout + run.stderr + run.report('results.json')).not.toContain(KEY);
  }, HANG_GUARD_MS);
});

describe('the load harness shares the check', () => {
  it('npm run load against an untrusted certificate: exit 2, the same cause and fix, no report', async () => {
    const before = answered;
    const out = join(certs.dir, 'load-out');
    const r = await runLoad(['stream', '--duration', '2', '--quiet', '--out', out], target(`https://localhost:${ports.selfSigned}`));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^chatgate load: TARGET_URL: .*not signed by a CA Node trusts .*NODE_EXTRA_CA_CERTS=\/path\/to\/ca\.pem/);
    expect(r.stdout + r.stderr).not.toContain(KEY);
    expect(existsSync(out)).toBe(false);
    expect(answered).toBe(before);
  }, HANG_GUARD_MS);

  it('throughput at fixed connections (autocannon) with a proxy in force: refused with the way out, before any request', async () => {
    const before = answered;
    const r = await runLoad(['throughput', '--duration', '2', '--quiet'], { ...target(`http://127.0.0.1:${ports.http}`), HTTP_PROXY: `http://127.0.0.1:${ports.closed}` });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^chatgate load: HTTP_PROXY: throughput at fixed connections runs on autocannon, which cannot go through a proxy; give --rate <n> .*or set NO_PROXY=127\.0\.0\.1/);
    expect(answered).toBe(before);
  }, HANG_GUARD_MS);
});
