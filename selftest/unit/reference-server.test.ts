// The reference server's own behaviour: the conformant default (auth order, scopes,
// brains, models, validation, streaming bytes, rate limit, overload, close), that every
// defect and variant starts, and a few variants at the byte level.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { Agent, request } from 'undici';
import { startReferenceServer, referenceOptionsFromEnv, type ReferenceServer, type ReferenceOptions } from '../../reference/server.ts';
import { DEFECTS } from '../../reference/defects.ts';
import { VARIANTS } from '../../reference/variants.ts';
import { CLAUSES } from '../../lib/spec/clauses.ts';

const agent = new Agent({ keepAliveTimeout: 50, connections: 64 });
afterAll(() => agent.close());

interface Reply {
  status: number;
  headers: Record<string, string>;
  bytes: Buffer;
  text: string;
  json: any;
}

interface CallOptions {
  key?: string | null;
  authorization?: string;
  body?: unknown;
  rawBody?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

async function call(ref: ReferenceServer, method: string, path: string, o: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...o.headers };
  const key = o.key === undefined ? ref.keys.main : o.key;
  if (o.authorization !== undefined) headers.authorization = o.authorization;
  else if (key !== null) headers.authorization = `Bearer ${key}`;
  let body: string | Buffer | undefined;
  if (o.rawBody !== undefined) body = o.rawBody;
  else if (o.body !== undefined) body = JSON.stringify(o.body);
  if (body !== undefined) headers['content-type'] = o.contentType ?? 'application/json';
  const res = await request(`${ref.url}${path}`, { method: method as 'GET', headers, body, dispatcher: agent });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  const text = bytes.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) flat[k] = Array.isArray(v) ? v.join(', ') : String(v);
  return { status: res.statusCode, headers: flat, bytes, text, json };
}

const chat = (ref: ReferenceServer, body: unknown, o: CallOptions = {}) => call(ref, 'POST', '/chat/completions', { ...o, body });
const userMsg = (content = 'Say hello to the test suite') => [{ role: 'user', content }];

function expectErrorBody(r: Reply, status: number, code?: string): void {
  expect(r.status).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  expect(typeof r.json?.error?.message).toBe('string');
  expect(r.json.error.message.length).toBeGreaterThan(0);
  expect(typeof r.json.error.type).toBe('string');
  expect(typeof r.json.error.code).toBe('string');
  expect('param' in r.json.error).toBe(true);
  if (code) expect(r.json.error.code).toBe(code);
}

/** Data payloads of an SSE body (LF framing, as the conformant server writes it). */
function ssePayloads(text: string): string[] {
  return text
    .split('\n\n')
    .filter((e) => e.length > 0)
    .map((e) => {
      expect(e.startsWith('data: ')).toBe(true);
      return e.slice('data: '.length);
    });
}

describe('reference server: conformant default', () => {
  let ref: ReferenceServer;
  beforeAll(async () => {
    ref = await startReferenceServer({ rateLimit: { rateLimit: { limit: 3, windowMs: 400 } } });
  });
  afterAll(() => ref.close());

  it('binds 127.0.0.1 with /v1, fresh keys and a uuid brain', () => {
    expect(ref.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    for (const k of Object.values(ref.keys)) expect(k).toMatch(/^sk-ref-[0-9a-f]{32}$/);
    expect(new Set(Object.values(ref.keys)).size).toBe(3);
    expect(ref.brainId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(ref.models).toEqual(['svc-auto', 'svc']);
  });

  it('lists models in the OpenAI shape', async () => {
    const r = await call(ref, 'GET', '/models');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.json.object).toBe('list');
    expect(r.json.data.map((m: { id: string }) => m.id)).toEqual(['svc-auto', 'svc']);
    for (const m of r.json.data) {
      expect(m.object).toBe('model');
      expect(m.owned_by).toBe('chatgate-reference');
      expect(Number.isInteger(m.created)).toBe(true);
    }
    expect((await call(ref, 'GET', '/models', { key: ref.keys.limited })).status).toBe(200);
  });

  it('answers 401 error bodies for every kind of bad Authorization, never quoting the key', async () => {
    const k = ref.keys.main;
    const cases: CallOptions[] = [
      { key: null },
      { authorization: '' },
      { authorization: `Basic ${k}` },
      { authorization: `Basic ${Buffer.from(`user:${k}`).toString('base64')}` },
      { authorization: `Token ${k}` },
      { authorization: k },
      { authorization: 'Bearer ' },
      { authorization: `Bearer  ${k}` },
      { authorization: `Bearer ${k}x` },
      { authorization: 'Bearer sk-ref-00000000000000000000000000000000' },
    ];
    for (const c of cases) {
      for (const [method, path, body] of [
        ['GET', '/models', undefined],
        ['POST', '/chat/completions', { model: 'svc', messages: userMsg() }],
        ['POST', `/brains/${ref.brainId}/chat`, { messages: userMsg() }],
      ] as const) {
        const r = await call(ref, method, path, { ...c, body });
        expectErrorBody(r, 401, 'invalid_api_key');
        expect(r.text).not.toContain(k);
        expect(JSON.stringify(r.headers)).not.toContain(k);
      }
    }
    const wrong = await call(ref, 'GET', '/models', { authorization: 'Bearer sk-ref-00000000000000000000000000001234' });
    expect(wrong.json.error.message).toContain('sk-ref-...1234');
    expect((await call(ref, 'GET', '/models', { authorization: `bearer ${k}` })).status).toBe(200);
    expect((await call(ref, 'GET', '/models', { authorization: `BEARER ${k}` })).status).toBe(200);
  });

  it('authenticates before routing, parsing, validation, streaming and OPTIONS', async () => {
    const bad = { key: 'sk-ref-ffffffffffffffffffffffffffffffff' };
    for (const o of [{ key: null }, bad] as CallOptions[]) {
      expectErrorBody(await call(ref, 'POST', '/chat/completions', { ...o, rawBody: '{not json' }), 401);
      expectErrorBody(await chat(ref, { model: 'nope', messages: userMsg() }, o), 401);
      expectErrorBody(await chat(ref, { model: `brain:${crypto.randomUUID()}`, messages: userMsg() }, o), 401);
      expectErrorBody(await call(ref, 'POST', `/brains/${crypto.randomUUID()}/chat`, { ...o, body: {} }), 401);
      expectErrorBody(await call(ref, 'GET', '/nowhere', o), 401);
      expectErrorBody(await call(ref, 'POST', '/images/generations', o), 401);
      expectErrorBody(await call(ref, 'OPTIONS', '/chat/completions', { ...o, headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } }), 401);
      const s = await chat(ref, { model: 'svc', messages: userMsg(), stream: true }, o);
      expectErrorBody(s, 401);
      expect(s.headers['content-type']).not.toContain('event-stream');
    }
  });

  it('accepts OpenAI parameters and unknown fields; honours max_tokens and n', async () => {
    const r = await chat(ref, {
      model: 'svc-auto',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'hello there' }] },
        { role: 'assistant', content: 'hi' },
        { role: 'user', content: 'again' },
      ],
      temperature: 0.2,
      top_p: 0.9,
      user: 'u1',
      stream: false,
      stream_options: { include_usage: true },
      n: 1,
      seed: 7,
      chatgate_unknown_field: { nested: true },
    });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    const c = r.json;
    expect(c.id).toMatch(/^chatcmpl-.+/);
    expect(c.object).toBe('chat.completion');
    expect(c.model).toBe('svc-auto');
    expect(Number.isInteger(c.created)).toBe(true);
    expect(c.choices).toHaveLength(1);
    expect(c.choices[0]).toMatchObject({ index: 0, message: { role: 'assistant' }, finish_reason: 'stop' });
    const words = c.choices[0].message.content.split(/\s+/).length;
    expect(words).toBe(12);
    expect(c.usage.completion_tokens).toBe(words);
    expect(c.usage.total_tokens).toBe(c.usage.prompt_tokens + c.usage.completion_tokens);
    // Prompt tokens: words plus a per-message overhead.
    expect(c.usage.prompt_tokens).toBeGreaterThan(2 + 2 + 1 + 1);

    const cut = await chat(ref, { model: 'svc', messages: userMsg(), max_tokens: 3 });
    expect(cut.json.choices[0].finish_reason).toBe('length');
    expect(cut.json.choices[0].message.content.split(' ')).toHaveLength(3);
    expect(cut.json.usage.completion_tokens).toBe(3);

    const two = await chat(ref, { model: 'svc', messages: userMsg(), n: 2 });
    expect(two.json.choices.map((x: { index: number }) => x.index)).toEqual([0, 1]);
  });

  it('is deterministic: the same messages give the same reply', async () => {
    const a = await chat(ref, { model: 'svc', messages: userMsg('determinism') });
    const b = await chat(ref, { model: 'svc-auto', messages: userMsg('determinism') });
    const c = await chat(ref, { model: 'svc', messages: userMsg('something else') });
    expect(a.json.choices[0].message.content).toBe(b.json.choices[0].message.content);
    expect(a.json.choices[0].message.content).not.toBe(c.json.choices[0].message.content);
    expect(a.json.id).not.toBe(b.json.id);
  });

  it('refuses invalid requests with 400 error bodies naming the field', async () => {
    const cases: Array<[unknown, string | null, string]> = [
      [{ messages: userMsg() }, 'model', 'missing_required_parameter'],
      [{ model: 5, messages: userMsg() }, 'model', 'invalid_type'],
      [{ model: '', messages: userMsg() }, 'model', 'invalid_value'],
      [{ model: 'svc' }, 'messages', 'missing_required_parameter'],
      [{ model: 'svc', messages: { role: 'user', content: 'x' } }, 'messages', 'invalid_type'],
      [{ model: 'svc', messages: [] }, 'messages', 'invalid_value'],
      [{ model: 'svc', messages: [{ content: 'x' }] }, 'messages[0].role', 'missing_required_parameter'],
      [{ model: 'svc', messages: [{ role: 'user', content: 42 }] }, 'messages[0].content', 'invalid_type'],
      [{ model: 'svc', messages: [{ role: 'user', content: { text: 'x' } }] }, 'messages[0].content', 'invalid_type'],
      [{ model: 'svc', messages: userMsg(), stream: 'yes' }, 'stream', 'invalid_type'],
      [{ model: 'svc', messages: userMsg(), max_tokens: 0 }, 'max_tokens', 'invalid_value'],
      [{ model: 'svc', messages: userMsg(), n: 99 }, 'n', 'invalid_value'],
      [[1, 2], null, 'invalid_type'],
    ];
    for (const [body, param, code] of cases) {
      const r = await chat(ref, body);
      expectErrorBody(r, 400, code);
      expect(r.json.error.param).toBe(param);
      if (param) expect(r.json.error.message).toContain(param);
    }
    const badJson = await call(ref, 'POST', '/chat/completions', { rawBody: '{"model": "svc",' });
    expectErrorBody(badJson, 400, 'invalid_json');
    const notJson = await call(ref, 'POST', '/chat/completions', { rawBody: JSON.stringify({ model: 'svc', messages: userMsg() }), contentType: 'text/plain' });
    expectErrorBody(notJson, 400, 'invalid_content_type');
    const unknown = await chat(ref, { model: 'gpt-nope', messages: userMsg() });
    expectErrorBody(unknown, 404, 'model_not_found');
    expect(unknown.json.error.param).toBe('model');
  });

  it('answers 405 for a wrong method and 413 for a body over 1 MiB', async () => {
    const r = await call(ref, 'GET', '/chat/completions');
    expectErrorBody(r, 405, 'method_not_allowed');
    expect(r.headers.allow).toContain('POST');
    const big = await call(ref, 'POST', '/chat/completions', {
      rawBody: JSON.stringify({ model: 'svc', messages: userMsg('x'.repeat(1024 * 1024 + 10)) }),
    });
    expectErrorBody(big, 413);
  });

  it('serves brains on both routes and gates them with brains:invoke before existence', async () => {
    const id = ref.brainId;
    const viaModel = await chat(ref, { model: `brain:${id}`, messages: userMsg() });
    expect(viaModel.status).toBe(200);
    expect(viaModel.json.model).toBe(`brain:${id}`);
    expect(viaModel.json.object).toBe('chat.completion');
    const viaRoute = await call(ref, 'POST', `/brains/${id}/chat`, { body: { messages: userMsg() } });
    expect(viaRoute.status).toBe(200);
    expect(viaRoute.json.model).toBe(`brain:${id}`);
    expect(viaRoute.json.choices[0].message.role).toBe('assistant');
    const routeStream = await call(ref, 'POST', `/brains/${id}/chat`, { body: { messages: userMsg(), stream: true } });
    expect(routeStream.headers['content-type']).toBe('text/event-stream');
    expect(routeStream.text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect((await call(ref, 'POST', `/brains/${id}/chat`, { key: ref.keys.rateLimit, body: { messages: userMsg() } })).status).toBe(200);

    const unknownId = crypto.randomUUID();
    for (const target of [id, unknownId, 'not-a-uuid']) {
      for (const stream of [false, true]) {
        expectErrorBody(await chat(ref, { model: `brain:${target}`, messages: userMsg(), stream }, { key: ref.keys.limited }), 403, 'insufficient_scope');
        expectErrorBody(await call(ref, 'POST', `/brains/${target}/chat`, { key: ref.keys.limited, body: { messages: userMsg(), stream } }), 403, 'insufficient_scope');
      }
    }
    expect((await chat(ref, { model: 'svc', messages: userMsg() }, { key: ref.keys.limited })).status).toBe(200);

    expectErrorBody(await chat(ref, { model: `brain:${unknownId}`, messages: userMsg() }), 404, 'brain_not_found');
    expectErrorBody(await call(ref, 'POST', `/brains/${unknownId}/chat`, { body: { messages: userMsg() } }), 404, 'brain_not_found');
    expectErrorBody(await chat(ref, { model: 'brain:not-a-uuid', messages: userMsg() }), 400, 'invalid_brain_id');
    expectErrorBody(await call(ref, 'POST', '/brains/not-a-uuid/chat', { body: { messages: userMsg() } }), 400, 'invalid_brain_id');
    expectErrorBody(await call(ref, 'POST', `/brains/${id}/chat`, { body: { nothing: true } }), 400, 'missing_required_parameter');
  });

  it('answers 404 error bodies for unknown paths, image/video endpoints and /v2', async () => {
    for (const p of ['/images/generations', '/images/edits', '/images/variations', '/videos', '/videos/generations']) {
      expectErrorBody(await call(ref, 'POST', p, { body: { prompt: 'a cat' } }), 404, 'unknown_url');
    }
    expectErrorBody(await call(ref, 'GET', '/does/not/exist'), 404);
    const v2 = await request(ref.url.replace(/\/v1$/, '/v2/models'), { headers: { authorization: `Bearer ${ref.keys.main}` }, dispatcher: agent });
    expect(v2.statusCode).toBe(404);
    expect((await v2.body.json()) as object).toHaveProperty('error.code');
    const one = await call(ref, 'GET', '/models/svc');
    expect(one.json).toMatchObject({ id: 'svc', object: 'model' });
    expectErrorBody(await call(ref, 'GET', '/models/nope'), 404, 'model_not_found');
  });

  it('streams OpenAI-style SSE bytes with the same content as the JSON reply', async () => {
    const messages = userMsg('stream me');
    const json = await chat(ref, { model: 'svc', messages });
    const r = await chat(ref, { model: 'svc', messages, stream: true });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(r.text).not.toContain('\r');
    const payloads = ssePayloads(r.text);
    expect(payloads.at(-1)).toBe('[DONE]');
    const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p));
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0].id).toMatch(/^chatcmpl-.+/);
    for (const c of chunks) {
      expect(c.object).toBe('chat.completion.chunk');
      expect(c.model).toBe('svc');
      expect('usage' in c).toBe(false);
    }
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    const content = chunks.map((c) => c.choices[0].delta.content ?? '').join('');
    expect(content).toBe(json.json.choices[0].message.content);
    expect(chunks.length).toBe(1 + 12 + 1); // role, one per word, finish
    const finishes = chunks.filter((c) => c.choices[0].finish_reason !== null);
    expect(finishes).toHaveLength(1);
    expect(finishes[0]).toBe(chunks.at(-1));
    expect(finishes[0].choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
  });

  it('adds usage: null to every chunk and a final usage chunk with include_usage', async () => {
    const r = await chat(ref, { model: 'svc-auto', messages: userMsg(), stream: true, stream_options: { include_usage: true } });
    const chunks = ssePayloads(r.text).slice(0, -1).map((p) => JSON.parse(p));
    const last = chunks.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage.completion_tokens).toBe(12);
    expect(last.usage.total_tokens).toBe(last.usage.prompt_tokens + 12);
    for (const c of chunks.slice(0, -1)) expect(c.usage).toBeNull();
  });

  it('rate-limits per key with a 429 error body and headers, then recovers', async () => {
    const key = ref.keys.rateLimit; // 3 per 400 ms in this server
    await new Promise((r) => setTimeout(r, 420)); // a fresh window
    const statuses: number[] = [];
    let limited: Reply | undefined;
    for (let i = 0; i < 5; i++) {
      const r = await call(ref, 'GET', '/models', { key });
      statuses.push(r.status);
      if (r.status === 429) limited ??= r;
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses.slice(3)).toEqual([429, 429]);
    expectErrorBody(limited!, 429, 'rate_limit_exceeded');
    expect(limited!.json.error.type).toBe('rate_limit_error');
    expect(limited!.headers['retry-after']).toMatch(/^\d+$/);
    const ms = Number(limited!.headers['retry-after-ms']);
    expect(ms).toBeGreaterThan(0);
    expect(ms).toBeLessThanOrEqual(400);
    expect(Number(limited!.headers['retry-after'])).toBe(Math.ceil(ms / 1000));
    expect(limited!.headers['x-ratelimit-limit-requests']).toBe('3');
    expect(limited!.headers['x-ratelimit-remaining-requests']).toBe('0');
    expect(limited!.headers['x-ratelimit-reset-requests']).toMatch(/^\d+ms$/);
    // Other keys are unaffected; unauthenticated requests are not counted.
    expect((await call(ref, 'GET', '/models')).status).toBe(200);
    await new Promise((r) => setTimeout(r, ms + 20));
    expect((await call(ref, 'GET', '/models', { key })).status).toBe(200);
  });
});

describe('reference server: load behaviour', () => {
  it('answers 503 error bodies when more requests than overloadInFlight are in flight', async () => {
    const ref = await startReferenceServer({ overloadInFlight: 1, latency: { jsonMs: 250 } });
    try {
      const replies = await Promise.all([1, 2, 3].map(() => chat(ref, { model: 'svc', messages: userMsg() })));
      const statuses = replies.map((r) => r.status).sort();
      expect(statuses).toContain(200);
      expect(statuses).toContain(503);
      for (const r of replies.filter((x) => x.status === 503)) {
        expectErrorBody(r, 503, 'overloaded');
        expect(r.json.error.type).toBe('server_error');
      }
      expect(ref.stats().requests).toBe(3);
    } finally {
      await ref.close();
    }
    expect(ref.stats().inFlight).toBe(0);
  });

  it('injects ttft and inter-token latency', async () => {
    const ref = await startReferenceServer({ latency: { ttftMs: 200, itlMs: 15 }, replyWords: 5 });
    try {
      const t0 = performance.now();
      const res = await request(`${ref.url}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ref.keys.main}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc', messages: userMsg(), stream: true }),
        dispatcher: agent,
      });
      let first = -1;
      let text = '';
      for await (const chunk of res.body) {
        if (first < 0) first = performance.now() - t0;
        text += chunk.toString();
      }
      const total = performance.now() - t0;
      expect(first).toBeGreaterThanOrEqual(180);
      // role + 5 words + finish + [DONE] = 8 events, 7 gaps of 15 ms after the first.
      expect(total).toBeGreaterThanOrEqual(180 + 7 * 12);
      expect(total).toBeLessThan(2000);
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    } finally {
      await ref.close();
    }
  });

  it('delays JSON replies by jsonMs', async () => {
    const ref = await startReferenceServer({ latency: { jsonMs: 150 } });
    try {
      const t0 = performance.now();
      const r = await chat(ref, { model: 'svc', messages: userMsg() });
      expect(r.status).toBe(200);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(130);
    } finally {
      await ref.close();
    }
  });

  it('stalls every Nth stream once for stallMs', async () => {
    const ref = await startReferenceServer({ latency: { stallEvery: 2, stallMs: 250 }, replyWords: 4 });
    try {
      const times: number[] = [];
      for (let i = 0; i < 2; i++) {
        const t0 = performance.now();
        const r = await chat(ref, { model: 'svc', messages: userMsg(), stream: true });
        expect(r.text.endsWith('data: [DONE]\n\n')).toBe(true);
        times.push(performance.now() - t0);
      }
      expect(times[0]).toBeLessThan(200);
      expect(times[1]).toBeGreaterThanOrEqual(230);
    } finally {
      await ref.close();
    }
  });

  it('stops a stream when the client disconnects', async () => {
    const ref = await startReferenceServer({ latency: { itlMs: 50 }, replyWords: 200 });
    try {
      const ac = new AbortController();
      const res = await request(`${ref.url}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ref.keys.main}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc', messages: userMsg(), stream: true }),
        signal: ac.signal,
      });
      expect(ref.stats().inFlight).toBe(1);
      ac.abort();
      await res.body.text().catch(() => undefined);
      const t0 = performance.now();
      while (ref.stats().inFlight > 0 && performance.now() - t0 < 1000) await new Promise((r) => setTimeout(r, 10));
      expect(ref.stats().inFlight).toBe(0);
    } finally {
      await ref.close();
    }
  });

  it('close() returns promptly with a stalled stream open', async () => {
    for (const opts of [{ defect: 'stream-stalls' }, { defect: 'stream-never-closes' }, { latency: { ttftMs: 60_000 } }] as ReferenceOptions[]) {
      const ref = await startReferenceServer(opts);
      const res = await request(`${ref.url}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ref.keys.main}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc', messages: userMsg(), stream: true }),
      });
      expect(res.statusCode).toBe(200);
      const reading = (async () => {
        try {
          for await (const _ of res.body) void _;
        } catch {
          /* the socket is destroyed under us: expected */
        }
      })();
      await new Promise((r) => setTimeout(r, 50));
      const t0 = performance.now();
      await ref.close();
      expect(performance.now() - t0).toBeLessThan(1000);
      await reading;
    }
  });
});

describe('reference server: catalogs', () => {
  it('declares exact clause ids and a description for every defect', () => {
    expect(Object.keys(DEFECTS).length).toBeGreaterThanOrEqual(100);
    for (const [name, d] of Object.entries(DEFECTS)) {
      expect(name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(d.clauses.length).toBeGreaterThan(0);
      for (const c of d.clauses) expect(Object.keys(CLAUSES), `${name}: ${c}`).toContain(c);
      expect(d.description.length).toBeGreaterThan(10);
      expect(d.description).not.toContain('\n');
    }
    for (const v of Object.values(VARIANTS)) expect(v.description.length).toBeGreaterThan(10);
  });

  it('starts and answers with every defect and every variant', async () => {
    const all: ReferenceOptions[] = [
      ...Object.keys(DEFECTS).map((defect) => ({ defect })),
      ...Object.keys(VARIANTS).map((v) => ({ variants: [v] })),
      { variants: Object.keys(VARIANTS).filter((v) => v !== 'sse-cr' && !v.startsWith('slow')) },
    ];
    await Promise.all(
      all.map(async (opts) => {
        const ref = await startReferenceServer(opts);
        try {
          const r = await call(ref, 'GET', '/models');
          expect(r.status, JSON.stringify(opts)).toBeLessThan(600);
        } finally {
          await ref.close();
        }
      }),
    );
  });

  it('throws on unknown names, listing the valid ones', async () => {
    await expect(startReferenceServer({ defect: 'no-such-defect' })).rejects.toThrow(/auth-none-required/);
    await expect(startReferenceServer({ variants: ['sse-crlf', 'nope'] })).rejects.toThrow(/sse-crlf/);
  });

  it('refuses a bad port, rate window, token bucket or reply length before it listens', async () => {
    for (const [opts, message] of [
      [{ port: -1 }, /port must be an integer 0-65535 \(got -1\)/],
      [{ port: 65536 }, /port must be/],
      [{ port: 1.5 }, /port must be/],
      [{ rateLimit: { main: { limit: 0, windowMs: 1000 } } }, /rateLimit\.main needs limit >= 1/],
      [{ rateLimit: { rateLimit: { limit: 5, windowMs: 0 } } }, /rateLimit\.rateLimit needs/],
      [{ rateLimit: { account: { limit: 0, windowMs: 1000 } } }, /rateLimit\.account needs/],
      [{ rateLimit: { bucket: { capacity: 0, refillPerSecond: 1 } } }, /rateLimit\.bucket needs capacity >= 1/],
      [{ rateLimit: { bucket: { capacity: 1, refillPerSecond: 0 } } }, /rateLimit\.bucket needs/],
      [{ replyWords: 0 }, /replyWords must be a positive integer \(got 0\)/],
      [{ replyWords: 2.5 }, /replyWords must be/],
    ] as Array<[ReferenceOptions, RegExp]>) {
      await expect(startReferenceServer(opts), JSON.stringify(opts)).rejects.toThrow(message);
    }
    // The edges themselves are accepted.
    for (const opts of [{ port: 0 }, { replyWords: 1, rateLimit: { main: { limit: 1, windowMs: 1 }, bucket: { capacity: 1, refillPerSecond: 0.5 } } }] as ReferenceOptions[]) {
      await (await startReferenceServer(opts)).close();
    }
  });

  it('reads REFERENCE_DEFECT and REFERENCE_VARIANTS', () => {
    expect(referenceOptionsFromEnv({})).toEqual({});
    expect(referenceOptionsFromEnv({ REFERENCE_DEFECT: 'auth-any-key', REFERENCE_VARIANTS: 'gzip, sse-crlf,' })).toEqual({
      defect: 'auth-any-key',
      variants: ['gzip', 'sse-crlf'],
    });
  });
});

describe('reference server: variants and defects at the byte level', () => {
  async function withRef<T>(opts: ReferenceOptions, fn: (ref: ReferenceServer) => Promise<T>): Promise<T> {
    const ref = await startReferenceServer(opts);
    try {
      return await fn(ref);
    } finally {
      await ref.close();
    }
  }
  const streamBody = { model: 'svc', messages: userMsg(), stream: true, stream_options: { include_usage: true } };

  it('sse-crlf ends every line with CRLF', () =>
    withRef({ variants: ['sse-crlf'] }, async (ref) => {
      const r = await chat(ref, streamBody);
      expect(r.text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
      expect(r.text.endsWith('data: [DONE]\r\n\r\n')).toBe(true);
      expect(r.text.split('\r\n\r\n').filter(Boolean).length).toBe(1 + 12 + 1 + 1 + 1);
    }));

  it('gzip compresses JSON and SSE only when Accept-Encoding allows it', () =>
    withRef({ variants: ['gzip'] }, async (ref) => {
      const gz = { headers: { 'accept-encoding': 'gzip, deflate' } };
      const j = await chat(ref, { model: 'svc', messages: userMsg() }, gz);
      expect(j.headers['content-encoding']).toBe('gzip');
      expect(JSON.parse(gunzipSync(j.bytes).toString()).object).toBe('chat.completion');
      const s = await chat(ref, streamBody, gz);
      expect(s.headers['content-encoding']).toBe('gzip');
      expect(s.headers['content-type']).toBe('text/event-stream');
      const text = gunzipSync(s.bytes).toString();
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
      const plain = await chat(ref, { model: 'svc', messages: userMsg() }, { headers: { 'accept-encoding': 'identity' } });
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.json.object).toBe('chat.completion');
      const refused = await chat(ref, { model: 'svc', messages: userMsg() }, { headers: { 'accept-encoding': 'gzip;q=0' } });
      expect(refused.headers['content-encoding']).toBeUndefined();
    }));

  it('one-chunk puts role, content and finish_reason in one chunk', () =>
    withRef({ variants: ['one-chunk'] }, async (ref) => {
      const r = await chat(ref, streamBody);
      const payloads = ssePayloads(r.text);
      expect(payloads).toHaveLength(3); // the chunk, the usage chunk, [DONE]
      const c = JSON.parse(payloads[0]!);
      expect(c.choices[0].delta.role).toBe('assistant');
      expect(c.choices[0].delta.content.split(' ')).toHaveLength(12);
      expect(c.choices[0].finish_reason).toBe('stop');
    }));

  it('split-writes splits CRLF between writes and still frames correctly', () =>
    withRef({ variants: ['split-writes'] }, async (ref) => {
      const res = await request(`${ref.url}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ref.keys.main}`, 'content-type': 'application/json' },
        body: JSON.stringify(streamBody),
        dispatcher: agent,
      });
      const pieces: string[] = [];
      for await (const chunk of res.body) pieces.push(chunk.toString());
      expect(pieces.length).toBeGreaterThan(15);
      expect(pieces.some((p) => p.endsWith('\r'))).toBe(true);
      expect(pieces.join('').endsWith('data: [DONE]\r\n\r\n')).toBe(true);
    }));

  it('chunked, charset, connection-close, resolved-model, extra-fields, error-param-absent, unknown-model-400', () =>
    withRef({ variants: ['chunked', 'charset', 'connection-close', 'resolved-model', 'extra-fields', 'error-param-absent', 'unknown-model-400'] }, async (ref) => {
      const r = await chat(ref, { model: 'svc-auto', messages: userMsg() });
      expect(r.headers['transfer-encoding']).toBe('chunked');
      expect(r.headers['content-length']).toBeUndefined();
      expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(r.headers.connection).toBe('close');
      expect(r.json.model).toBe('svc-2026-11-01');
      expect(r.json.x_reference_trace).toBeDefined();
      const b = await chat(ref, { model: `brain:${ref.brainId}`, messages: userMsg() });
      expect(b.json.model).toBe('svc');
      const e = await chat(ref, { model: 'nope', messages: userMsg() });
      expect(e.status).toBe(400);
      expect('param' in e.json.error).toBe(false);
      expect(e.json.error.code).toBe('model_not_found');
    }));

  it('a few defects do what they say', async () => {
    await withRef({ defect: 'stream-last-event-unterminated' }, async (ref) => {
      const r = await chat(ref, streamBody);
      expect(r.text.endsWith('\n\ndata: [DONE]\n')).toBe(true);
    });
    await withRef({ defect: 'key-echoed-in-error' }, async (ref) => {
      expect((await call(ref, 'POST', '/chat/completions', { rawBody: '{' })).text).toContain(ref.keys.main);
      expect((await chat(ref, { model: 'svc' }, { key: ref.keys.limited })).text).toContain(ref.keys.limited);
      expect((await chat(ref, { model: 'nope', messages: userMsg() })).text).not.toContain(ref.keys.main);
    });
    await withRef({ defect: 'key-echoed-in-header' }, async (ref) => {
      const r = await call(ref, 'GET', '/models');
      expect(r.headers['x-debug-key']).toBe(ref.keys.main);
    });
    await withRef({ defect: 'auth-after-validation' }, async (ref) => {
      expect((await call(ref, 'POST', '/chat/completions', { key: null, rawBody: '{' })).status).toBe(400);
      expect((await chat(ref, { model: 'nope', messages: userMsg() }, { key: null })).status).toBe(404);
      expect((await chat(ref, { model: 'svc', messages: userMsg() }, { key: null })).status).toBe(401);
      expect((await chat(ref, { model: 'svc', messages: userMsg() })).status).toBe(200);
    });
    await withRef({ defect: 'auth-401-as-event-stream' }, async (ref) => {
      const r = await chat(ref, { ...streamBody }, { key: null });
      expect(r.status).toBe(401);
      expect(r.headers['content-type']).toBe('text/event-stream');
      expect((await chat(ref, { model: 'svc', messages: userMsg() }, { key: null })).headers['content-type']).toBe('application/json');
    });
    await withRef({ defect: 'ratelimit-never-recovers', rateLimit: { rateLimit: { limit: 1, windowMs: 50 } } }, async (ref) => {
      expect((await call(ref, 'GET', '/models', { key: ref.keys.rateLimit })).status).toBe(200);
      expect((await call(ref, 'GET', '/models', { key: ref.keys.rateLimit })).status).toBe(429);
      await new Promise((r) => setTimeout(r, 80));
      expect((await call(ref, 'GET', '/models', { key: ref.keys.rateLimit })).status).toBe(429);
    });
    await withRef({ defect: 'flaky-cc-id' }, async (ref) => {
      const ids = [];
      for (let i = 0; i < 4; i++) ids.push((await chat(ref, { model: 'svc', messages: userMsg() })).json.id);
      expect(ids[0]).toBe('cmpl-x');
      expect(ids[1]).toMatch(/^chatcmpl-.+/);
      expect(ids[2]).toBe('cmpl-x');
    });
    await withRef({ defect: 'scope-unchecked-stream' }, async (ref) => {
      expect((await chat(ref, { model: `brain:${ref.brainId}`, messages: userMsg() }, { key: ref.keys.limited })).status).toBe(403);
      expect((await chat(ref, { model: `brain:${ref.brainId}`, messages: userMsg(), stream: true }, { key: ref.keys.limited })).status).toBe(200);
    });
  });
});
