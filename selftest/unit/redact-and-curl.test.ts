import { describe, expect, it } from 'vitest';
import { addSecret, maskAuthorization, nearMissKeys, redact, redactDeep, redactUrl } from '../../lib/run/redact.ts';
import { toCurl } from '../../lib/http/curl.ts';

describe('redaction', () => {
  addSecret('sk-unit-secret-0123456789', 'API_KEY');
  it('masks every occurrence of a registered key, in text and in nested values', () => {
    expect(redact('a sk-unit-secret-0123456789 b sk-unit-secret-0123456789')).toBe('a *** b ***');
    expect(redactDeep({ x: ['sk-unit-secret-0123456789'], y: { 'sk-unit-secret-0123456789': 1 } })).toEqual({ x: ['***'], y: { '***': 1 } });
  });
  it('ignores strings too short to be keys', () => {
    addSecret('abc');
    expect(redact('abc')).toBe('abc');
  });
  it('masks any Authorization value but keeps its scheme', () => {
    expect(maskAuthorization('Bearer anything')).toBe('Bearer ***');
    expect(maskAuthorization('Basic dXNlcjpwYXNz')).toBe('Basic ***');
    expect(maskAuthorization('barekey')).toBe('***');
    expect(maskAuthorization('Bearer ')).toBe('Bearer ');
  });
});

describe('curl reproduction', () => {
  it('reproduces method, URL, headers and body, with the key masked and quotes escaped', () => {
    const c = toCurl({
      method: 'POST', url: 'http://127.0.0.1:1/v1/chat/completions',
      headers: { authorization: 'Bearer sk-unit-secret-0123456789', 'content-type': 'application/json', 'accept-encoding': 'gzip' },
      body: `{"messages":[{"content":"it's"}]}`, stream: true,
    });
    expect(c).toBe(`curl -sS -i --compressed -N -X POST 'http://127.0.0.1:1/v1/chat/completions' -H 'authorization: Bearer ***' -H 'content-type: application/json' --data-raw '{"messages":[{"content":"it'\\''s"}]}'`);
    expect(c).not.toContain('sk-unit-secret');
  });
  it('masks a key that shows up in the body too', () => {
    expect(toCurl({ method: 'POST', url: 'http://h/v1/x', headers: {}, body: '{"k":"sk-unit-secret-0123456789"}' })).toContain('{"k":"***"}');
  });
});

describe('keys offered another way, and near misses', () => {
  addSecret('sk-unit-nearmiss-abcdef0123', 'API_KEY');
  it('masks the near misses AUTH-2 sends like the key, longest first', () => {
    const misses = nearMissKeys('sk-unit-nearmiss-abcdef0123').map((m) => m.value);
    expect(misses).toEqual(['sk-unit-nearmiss-abcdef0124', 'sk-unit-nearmiss-abcdef01230a', 'SK-UNIT-NEARMISS-ABCDEF0123']);
    for (const m of misses) expect(redact(`key ${m} end`)).toBe('key *** end');
  });
  it('masks credential query parameters and credential headers in curl lines, registered or not', () => {
    const c = toCurl({
      method: 'GET', url: 'http://127.0.0.1:1/v1/models?api_key=sk-unregistered-1234&key=sk-unit-nearmiss-abcdef0123&limit=2',
      headers: { 'x-api-key': 'sk-unregistered-5678', 'api-key': 'sk-unregistered-9abc', accept: 'application/json' },
    });
    expect(c).toBe(`curl -sS -i --compressed 'http://127.0.0.1:1/v1/models?api_key=***&key=***&limit=2' -H 'x-api-key: ***' -H 'api-key: ***' -H 'accept: application/json'`);
    expect(redactUrl('http://h/v1/models?model=svc')).toBe('http://h/v1/models?model=svc');
  });
});
