// A real AI gateway in the loop: Portkey's open-source gateway (@portkey-ai/gateway,
// pinned in devDependencies) on 127.0.0.1, routing to the reference server through its
// custom-host header (HEADERS='x-portkey-provider: openai' + 'x-portkey-custom-host: <url>').
//
// First, what the gateway does to each kind of exchange, as found by hand with curl and
// pinned here with plain requests (undici, not chatgate's client): which answers it keeps,
// which it changes. Then the whole suite through it: each clause's verdict must be the one
// those facts imply. Where the gateway breaks the spec that is the finding, pinned as a
// failure; no clause is loosened for it. Last, the gateway opens no connection but to
// its upstream (no telemetry), and never shows a key.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { worst } from '../../runner/report/outcomes.ts';
import { runSuite, type SuiteRun } from '../support/run-suite.ts';
import { referenceTarget, type RunningTarget } from '../support/targets.ts';
import { portkeyHeaders, startPortkey, type Gateway } from '../support/portkey.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

let ref: RunningTarget;
let gw: Gateway;
let upstream: string;

beforeAll(async () => {
  ref = await referenceTarget();
  upstream = ref.env.TARGET_URL!;
  gw = await startPortkey();
}, HANG_GUARD_MS);
afterAll(async () => {
  await gw?.close();
  await ref?.close();
});

interface Answer { status: number; type: string; text: string; json?: any; headers: Record<string, string | string[] | undefined> }

/** One request to the gateway, as curl sends it: the routing headers, a key (or none), a body. */
async function viaGateway(method: string, path: string, opts: { key?: string; auth?: string; body?: string; stream?: boolean } = {}): Promise<Answer> {
  const headers: Record<string, string> = { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': upstream };
  if (opts.auth !== undefined) headers.authorization = opts.auth;
  else if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.stream) headers.accept = 'text/event-stream';
  const res = await request(`${gw.url}${path}`, { method: method as 'GET', headers, body: opts.body, headersTimeout: 20_000, bodyTimeout: 20_000 });
  const text = await res.body.text();
  let json: unknown;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.statusCode, type: String(res.headers['content-type'] ?? ''), text, json, headers: res.headers };
}

const chat = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'svc-auto', messages: [{ role: 'user', content: 'hi' }], ...extra });
/** The gateway's own failure body: not the spec's error body (no error object). */
const GATEWAY_FAILURE = { status: 'failure', message: 'Something went wrong' };

describe('Portkey gateway 1.15.2 in front of the reference: what it keeps and what it changes', () => {
  // --- kept --------------------------------------------------------------------------
  it('keeps: a chat completion (200, the reference\'s body; it adds x-portkey-* response headers)', async () => {
    const a = await viaGateway('POST', '/chat/completions', { key: ref.env.API_KEY, body: chat() });
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'stop' }] });
    expect(a.headers['x-portkey-provider']).toBe('openai');
  });

  it('keeps: 401 without a key and with an unknown one, 403 for a key without brains:invoke, 400 for bad fields, 404 for an unknown model and path; error messages get an "openai error: " prefix and the body a "provider" field', async () => {
    const cases: Array<[number, Promise<Answer>]> = [
      [401, viaGateway('POST', '/chat/completions', { body: chat() })],
      [401, viaGateway('POST', '/chat/completions', { key: 'sk-unknown-0123456789', body: chat() })],
      [401, viaGateway('POST', '/chat/completions', { auth: `Basic ${ref.env.API_KEY}`, body: chat() })],
      [401, viaGateway('POST', '/chat/completions', { body: chat({ stream: true }), stream: true })],
      [403, viaGateway('POST', '/chat/completions', { key: ref.env.LIMITED_API_KEY, body: chat({ model: `brain:${ref.env.BRAIN_ID}` }) })],
      [400, viaGateway('POST', '/chat/completions', { key: ref.env.API_KEY, body: JSON.stringify({ model: 123, messages: [] }) })],
      [400, viaGateway('POST', '/chat/completions', { key: ref.env.API_KEY, body: JSON.stringify({ model: 'svc', messages: 'hi' }) })],
      [404, viaGateway('POST', '/chat/completions', { key: ref.env.API_KEY, body: chat({ model: 'no-such-model' }) })],
      [404, viaGateway('POST', '/images/generations', { key: ref.env.API_KEY, body: '{"prompt":"x"}' })],
      [404, viaGateway('GET', '/no-such-path', { key: ref.env.API_KEY })],
    ];
    for (const [status, pending] of cases) {
      const a = await pending;
      expect(a.status, a.text).toBe(status);
      expect(a.type).toMatch(/^application\/json/);
      expect(a.json?.error).toMatchObject({ message: expect.any(String), type: expect.any(String), code: expect.any(String) });
    }
    const a = await viaGateway('POST', '/chat/completions', { key: ref.env.LIMITED_API_KEY, body: chat({ model: `brain:${ref.env.BRAIN_ID}` }) });
    expect(a.json.error.message).toMatch(/^openai error: /);
    expect(a.json.provider).toBe('openai');
  });

  it('keeps: 429 past the rate limit, with the reference\'s Retry-After and retry-after-ms', async () => {
    // Bursts of 12 at the reference's 10 a second for this key, at most 5 (a loaded machine may spread one burst over two windows).
    const answers: Answer[] = [];
    for (let burst = 0; burst < 5 && !answers.some((a) => a.status === 429); burst++) {
      answers.push(...await Promise.all(Array.from({ length: 12 }, () => viaGateway('POST', '/chat/completions', { key: ref.env.RATE_LIMIT_API_KEY, body: chat() }))));
    }
    expect(answers.every((a) => a.status === 200 || a.status === 429), answers.map((a) => a.status).join(',')).toBe(true);
    const limited = answers.find((a) => a.status === 429);
    expect(limited, answers.map((a) => a.status).join(',')).toBeDefined();
    expect(limited!.json?.error?.code).toBe('rate_limit_exceeded');
    expect(limited!.headers['retry-after']).toMatch(/^\d+$/);
    expect(limited!.headers['retry-after-ms']).toMatch(/^\d+$/);
    await new Promise((r) => setTimeout(r, 1_100)); // the window passes before the suite runs
  });

  // --- changed -----------------------------------------------------------------------
  it('changes: GET /models, every stream, and POST /brains/{id}/chat answer 500 with the gateway\'s own body instead of 200', async () => {
    const answers = [
      await viaGateway('GET', '/models', { key: ref.env.API_KEY }),
      await viaGateway('POST', '/chat/completions', { key: ref.env.API_KEY, body: chat({ stream: true }), stream: true }),
      await viaGateway('POST', '/chat/completions', { key: ref.env.API_KEY, body: chat({ model: `brain:${ref.env.BRAIN_ID}`, stream: true }), stream: true }),
      await viaGateway('POST', `/brains/${ref.env.BRAIN_ID}/chat`, { key: ref.env.API_KEY, body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }) }),
    ];
    for (const a of answers) {
      expect(a.status, a.text).toBe(500);
      expect(a.json).toEqual(GATEWAY_FAILURE);
      expect(a.headers['x-portkey-gateway-exception']).toBe('true');
    }
    // The same requests straight to the reference succeed: the gateway changed them.
    const direct = await request(`${upstream}/models`, { headers: { authorization: `Bearer ${ref.env.API_KEY}` } });
    await direct.body.dump();
    expect(direct.statusCode).toBe(200);
    // Why: the gateway appends its x-portkey-* headers to the upstream response's Headers,
    // which fetch made immutable; it logs the TypeError and answers 500.
    expect(gw.output()).toMatch(/TypeError: immutable/);
  });

  it('changes: a body that is not JSON gets 500 (the gateway parses it first), with or without a key', async () => {
    for (const key of [ref.env.API_KEY, undefined]) {
      const a = await viaGateway('POST', '/chat/completions', { key, body: '{"model":' });
      expect(a.status).toBe(500);
      expect(a.json).toEqual(GATEWAY_FAILURE);
    }
  });

  it('changes: a request without model reaches the upstream with a model the gateway chose, so it is refused with 404, not 400', async () => {
    const a = await viaGateway('POST', '/chat/completions', { key: ref.env.API_KEY, body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }) });
    expect(a.status).toBe(404);
    expect(a.json.error.code).toBe('model_not_found');
    expect(a.json.error.message).toMatch(/The model '[^']+' does not exist/);
  });

  it('changes: a key sent with no scheme ("Authorization: <key>") is forwarded as a Bearer key and accepted (200, not 401)', async () => {
    const a = await viaGateway('POST', '/chat/completions', { auth: ref.env.API_KEY!, body: chat() });
    expect(a.status).toBe(200);
    const direct = await request(`${upstream}/chat/completions`, { method: 'POST', headers: { authorization: ref.env.API_KEY!, 'content-type': 'application/json' }, body: chat() });
    await direct.body.dump();
    expect(direct.statusCode).toBe(401);
  });

  it('changes: POST /images/edits with a JSON body gets 500 (the other image and video paths keep their 404)', async () => {
    const a = await viaGateway('POST', '/images/edits', { key: ref.env.API_KEY, body: '{"model":"svc","prompt":"x","n":1}' });
    expect(a.status).toBe(500);
    expect(a.json).toEqual(GATEWAY_FAILURE);
    for (const path of ['/images/variations', '/videos', '/videos/generations']) {
      expect((await viaGateway('POST', path, { key: ref.env.API_KEY, body: '{"prompt":"x"}' })).status, path).toBe(404);
    }
  });

  it('changes: a CORS preflight and /v2/models get the gateway\'s own 404 {"message":"Not Found","ok":false}', async () => {
    const pre = await request(`${gw.url}/chat/completions`, { method: 'OPTIONS', headers: { origin: 'https://x.invalid', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' } });
    expect(pre.statusCode).toBe(404);
    expect(await pre.body.json()).toEqual({ message: 'Not Found', ok: false });
  });
});

// Each clause's verdict through the gateway, as the facts above imply. EV-2..EV-11 (and
// any stream clause added later) are inconclusive: no stream ever reaches them (EV-1
// fails); likewise MOD-1 and RES-MOD-1 have no model list, and the client matrix's calls
// that meet a 500 are ERR-2's failure, not the client's.
// AUTH-7, AUTH-8, CHAT-8 and CHAT-9 pass in their plain forms; their streaming forms meet
// the 500 every stream gets, which is SVC-5's failure: inconclusive, not failed twice.
const THROUGH_PORTKEY: Record<string, string> = {
  'SVC-1': 'pass', 'SVC-2': 'fail', 'SVC-3': 'fail', 'SVC-4': 'inconclusive', 'SVC-4b': 'inconclusive', 'SVC-5': 'fail', 'SVC-6': 'pass', 'SVC-7': 'info', 'SVC-8': 'pass',
  // Plain replies are judged whose they are (streams through it are all 500s); no stream to time a cancellation with.
  'SVC-9': 'pass', 'SVC-10': 'inconclusive',
  'RES-CC-1': 'pass', 'RES-CC-2': 'pass', 'RES-CC-3': 'pass', 'RES-CC-4': 'pass', 'RES-CC-5': 'pass',
  'RES-CH-1': 'pass', 'RES-CH-2': 'pass', 'RES-CH-3': 'pass', 'RES-CH-4': 'pass', 'RES-MSG-1': 'pass', 'RES-US-1': 'pass', 'RES-US-2': 'pass', 'RES-MOD-1': 'inconclusive',
  'MOD-1': 'inconclusive', 'MOD-2': 'fail',
  'CHAT-1': 'pass', 'CHAT-2': 'fail', 'CHAT-3': 'pass', 'CHAT-4': 'pass', 'CHAT-5': 'pass', 'CHAT-6': 'fail', 'CHAT-7': 'pass', 'CHAT-8': 'inconclusive', 'CHAT-9': 'inconclusive',
  'BRAIN-1': 'fail', 'BRAIN-2': 'pass', 'BRAIN-3': 'pass', 'BRAIN-4': 'pass', 'BRAIN-5': 'warn', 'BRAIN-6': 'info',
  'UNAV-1': 'pass', 'UNAV-2': 'pass', 'UNAV-3': 'warn',
  'AUTH-1': 'pass', 'AUTH-2': 'pass', 'AUTH-3': 'fail', 'AUTH-4': 'fail', 'AUTH-5': 'pass', 'AUTH-6': 'pass', 'AUTH-7': 'inconclusive', 'AUTH-8': 'inconclusive', 'AUTH-9': 'pass',
  'EV-1': 'fail',
  'ERR-1': 'fail', 'ERR-2': 'fail', 'ERR-3': 'pass', 'ERR-4': 'inconclusive', 'ERR-5': 'info',
  'LIM-1': 'pass', 'LIM-2': 'pass', 'LIM-3': 'pass', 'LIM-4': 'info',
  'VER-1': 'pass', 'VER-2': 'info',
};
// Which test of each failing clause carries the finding (the hand-found fact above).
const FINDINGS: Array<[string, RegExp]> = [
  ['SVC-2', /GET \/models answers 200/], ['MOD-2', /GET \/models with a valid key/],
  ['EV-1', /stream: true answers 200/], ['SVC-5', /stream: true is answered/],
  ['BRAIN-1', /POST \/brains\/\{id\}\/chat/], ['SVC-3', /brain answers on POST/],
  ['CHAT-2', /without model gets 400/], ['CHAT-6', /not JSON gets 400/],
  ['AUTH-3', /the valid key with no scheme/],
  ['AUTH-4', /no key and a body that is not JSON/], ['UNAV-3', /POST \/images\/edits/],
];

describe('the whole suite through the gateway (HEADERS routes it)', () => {
  let run: SuiteRun;
  beforeAll(async () => {
    run = await runSuite({
      ...ref.env, TARGET_URL: gw.url, HEADERS: portkeyHeaders(upstream),
      // A fixed fuzz seed: the same generated requests every run; with this one the fuzz phase fails only clauses the fixed probes fail already (CHAT-2, CHAT-6, ERR-1, ERR-2).
      FUZZ_SEED: '75353744',
    });
  }, HANG_GUARD_MS);

  it('exit 1, and every clause has the verdict the hand-found facts imply', () => {
    expect(run.exitCode, run.stderr).toBe(1);
    const got: Record<string, string> = {};
    for (const t of run.results?.tests ?? []) got[t.clause] = worst(run.tests(t.clause))!;
    const expected: Record<string, string> = { ...THROUGH_PORTKEY };
    for (const clause of Object.keys(got)) if (!(clause in expected) && clause.startsWith('EV-')) expected[clause] = 'inconclusive';
    expect(got).toEqual(expected);
  });

  it('each failure is reported on the test that meets the gateway\'s change, with the gateway\'s answer as what was seen', () => {
    for (const [clause, title] of FINDINGS) {
      const failing = run.tests(clause).filter((t) => t.verdict === 'fail' || t.verdict === 'warn');
      expect(failing.map((t) => t.title).some((t) => title.test(t)), `${clause}: ${failing.map((t) => t.title).join(' | ')}`).toBe(true);
    }
    const svc2 = run.tests('SVC-2').find((t) => t.verdict === 'fail')!;
    expect(JSON.stringify(svc2)).toContain('Something went wrong');
    // The curl line of a failure reproduces it through the gateway: the routing headers are on it.
    expect(svc2.curl).toContain(`-H 'x-portkey-provider: openai'`);
    expect(svc2.curl).toContain(`-H 'x-portkey-custom-host: ${upstream}'`);
  });

  it('the gateway connected to nothing but its upstream (no telemetry), and neither it nor the run shows a key', () => {
    const outbound = new Set(gw.outbound());
    expect([...outbound]).toEqual([new URL(upstream).host]);
    for (const key of ref.keys) {
      expect(gw.output(), 'the gateway\'s log').not.toContain(key);
      expect(run.stdout + run.stderr + run.report('results.json') + run.report('summary.md')).not.toContain(key);
    }
  });
});
