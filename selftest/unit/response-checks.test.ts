// The per-response rules (lib/spec/rules/response-rules.ts): each rule breaks on its own kind of
// exchange and on nothing else; every kind of traffic reaches them (raw client attempts
// including each 429 waited out, client-library streams read from the wire text, the
// fuzz phase, the preflight); the run-wide records report each once, with the first
// offender and a count; the fuzz oracles reuse them for ERR-1/ERR-2.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { checkResponse, RESPONSE_RULES } from '../../lib/spec/rules/response-rules.ts';
import { foldIntoProbes, runWideChecks, runWideTestIds, runWideTests } from '../../runner/run-wide-checks.ts';
import { summarise, summariseParts, type ExchangeSummary } from '../../harness/exchange-log.ts';
import { addSecret, echoedSecretLabels } from '../../lib/run/redact.ts';
import { HttpClient, type Exchange } from '../../lib/http/http-client.ts';
import { judge, measureBaseline } from '../../fuzz/oracles.ts';
import type { TestRecord } from '../../lib/run/verdicts.ts';

const BASE = 'http://127.0.0.1:8080/v1';
const url = `${BASE}/chat/completions`;
const clean = (extra: Partial<ExchangeSummary> = {}): ExchangeSummary => ({ seq: 1, method: 'POST', url, status: 200, keyEchoes: [], curl: 'curl ...', ...extra });
const error = (status: number, extra: Partial<ExchangeSummary> = {}) => clean({
  status, errorBodyProblems: [], hasErrorObject: true, errorMessage: 'm', errorType: 't', errorCode: 'c', errorHasParam: false, bodyExcerpt: '{"error":{}}', ...extra,
});

const sse = (deltas: Array<string | null>, opts: { roleOnly?: boolean; usage?: boolean } = {}) => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  let out = chunk(opts.roleOnly ? { role: 'assistant' } : { role: 'assistant', content: '' });
  for (const d of deltas) out += chunk(d === null ? {} : { content: d });
  out += chunk({}, 'stop');
  if (opts.usage) out += `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } })}\n\n`;
  return `${out}data: [DONE]\n\n`;
};
/** A stream as the client libraries' wire logs it: the body text, read as SSE. */
const wireStream = (text: string, source: 'client' | 'fuzz' | undefined = 'client') => summariseParts({
  method: 'POST', url, status: 200, headers: { 'content-type': 'text/event-stream' }, text, curl: 'curl ...', ...(source ? { source } : {}),
});

describe('the table of per-response rules', () => {
  // One exchange that breaks each rule, and nothing else.
  const breaking: Record<string, ExchangeSummary> = {
    'ERR-1': error(404, { errorBodyProblems: ['the body is empty'], hasErrorObject: false }),
    'ERR-2': error(500),
    'ERR-3': error(400, { errorMessage: '' }),
    'ERR-4': error(503, { errorBodyProblems: ['the body is empty'], hasErrorObject: false }),
    'AUTH-9': clean({ keyEchoes: ['API_KEY'] }),
    'SVC-8': clean({ reuseRetry: { error: 'connection reset before any response', firstSeq: 0, idleMs: 2 } }),
    'EV-12': wireStream(sse(['Hel', 'Hello', 'Hello wor', 'Hello world'])),
    // Successes without their body (lib/spec/rules/success-body.ts).
    'SVC-1': summariseParts({ method: 'POST', url, status: 200, headers: { 'content-type': 'application/json' }, text: '', curl: 'curl ...' }),
    'SVC-3': summariseParts({ method: 'POST', url: `${BASE}/brains/b1/chat`, status: 200, headers: { 'content-type': 'application/json' }, text: '{"id": "chatcmpl-1", "cho', curl: 'curl ...' }),
    'SVC-2': summariseParts({ method: 'GET', url: `${BASE}/models`, status: 200, headers: { 'content-type': 'application/json' }, text: '{"object": "list"}', curl: 'curl ...' }),
    'EV-6': wireStream(`${sse(['Hello', ' world'])}data: {"late": true}\n\n`),
    // The reply's text on every 2xx chat answer (lib/spec/rules/reply-content.ts).
    'RES-MSG-1': summariseParts({ method: 'POST', url, status: 200, headers: { 'content-type': 'application/json' }, text: '{"choices": [{"index": 0, "message": {"role": "assistant", "content": null}, "finish_reason": "length"}]}', curl: 'curl ...' }),
    'EV-4': wireStream(sse([null], { roleOnly: true })),
  };

  it('a success without its body breaks SVC-1/2/3 or EV-6 wherever seen; the preflight\'s own 64 KiB cut is no evidence', () => {
    const models = (text: string) => summariseParts({ source: 'preflight', method: 'GET', url: `${BASE}/models`, status: 200, headers: { 'content-type': 'application/json' }, text, curl: 'curl ...' });
    expect(checkResponse(models(''))).toMatchObject([{ clause: 'SVC-2', seen: 'HTTP 200 with an empty body' }]);
    expect(models(`{"object": "list", "data": [${'{"id": "m"},'.repeat(7000)}`).success).toBeUndefined();
    expect(checkResponse(wireStream(sse(['Hello'])))).toEqual([]);
    expect(checkResponse(breaking['SVC-1']!)[0]!.seen).toBe('HTTP 200 with an empty body');
    expect(breaking['SVC-1']!.bodyExcerpt).toBe('');
  });

  it('lists each rule with its clause once, and every rule has an exchange that breaks it alone', () => {
    expect(RESPONSE_RULES.map((r) => r.clause)).toEqual(['ERR-1', 'ERR-2', 'ERR-3', 'ERR-4', 'AUTH-9', 'SVC-8', 'EV-12', 'SVC-1', 'SVC-3', 'SVC-2', 'EV-6', 'RES-MSG-1', 'EV-4']);
    for (const rule of RESPONSE_RULES) {
      const v = checkResponse(breaking[rule.clause]!);
      // ERR-4's 503 without a body breaks ERR-1 too (every status >= 400): the two clauses say so each.
      expect(v.map((x) => x.clause), rule.clause).toEqual(rule.clause === 'ERR-4' ? ['ERR-1', 'ERR-4'] : [rule.clause]);
      expect(v.find((x) => x.clause === rule.clause)).toMatchObject({ expected: rule.expected, seen: expect.any(String) });
    }
    for (const e of [clean(), error(400), error(503), error(429), wireStream(sse(['Hello', ' world', '.']))]) expect(checkResponse(e)).toEqual([]);
  });

  it('EV-12 reads the wire text of a client-library stream: snapshots break it, legal repetition does not', () => {
    expect(breaking['EV-12']).toMatchObject({ contentDeltas: 4 });
    expect(checkResponse(breaking['EV-12']!)[0]!.seen).toMatch(/the first three: "Hel", "Hello", "Hello wor"/);
    const legal = {
      'repeated words': sse(['ha', 'ha', 'ha']),
      'one-character deltas of a repetitive reply': sse(['a', 'a', 'a', 'a']),
      'a single chunk': sse(['Hello world.']),
      'empty deltas': sse(['', 'Hello', '', ' world', '']),
      'a role-only first chunk and a usage-only last chunk': sse(['Hello', ' world', '.'], { roleOnly: true, usage: true }),
      'a delta that is not content': sse([null, 'Hello', null, ' world']),
    };
    for (const [what, text] of Object.entries(legal)) {
      const s = wireStream(text);
      expect(s.contentDeltas, what).toBeGreaterThan(0);
      expect(checkResponse(s, ['EV-12']), what).toEqual([]);
    }
    // A stream without content deltas is no evidence for EV-12.
    expect(RESPONSE_RULES.find((r) => r.clause === 'EV-12')!.judges(wireStream(sse([])))).toBe(false);
  });

  it('EV-12 reads a raw-client stream from its parsed events', () => {
    const events = ['Alpha', 'Alpha bravo', 'Alpha bravo charlie'].map((c, i) => ({ data: JSON.stringify({ choices: [{ index: 0, delta: { content: c } }] }), dataLines: 1, offset: i, atMs: i }));
    const s = summariseParts({ method: 'POST', url, status: 200, headers: { 'content-type': 'text/event-stream' }, streamData: events.map((e) => e.data), curl: 'curl' });
    expect(s.snapshots).toMatchObject({ deltas: 3, style: 'prefix of the previous delta' });
  });
});

describe('run-wide records from the table', () => {
  it('keep their ids: one per rule plus ERR-5, and the title-based ids EXPECTATIONS files may still name', () => {
    expect(runWideTestIds()).toEqual(['err-1', 'err-2', 'err-3', 'err-4', 'auth-9', 'svc-8', 'ev-12', 'svc-1', 'svc-3', 'svc-2', 'ev-6', 'res-msg-1', 'ev-4', 'err-5'].map((c) => `run-wide/${c}`));
    expect(runWideTests().map((t) => t.legacyId)).toEqual([
      'run-wide/ERR-1 every response with status >= 400 carries an error body',
      'run-wide/ERR-2 no request gets a 5xx other than 503',
      'run-wide/ERR-3 error message, type and code are non-empty',
      'run-wide/ERR-4 a 503 carries an error body',
      'run-wide/AUTH-9 no response body or header echoes a full API key',
      'run-wide/SVC-8 no request of the run met a connection closed silently after a response',
      'run-wide/EV-12 no stream of the run sends cumulative snapshots as deltas',
      'run-wide/SVC-1 every success of the run carries a complete body (chat)',
      'run-wide/SVC-3 every success of the run carries a complete body (brain route)',
      'run-wide/SVC-2 every success of the run carries a complete body (models)',
      'run-wide/EV-6 every stream of the run ends with [DONE] and nothing after it',
      'run-wide/RES-MSG-1 every chat completion of the run carries message.content as a string',
      'run-wide/EV-4 every stream of the run carries its reply',
      'run-wide/ERR-5 param key and type/code values per status',
    ]);
  });

  it('name the request that met a failure first and count the others', () => {
    const r = runWideChecks([clean(), error(500, { test: 'first test' }), error(502), error(500, { source: 'client' })], BASE).find((x) => x.clause === 'ERR-2')!;
    expect(r.verdict).toBe('fail');
    expect(r.seen).toMatch(/^3 of 4 responses; the first: POST \/v1\/chat\/completions -> 500 \[first test\]/);
    expect(r.message).toMatch(/-> 500 \(client library\)/);
  });

  it('judge the fuzz phase\'s requests, except by ERR-1/ERR-2 (its own tests report those, shrunk)', () => {
    const fuzz = (e: ExchangeSummary): ExchangeSummary => ({ ...e, source: 'fuzz' });
    const r = runWideChecks([clean(), fuzz(error(500)), fuzz(error(400, { errorCode: '' })), fuzz(clean({ keyEchoes: ['API_KEY'] })), wireStream(sse(['a', 'ab', 'abc']), 'fuzz')], BASE);
    const v = Object.fromEntries(r.map((x) => [x.clause, x.verdict]));
    expect(v).toMatchObject({ 'ERR-2': 'pass', 'ERR-3': 'warn', 'AUTH-9': 'fail', 'EV-12': 'fail' });
    expect(r.find((x) => x.clause === 'ERR-2')!.message).toMatch(/judged by its own ERR-2 test/);
    expect(r.find((x) => x.clause === 'EV-12')!.message).toMatch(/\(fuzz phase\)/);
  });

  it('judge the preflight like any exchange', () => {
    const pre = summariseParts({ source: 'preflight', method: 'GET', url: `${BASE}/models`, status: 500, headers: { 'content-type': 'text/plain' }, text: 'oops', curl: 'curl' }, 'preflight');
    const r = runWideChecks([pre], BASE);
    expect(r.find((x) => x.clause === 'ERR-2')).toMatchObject({ verdict: 'fail' });
    expect(r.find((x) => x.clause === 'ERR-1')!.message).toMatch(/\(preflight\)/);
  });

  it('give a probed clause (EV-12, SVC-8) a record only on a breach, folded into its failing probe', () => {
    expect(runWideChecks([wireStream(sse(['Hello', ' world', '.']))], BASE).map((x) => x.clause)).not.toContain('EV-12');
    const wide = runWideChecks([wireStream(sse(['Hel', 'Hello', 'Hello wor']))], BASE);
    const probe = { id: 'events/EV-12', clause: 'EV-12', verdict: 'fail', notes: [] as string[] } as unknown as TestRecord;
    const kept = foldIntoProbes([probe], wide);
    expect(kept.map((x) => x.clause)).not.toContain('EV-12');
    expect(probe.notes[0]).toMatch(/across the run's traffic, EV-12: 1 of 1 streams; the first: .*\(client library\)/);
    // Without a failing probe (the file did not run, or it passed on its own stream), the record stands.
    expect(foldIntoProbes([], wide).map((x) => x.clause)).toContain('EV-12');
  });
});

describe('every kind of traffic reaches the table', () => {
  it('the raw client hands each exchange to onExchange once: each 429 it waited out, then the answer', async () => {
    let n = 0;
    const server = createServer((_q, r) => {
      if (n++ < 2) { r.writeHead(429, { 'content-type': 'text/plain', 'retry-after-ms': '20' }); r.end('slow down'); return; }
      r.writeHead(200, { 'content-type': 'application/json' }); r.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const seen: Exchange[] = [];
    const c = new HttpClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, timeoutMs: 2000, onExchange: (ex) => seen.push(ex) });
    try {
      const ex = await c.send({ method: 'GET', path: '/models', auth: { key: 'k' } });
      expect(ex.status).toBe(200);
      expect(seen.map((e) => e.status)).toEqual([429, 429, 200]);
      expect(seen.at(-1)).toBe(ex);
    } finally {
      await c.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('the fuzz oracles judge ERR-1 and ERR-2 by the table\'s rules', () => {
    const ex = (status: number, text: string, type = 'application/json'): Exchange => ({
      seq: 1, request: { method: 'POST', url, headers: {} }, status, headers: { 'content-type': type }, mediaType: type, text,
      durationMs: 1, wireBytes: 1, retries: [], keyEchoes: [], curl: 'curl',
    });
    const c = { kind: 'valid', route: 'chat', body: { model: 'm', messages: [] }, label: 'x' } as const;
    expect(judge(c, ex(500, '{"error":{"message":"m","type":"t","code":"c"}}')).map((b) => b.clause)).toEqual(['ERR-2']);
    expect(judge(c, ex(400, 'bad', 'text/plain')).map((b) => b.clause)).toEqual(['ERR-1']);
    expect(judge(c, ex(429, '')).map((b) => b.clause)).toEqual(['ERR-1']);
    expect(judge(c, ex(503, '{"error":{"message":"m","type":"t","code":"c"}}'))).toEqual([]);
  });

  it('a generated stream with parameters that meets the failure every stream meets is no CHAT-8 finding (SVC-5 reports it)', () => {
    const ex = (status: number): Exchange => ({
      seq: 1, request: { method: 'POST', url, headers: {} }, status, headers: { 'content-type': 'application/json' }, mediaType: 'application/json',
      text: '{"error":{"message":"m","type":"t","code":"c"}}', durationMs: 1, wireBytes: 1, retries: [], keyEchoes: [], curl: 'curl',
    });
    const stream = { kind: 'valid', route: 'chat', body: { model: 'm', messages: [], stream: true, temperature: 0.5 }, label: 'x' } as const;
    const plain = { kind: 'valid', route: 'chat', body: { model: 'm', messages: [], temperature: 0.5 }, label: 'x' } as const;
    const everyStream502 = measureBaseline(ex(200), ex(502), ex(400));
    expect(judge(stream, ex(502), everyStream502).map((b) => b.clause)).toEqual(['ERR-2']);
    // Another status, or a plain request, is still CHAT-8's; and with streams working, so is the 502.
    expect(judge(stream, ex(500), everyStream502).map((b) => b.clause)).toEqual(['ERR-2', 'CHAT-8']);
    expect(judge(plain, ex(502), everyStream502).map((b) => b.clause)).toEqual(['ERR-2', 'CHAT-8']);
    expect(judge(stream, ex(502)).map((b) => b.clause)).toEqual(['ERR-2', 'CHAT-8']);
  });
});

describe('AUTH-9 judges keys sent as credentials, not keys we put in the URL', () => {
  it('a 401 naming the request URL echoes a query-borne key: no AUTH-9 echo; the same key sent in Authorization and echoed is one', async () => {
    const KEY = 'sk-unit-auth9-query-0123456789';
    addSecret(KEY, 'API_KEY');
    // Express-style: the error names the request line, query string included.
    const server = createServer((q, r) => {
      r.writeHead(401, { 'content-type': 'application/json' });
      r.end(JSON.stringify({ error: { message: `Cannot authenticate ${q.method} ${q.url} (${q.headers.authorization ?? 'no Authorization'})`, type: 't', code: 'c' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const c = new HttpClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, timeoutMs: 2000 });
    try {
      const inUrl = await c.send({ method: 'GET', path: '/models', auth: 'none', query: { api_key: KEY } });
      expect(inUrl.text).toContain(KEY);
      expect(inUrl.keyEchoes).toEqual([]);
      expect(checkResponse(summarise(inUrl), ['AUTH-9'])).toEqual([]);
      const inAuth = await c.send({ method: 'GET', path: '/models', auth: { key: KEY } });
      expect(inAuth.keyEchoes).toEqual(['API_KEY']);
      expect(checkResponse(summarise(inAuth), ['AUTH-9']).map((v) => v.clause)).toEqual(['AUTH-9']);
      // Both at once: the server received it as a credential, so an echo counts.
      const both = await c.send({ method: 'GET', path: '/models', auth: { key: KEY }, query: { key: KEY } });
      expect(both.keyEchoes).toEqual(['API_KEY']);
    } finally {
      await c.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('with no request known (client libraries, fuzz), every echo counts', () => {
    addSecret('sk-unit-auth9-other-0123456789', 'API_KEY');
    expect(echoedSecretLabels({}, 'x sk-unit-auth9-other-0123456789 y')).toEqual(['API_KEY']);
    expect(echoedSecretLabels({}, 'x sk-unit-auth9-other-0123456789 y', { url: 'http://h/v1/m?key=sk-unit-auth9-other-0123456789' })).toEqual([]);
  });
});
