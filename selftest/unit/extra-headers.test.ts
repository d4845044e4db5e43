// HEADERS and HEADERS_FILE: how the lines are split and checked (lib/http/header-lines.ts,
// lib/run/config.ts), which values count as secrets and where they are masked, that the
// raw client and the client libraries' fetch send them, that AUTH-9's echo scan looks
// for them, and that they never follow a redirect to another origin.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadExtraHeaders } from '../../lib/run/config.ts';
import { HARMLESS_HEADERS, oneLineWarnings, parseHeaderLines } from '../../lib/http/header-lines.ts';
import { extraHeaders } from '../../lib/http/extra-headers.ts';
import { isCredentialHeader, redact } from '../../lib/run/redact.ts';
import { toCurl } from '../../lib/http/curl.ts';
import { HttpClient } from '../../lib/http/http-client.ts';
import { makeGuardedFetch } from '../../harness/clients/fetch.ts';

const SECRET = `pk-live-${Math.random().toString(36).slice(2, 12)}`;

function problem(text: string): string | undefined {
  const r = parseHeaderLines(text);
  return 'problem' in r ? r.problem : undefined;
}

describe('HEADERS lines', () => {
  it('one "Name: value" a line (LF or CRLF); blank and # lines ignored; ";" and "," stay inside a value', () => {
    const r = parseHeaderLines('x-portkey-provider: openai\r\n\n# a comment\nCF-Access-Client-Secret:  abc;def, ghi  \nx-tenant:team-a');
    expect(r).toEqual({ headers: [
      { name: 'x-portkey-provider', value: 'openai', secret: false },
      { name: 'CF-Access-Client-Secret', value: 'abc;def, ghi', secret: true },
      { name: 'x-tenant', value: 'team-a', secret: false },
    ] });
  });

  it('a value may hold a colon (a URL): only the first colon ends the name', () => {
    expect(parseHeaderLines('x-portkey-custom-host: http://127.0.0.1:8080/v1')).toEqual({ headers: [{ name: 'x-portkey-custom-host', value: 'http://127.0.0.1:8080/v1', secret: false }] });
  });

  it.each([
    'Authorization', 'authorization', 'Content-Type', 'Host', 'Content-Length', 'Accept', 'Accept-Encoding',
    'Connection', 'Keep-Alive', 'Proxy-Authorization', 'Proxy-Connection', 'TE', 'Trailer', 'Transfer-Encoding', 'Upgrade',
  ])('refuses %s', (name) => {
    expect(problem(`${name}: x`)).toMatch(new RegExp(`^the header: ${name} may not be set here: `));
  });

  it.each([
    ['no colon', 'x-tenant team-a', /is not "Name: value"/],
    ['a space before the colon', 'x-tenant : a', /is not a header name/],
    ['an empty name', ': a', /is not "Name: value"/],
    ['no value', 'x-tenant:   ', /x-tenant has no value/],
    ['a control character', 'x-tenant: a\u0001b', /control or non-ASCII/],
    ['a non-ASCII character', 'x-tenant: é', /control or non-ASCII/],
    ['a name given twice', 'x-a: 1\nX-A: 2', /line 2: X-A is given twice/],
  ])('rejects %s', (_what, text, message) => {
    expect(problem(text)).toMatch(message);
  });

  it('several headers written on one line with ";" are one value (legal), with a warning that names the header only', () => {
    const r = parseHeaderLines(`x-portkey-provider: openai; x-portkey-api-key: ${SECRET}`);
    expect('headers' in r && r.headers).toEqual([{ name: 'x-portkey-provider', value: `openai; x-portkey-api-key: ${SECRET}`, secret: false }]);
    const warnings = oneLineWarnings('headers' in r ? r.headers : []);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^the value of x-portkey-provider looks like more headers/);
    expect(warnings[0]).not.toContain(SECRET);
    // Cookies, URLs and JSON do not trip it.
    const ok = parseHeaderLines('cookie: a=1; b=2\nx-portkey-custom-host: http://h:8080/v1\nx-portkey-config: {"a": 1, "b": 2}');
    expect(oneLineWarnings('headers' in ok ? ok.headers : [])).toEqual([]);
  });

  it('a problem never quotes a value (it may be a secret)', () => {
    expect(problem(`x-api-key: ${SECRET}\u0007`)).not.toContain(SECRET);
  });

  it('the allow-list of harmless names is short and holds no credential name', () => {
    expect(HARMLESS_HEADERS.length).toBeLessThanOrEqual(10);
    for (const n of HARMLESS_HEADERS) expect(n).not.toMatch(/(^|-)(key|secret|token|auth\w*|cookie|password|session)(-|$)/i);
  });
});

describe('HEADERS and HEADERS_FILE in the configuration', () => {
  let dir: string;
  beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'chatgate-headers-')); });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('both sources add up; the config carries them', () => {
    const file = join(dir, 'h.txt');
    writeFileSync(file, `# gateway\nx-portkey-api-key: ${SECRET}\n`);
    const config = loadConfig({ HEADERS: 'x-portkey-provider: openai', HEADERS_FILE: file });
    expect(config.extraHeaders.map((h) => [h.name, h.secret])).toEqual([['x-portkey-provider', false], ['x-portkey-api-key', true]]);
  });

  it.each([
    ['a name in both', { HEADERS: 'x-a: 1', HEADERS_FILE: 'FILE:X-A: 2' }, 'HEADERS_FILE', /X-A is given in HEADERS and in HEADERS_FILE/],
    ['a file that does not exist', { HEADERS_FILE: '/nonexistent/headers.txt' }, 'HEADERS_FILE', /cannot be read \(ENOENT\)/],
    ['a bad line in the file', { HEADERS_FILE: 'FILE:x-a: 1\nHost: evil' }, 'HEADERS_FILE', /: line 2: Host may not be set here/],
    ['a refused name inline', { HEADERS: 'Connection: close' }, 'HEADERS', /Connection may not be set here: it is a hop-by-hop header/],
  ])('%s is a configuration error naming the variable', (_what, env, variable, message) => {
    const resolved: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) {
      if (v.startsWith('FILE:')) { const f = join(dir, `${k}-${Math.random()}.txt`); writeFileSync(f, v.slice(5)); resolved[k] = f; } else resolved[k] = v;
    }
    let err: unknown;
    try { loadExtraHeaders(resolved); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe(variable);
    expect((err as ConfigError).message).toMatch(message);
  });
});

// Servers: one that echoes the request headers it got into its body (a hostile target for
// AUTH-9), and one that redirects to another origin (which records whatever reaches it).
let echo: Server;
let other: Server;
let redirector: Server;
const otherGot: IncomingHttpHeaders[] = [];
const base = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
const saved = { HEADERS: process.env.HEADERS, HEADERS_FILE: process.env.HEADERS_FILE };

beforeAll(async () => {
  echo = createServer((req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ got: req.headers })); });
  other = createServer((req, res) => { otherGot.push(req.headers); res.end('{}'); });
  await Promise.all([echo, other].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()))));
  redirector = createServer((req, res) => { res.statusCode = 307; res.setHeader('location', `${base(other)}${req.url}`); res.end(); });
  await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', () => r()));
  process.env.HEADERS = `x-tenant: team-a\nx-portkey-api-key: ${SECRET}`;
  delete process.env.HEADERS_FILE;
});
afterEach(() => { otherGot.length = 0; });
afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
  await Promise.all([echo, other, redirector].map((s) => new Promise<void>((r) => s.close(() => r()))));
});

describe('the run sends them, and keeps the secret ones secret', () => {
  it('extraHeaders() reads the environment and registers the secret value and name', () => {
    expect(extraHeaders()).toEqual({ 'x-tenant': 'team-a', 'x-portkey-api-key': SECRET });
    expect(redact(`the body said ${SECRET}`)).toBe('the body said ***');
    expect(redact('team-a')).toBe('team-a');
    expect(isCredentialHeader('X-Portkey-Api-Key')).toBe(true);
    expect(isCredentialHeader('x-tenant')).toBe(false);
  });

  it('every curl line carries them, the secret one as ***', () => {
    const line = toCurl({ method: 'GET', url: 'http://127.0.0.1:1/v1/models', headers: { Authorization: 'Bearer sk-abc' } });
    expect(line).toContain(`-H 'x-tenant: team-a'`);
    expect(line).toContain(`-H 'x-portkey-api-key: ***'`);
    expect(line).not.toContain(SECRET);
  });

  it('the raw client sends them (a probe\'s own header wins), shows the secret as ***, and AUTH-9 finds it echoed', async () => {
    const http = new HttpClient({ baseUrl: `${base(echo)}/v1`, timeoutMs: 5000 });
    try {
      const ex = await http.send({ method: 'GET', path: '/models', auth: { key: 'sk-unit-123456789' }, headers: { 'X-Tenant': 'probe-own' } });
      const got = (ex.json as { got: IncomingHttpHeaders }).got;
      expect(got['x-portkey-api-key']).toBe(SECRET);
      expect(got['x-tenant']).toBe('probe-own');
      expect(ex.request.headers['x-portkey-api-key']).toBe('***');
      expect(ex.keyEchoes).toContain('HEADERS x-portkey-api-key');
      expect(ex.curl).not.toContain(SECRET);
    } finally {
      await http.close();
    }
  });

  it('the raw client does not follow a redirect to another origin: the headers never reach it', async () => {
    const http = new HttpClient({ baseUrl: `${base(redirector)}/v1`, timeoutMs: 5000 });
    try {
      const ex = await http.send({ method: 'GET', path: '/models', auth: { key: 'sk-unit-123456789' } });
      expect(ex.status).toBe(307);
    } finally {
      await http.close();
    }
    expect(otherGot).toEqual([]);
  });

  it('the client libraries\' fetch refuses the redirect too (their defaultHeaders never reach another origin)', async () => {
    const f = makeGuardedFetch(5000);
    await expect(f(`${base(redirector)}/v1/models`, { headers: extraHeaders() })).rejects.toThrow();
    expect(otherGot).toEqual([]);
  });
});
