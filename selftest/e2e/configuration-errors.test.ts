// A bad configuration is one line naming the variable, exit 2, and no request sent.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSuite } from '../support/run-suite.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

let requests = 0;
const server = createServer((_req, res) => { requests++; res.end('{}'); });
let origin = '';
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const cases: Array<[string, Record<string, string>, RegExp]> = [
  ['a TARGET_URL that is not a URL', { TARGET_URL: 'staging.example/v1', API_KEY: 'sk-test-123456789' }, /TARGET_URL: .*not a URL/],
  ['a TARGET_URL with another scheme', { TARGET_URL: 'ftp://127.0.0.1/v1', API_KEY: 'sk-test-123456789' }, /TARGET_URL: scheme ftp:/],
  ['a TARGET_URL whose path does not end in /v1', { TARGET_URL: 'ORIGIN/v2', API_KEY: 'sk-test-123456789' }, /TARGET_URL: path "\/v2" does not end with \/v1/],
  ['a TARGET_URL without API_KEY', { TARGET_URL: 'ORIGIN/v1' }, /API_KEY: is required when TARGET_URL is set/],
  ['a TIMEOUT_MS that is not a number', { TARGET_URL: 'ORIGIN/v1', API_KEY: 'sk-test-123456789', TIMEOUT_MS: 'soon' }, /TIMEOUT_MS: "soon" is not a whole number/],
  ['a BRAIN_ID that is not a uuid', { TARGET_URL: 'ORIGIN/v1', API_KEY: 'sk-test-123456789', BRAIN_ID: 'brain-1' }, /BRAIN_ID: "brain-1" is not a uuid/],
  ['a CLAUSES glob matching nothing', { TARGET_URL: 'ORIGIN/v1', API_KEY: 'sk-test-123456789', CLAUSES: 'NOPE-*' }, /CLAUSES: "NOPE-\*" matches no clause/],
  ['an unknown reference defect', { REFERENCE_DEFECT: 'no-such-defect' }, /no-such-defect/],
  ['an extra header named Authorization', { TARGET_URL: 'ORIGIN/v1', API_KEY: 'sk-test-123456789', HEADERS: 'Authorization: Bearer sk-test-123456789' }, /HEADERS: the header: Authorization may not be set here: the key goes in API_KEY/],
  ['a hop-by-hop extra header', { TARGET_URL: 'ORIGIN/v1', API_KEY: 'sk-test-123456789', HEADERS: 'x-tenant: a\nProxy-Authorization: Basic sk-test-123456789' }, /HEADERS: line 2: Proxy-Authorization may not be set here: it is a hop-by-hop header/],
  ['a malformed HEADERS line (a secret value with a control character is not quoted)', { HEADERS: 'x-api-key: sk-test-123456789\u0007' }, /HEADERS: the header: the value of x-api-key holds a control or non-ASCII character/],
  ['an extra header named Host, on line 2', { HEADERS: 'x-a: 1\nHost: staging.example' }, /HEADERS: line 2: Host may not be set here: it comes from TARGET_URL/],
  ['a HEADERS_FILE that does not exist', { HEADERS_FILE: '/nonexistent/chatgate-headers.txt' }, /HEADERS_FILE: \/nonexistent\/chatgate-headers.txt cannot be read \(ENOENT\)/],
];

describe('configuration errors', () => {
  for (const [what, env, message] of cases) {
    it(`${what}: one line, exit 2, no request`, async () => {
      const before = requests;
      const run = await runSuite(Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.replace('ORIGIN', origin)])));
      expect(run.exitCode).toBe(2);
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^chatgate: configuration error: /);
      expect(lines[0]).toMatch(message);
      expect(lines[0]).not.toContain('sk-test-123456789');
      expect(requests).toBe(before);
    }, HANG_GUARD_MS);
  }
});
