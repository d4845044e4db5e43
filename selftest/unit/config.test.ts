import { describe, expect, it } from 'vitest';
import { ConfigError, checkReferenceNames, loadConfig, parseTargetUrl } from '../../lib/run/config.ts';

const fails = (env: Record<string, string>, variable: string, text: RegExp) => {
  let err: unknown;
  try { loadConfig(env); } catch (e) { err = e; }
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as ConfigError).variable).toBe(variable);
  expect((err as Error).message).toMatch(text);
  expect((err as Error).message.split('\n')).toHaveLength(1);
};

describe('configuration', () => {
  it('defaults to the embedded target', () => {
    const c = loadConfig({});
    expect(c.targetUrl).toBeUndefined();
    expect(c).toMatchObject({ models: ['svc-auto', 'svc'], timeoutMs: 30000, rateLimitProbeMax: 300, strict: false });
  });
  it('normalises a base URL with a trailing slash', () => {
    expect(parseTargetUrl('https://staging.example/v1/')).toBe('https://staging.example/v1');
    expect(parseTargetUrl('http://127.0.0.1:8080/api/v1')).toBe('http://127.0.0.1:8080/api/v1');
  });
  it('refuses what is not a usable base URL (VER-1)', () => {
    fails({ TARGET_URL: 'not a url', API_KEY: 'k' }, 'TARGET_URL', /not a URL/);
    fails({ TARGET_URL: 'ftp://h/v1', API_KEY: 'k' }, 'TARGET_URL', /scheme ftp:/);
    fails({ TARGET_URL: 'https://h/v2', API_KEY: 'k' }, 'TARGET_URL', /does not end with \/v1/);
    fails({ TARGET_URL: 'https://h/', API_KEY: 'k' }, 'TARGET_URL', /does not end with \/v1.*https:\/\/h\/v1/);
    fails({ TARGET_URL: 'https://u:p@h/v1', API_KEY: 'k' }, 'TARGET_URL', /credentials/);
    fails({ TARGET_URL: 'https://h/v1?x=1', API_KEY: 'k' }, 'TARGET_URL', /query/);
  });
  it('needs API_KEY for a remote target, and keys must be header-safe', () => {
    fails({ TARGET_URL: 'https://h/v1' }, 'API_KEY', /required/);
    fails({ TARGET_URL: 'https://h/v1', API_KEY: 'sk-a b' }, 'API_KEY', /spaces/);
  });
  it('checks numbers, uuids, models and STRICT', () => {
    fails({ TIMEOUT_MS: '5s' }, 'TIMEOUT_MS', /not a whole number/);
    fails({ TIMEOUT_MS: '10' }, 'TIMEOUT_MS', /out of range/);
    fails({ RATE_LIMIT_PROBE_MAX: '-1' }, 'RATE_LIMIT_PROBE_MAX', /not a whole number/);
    fails({ BRAIN_ID: 'abc' }, 'BRAIN_ID', /not a uuid/);
    fails({ MODELS: ' , ' }, 'MODELS', /no model/);
    fails({ STRICT: 'yes' }, 'STRICT', /not 1 or 0/);
    expect(loadConfig({ STRICT: '1', MODELS: 'a, b', RATE_LIMIT_PROBE_MAX: '0' })).toMatchObject({ strict: true, models: ['a', 'b'], rateLimitProbeMax: 0 });
  });
  it('never puts a key in its message', () => {
    try { loadConfig({ TARGET_URL: 'https://h/v1', API_KEY: 'sk-secret value' }); } catch (e) {
      expect((e as Error).message).not.toContain('sk-secret');
    }
  });
  it('owns the run policy too: CLAUSES, RETRY_FAILED, EXPECTATIONS, REPORTS_DIR, the embedded defect and variants', () => {
    fails({ CLAUSES: 'NOPE-*' }, 'CLAUSES', /matches no clause id/);
    fails({ RETRY_FAILED: '11' }, 'RETRY_FAILED', /not a whole number from 0 to 10/);
    const c = loadConfig({ CLAUSES: ' AUTH-*,EV-1 ', RETRY_FAILED: '2', EXPECTATIONS: ' known.yaml ', REPORTS_DIR: '/tmp/x', REFERENCE_DEFECT: 'd', REFERENCE_VARIANTS: 'a, b,' });
    expect(c).toMatchObject({ clauses: 'AUTH-*,EV-1', retryFailed: 2, expectationsFile: 'known.yaml', reportsDir: '/tmp/x', reference: { defect: 'd', variants: ['a', 'b'] } });
    expect(loadConfig({}).reportsDir).toMatch(/\/reports$/);
    const names = { defects: ['d'], variants: ['a', 'b'] };
    expect(() => checkReferenceNames(c.reference, names)).not.toThrow();
    expect(() => checkReferenceNames({ defect: 'x', variants: [] }, names)).toThrow(/REFERENCE_DEFECT: "x" is not a defect/);
    expect(() => checkReferenceNames({ variants: ['a', 'z'] }, names)).toThrow(/REFERENCE_VARIANTS: "z" is not a variant/);
  });
});
