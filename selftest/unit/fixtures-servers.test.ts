// Sanity checks of the fixture servers themselves: if a fixture drifted, the e2e
// self-tests that rely on it would prove nothing. Global fetch is fine here (this is not
// the suite); node:http is used where the raw bytes of a response matter.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { startIndependentServer } from '../fixtures/independent-server.ts';
import { startHostileServer } from '../fixtures/hostile-server.ts';

const KEYS = {
  main: 'sk-indep-main-0123456789abcdef',
  limited: 'sk-indep-limited-0123456789abcdef',
  rateLimit: 'sk-indep-rate-0123456789abcdef',
};
const BRAIN = '3f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b';
const OTHER_BRAIN = '00000000-0000-4000-8000-000000000000';

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A raw HTTP exchange: the bytes as sent, no decompression, no redirect following. */
function raw(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method ?? 'GET', headers: init.headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (p: Buffer) => parts.push(p));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.setTimeout(5000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(init.body);
  });
}

/** Splits an SSE body into events (data joined by \n), honouring LF, CRLF and CR line ends. */
function sse(text: string): Array<{ data?: string; id?: string; event?: string; comments: string[]; retry?: string }> {
  const lines = text.split(/\r\n|\r|\n/);
  const events: ReturnType<typeof sse> = [];
  let cur: (typeof events)[number] = { comments: [] };
  let touched = false;
  for (const line of lines) {
    if (line === '') {
      if (touched) events.push(cur);
      cur = { comments: [] };
      touched = false;
      continue;
    }
    touched = true;
    if (line.startsWith(':')) {
      cur.comments.push(line.slice(1).trim());
      continue;
    }
    const i = line.indexOf(':');
    const field = i < 0 ? line : line.slice(0, i);
    let value = i < 0 ? '' : line.slice(i + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') cur.data = cur.data === undefined ? value : `${cur.data}\n${value}`;
    else if (field === 'id') cur.id = value;
    else if (field === 'event') cur.event = value;
    else if (field === 'retry') cur.retry = value;
  }
  return events;
}

function expectErrorBody(status: number, headers: Headers | http.IncomingHttpHeaders, body: unknown) {
  expect(status).toBeGreaterThanOrEqual(400);
  const ct = headers instanceof Headers ? headers.get('content-type') : headers['content-type'];
  expect(ct).toMatch(/^application\/json/);
  const err = (body as { error: Record<string, unknown> }).error;
  expect(typeof err.message).toBe('string');
  expect(typeof err.type).toBe('string');
  expect(typeof err.code).toBe('string');
  expect(err.param).toBeNull();
}

const chatBody = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: 'svc', messages: [{ role: 'user', content: 'Say hello in three words' }], ...extra });

describe('independent server', () => {
  let srv: { url: string; close(): Promise<void> };
  const auth = (key = KEYS.main) => ({ Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' });

  beforeAll(async () => {
    srv = await startIndependentServer({ keys: KEYS, brainId: BRAIN });
    expect(srv.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });
  afterAll(async () => {
    await srv.close();
  });

  it('lists the models', async () => {
    const res = await fetch(`${srv.url}/models`, { headers: auth() });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as { object: string; data: Array<{ id: string; object: string }>; has_more: boolean };
    expect(body.object).toBe('list');
    expect(body.data.map((m) => m.id)).toEqual(['svc-auto', 'svc']);
    expect(body.data.every((m) => m.object === 'model')).toBe(true);
  });

  it('answers a chat completion with the spec shapes, resolving svc-auto', async () => {
    const res = await fetch(`${srv.url}/chat/completions`, {
      method: 'POST',
      headers: auth(),
      body: chatBody({ model: 'svc-auto', temperature: 0.2, max_tokens: 50, top_p: 1, user: 'u', surprise: [1] }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
    expect(body.object).toBe('chat.completion');
    expect(body.model).toBe('svc-2026-11-01');
    expect(body.choices).toHaveLength(1);
    expect(body.choices[0]).toMatchObject({ index: 0, finish_reason: 'stop', message: { role: 'assistant' } });
    expect(typeof body.choices[0].message.content).toBe('string');
    expect(body.choices[0].message.content.length).toBeGreaterThan(0);
    const u = body.usage;
    expect(u.total_tokens).toBe(u.prompt_tokens + u.completion_tokens);
    expect(u.completion_tokens).toBeGreaterThan(0);
  });

  it('replies deterministically from the last user message', async () => {
    const ask = async () =>
      ((await (await fetch(`${srv.url}/chat/completions`, { method: 'POST', headers: auth(), body: chatBody() })).json()) as any)
        .choices[0].message.content;
    expect(await ask()).toBe(await ask());
  });

  it('refuses missing, unknown and malformed keys with 401 and never echoes a key', async () => {
    const variants: Array<Record<string, string>> = [
      {},
      { Authorization: 'Bearer sk-unknown-key-000000000000' },
      { Authorization: `Basic ${KEYS.main}` },
      { Authorization: `Token ${KEYS.main}` },
      { Authorization: 'Bearer ' },
      { Authorization: KEYS.main },
    ];
    for (const h of variants) {
      for (const [method, path, body] of [
        ['GET', '/models', undefined],
        ['POST', '/chat/completions', '{not json'],
        ['POST', `/brains/${OTHER_BRAIN}/chat`, '{}'],
        ['POST', '/chat/completions', chatBody({ stream: true })],
      ] as const) {
        const res = await raw(`${srv.url}${path}`, { method, headers: h, body });
        expect(res.status, `${method} ${path} ${JSON.stringify(h)}`).toBe(401);
        expect(res.headers.connection).toBe('close');
        const text = res.body.toString();
        expectErrorBody(res.status, res.headers, JSON.parse(text));
        expect(text).not.toContain('sk-unknown-key-000000000000');
        expect(text).not.toContain(KEYS.main);
        expect(JSON.stringify(res.headers)).not.toContain(KEYS.main);
      }
    }
  });

  it('validates chat requests with 400 error bodies', async () => {
    const bad = [
      '{not json',
      '[1,2]',
      JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }),
      JSON.stringify({ model: 5, messages: [{ role: 'user', content: 'x' }] }),
      JSON.stringify({ model: 'svc' }),
      JSON.stringify({ model: 'svc', messages: 'hi' }),
      JSON.stringify({ model: 'svc', messages: [] }),
      JSON.stringify({ model: 'svc', messages: [{ content: 'x' }] }),
      JSON.stringify({ model: 'svc', messages: [{ role: 'user', content: 5 }] }),
      JSON.stringify({ model: 'svc', messages: [{ role: 'user', content: { a: 1 } }] }),
      chatBody({ stream: 'yes' }),
      chatBody({ model: 'no-such-model' }),
      chatBody({ model: 'constructor' }),
    ];
    for (const body of bad) {
      const res = await fetch(`${srv.url}/chat/completions`, { method: 'POST', headers: auth(), body });
      expect(res.status, body).toBe(400);
      expectErrorBody(res.status, res.headers, await res.json());
    }
    const ok = await fetch(`${srv.url}/chat/completions`, {
      method: 'POST',
      headers: auth(),
      body: JSON.stringify({
        model: 'svc',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
          { role: 'assistant', content: null },
          { role: 'user', content: 'Again' },
        ],
        stream: false,
        stream_options: { include_usage: true },
      }),
    });
    expect(ok.status).toBe(200);
  });

  it('gates brains by scope and checks brain ids on both routes', async () => {
    const viaModel = (key: string, id: string, stream = false) =>
      fetch(`${srv.url}/chat/completions`, { method: 'POST', headers: auth(key), body: chatBody({ model: `brain:${id}`, stream }) });
    const viaRoute = (key: string, id: string, stream = false) =>
      fetch(`${srv.url}/brains/${id}/chat`, {
        method: 'POST',
        headers: auth(key),
        body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], stream }),
      });
    for (const call of [viaModel, viaRoute]) {
      for (const stream of [false, true]) {
        const r403 = await call(KEYS.limited, BRAIN, stream);
        expect(r403.status).toBe(403);
        expectErrorBody(r403.status, r403.headers, await r403.json());
      }
      const r400 = await call(KEYS.main, 'not-a-uuid');
      expect(r400.status).toBe(400);
      expectErrorBody(r400.status, r400.headers, await r400.json());
      const r404 = await call(KEYS.main, OTHER_BRAIN);
      expect(r404.status).toBe(404);
      expectErrorBody(r404.status, r404.headers, await r404.json());
      const ok = await call(KEYS.main, BRAIN);
      expect(ok.status).toBe(200);
      const body = (await ok.json()) as any;
      expect(body.object).toBe('chat.completion');
      expect(body.model).toBe(`brain:${BRAIN}`);
      const s = await call(KEYS.main, BRAIN, true);
      expect(s.status).toBe(200);
      expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(await s.text()).toContain('[DONE]');
    }
    // The limited key still reaches plain models (the scope gates brains only).
    const plain = await fetch(`${srv.url}/chat/completions`, { method: 'POST', headers: auth(KEYS.limited), body: chatBody() });
    expect(plain.status).toBe(200);
  });

  it('answers 404 for unavailable and unknown paths, 405 for wrong methods, 204 to preflights', async () => {
    for (const p of ['/images/generations', '/images/edits', '/images/variations', '/videos', '/videos/generations', '/nope']) {
      const res = await fetch(`${srv.url}${p}`, { method: 'POST', headers: auth(), body: '{}' });
      expect(res.status, p).toBe(404);
      expectErrorBody(res.status, res.headers, await res.json());
    }
    const outside = await raw(srv.url.replace(/\/v1$/, '/v2/models'), { headers: auth() });
    expect(outside.status).toBe(404);
    const wrong = await fetch(`${srv.url}/models`, { method: 'POST', headers: auth(), body: '{}' });
    expect(wrong.status).toBe(405);
    expectErrorBody(wrong.status, wrong.headers, await wrong.json());
    const wrong2 = await fetch(`${srv.url}/chat/completions`, { headers: auth() });
    expect(wrong2.status).toBe(405);
    const pre = await raw(`${srv.url}/chat/completions`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://evil.example',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(Object.keys(pre.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
  });

  it('streams well-formed SSE with CRLF, comments, id and retry fields', async () => {
    const res = await raw(`${srv.url}/chat/completions`, { method: 'POST', headers: auth(), body: chatBody({ stream: true }) });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(res.headers['transfer-encoding']).toBe('chunked');
    const text = res.body.toString('utf8');
    expect(text.startsWith(': ok\r\nretry: 3000\r\n\r\n')).toBe(true);
    expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/); // every line end is CRLF
    expect(text).toContain(': keep-alive\r\n');
    expect(text).not.toMatch(/^event:/m);
    expect(text.endsWith('data: [DONE]\r\n\r\n')).toBe(true);
    const events = sse(text).filter((e) => e.data !== undefined);
    expect(events.every((e) => e.id !== undefined)).toBe(true);
    expect(events[events.length - 1].data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data!));
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0].id).toMatch(/^chatcmpl-/);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && !('usage' in c))).toBe(true);
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    const finished = chunks.filter((c) => c.choices[0].finish_reason !== null);
    expect(finished).toHaveLength(1);
    expect(finished[0]).toBe(chunks[chunks.length - 1]);
    expect(finished[0].choices[0]).toMatchObject({ finish_reason: 'stop', delta: {} });
    const content = chunks.map((c) => c.choices[0].delta.content ?? '').join('');
    expect(content.split(' ').length).toBe(chunks.length - 2); // one chunk per word
  });

  it('sends a usage chunk with empty choices when include_usage is asked', async () => {
    const res = await raw(`${srv.url}/chat/completions`, {
      method: 'POST',
      headers: auth(),
      body: chatBody({ stream: true, stream_options: { include_usage: true } }),
    });
    const events = sse(res.body.toString()).filter((e) => e.data !== undefined);
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data!));
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage.total_tokens).toBe(last.usage.prompt_tokens + last.usage.completion_tokens);
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('rate-limits the rateLimit key with 429 and recovers after Retry-After', async () => {
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${srv.url}/models`, { headers: auth(KEYS.rateLimit) });
      statuses.push(res.status);
      if (res.status === 429 && !limited) limited = res;
      else await res.arrayBuffer();
    }
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(limited).toBeDefined();
    expectErrorBody(429, limited!.headers, await limited!.json());
    const retryAfter = Number(limited!.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 2).toBe(true);
    expect(limited!.headers.get('x-ratelimit-limit-requests')).toBe('5');
    expect(limited!.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(limited!.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+s$/);
    // Another key is unaffected.
    expect((await fetch(`${srv.url}/models`, { headers: auth() })).status).toBe(200);
    await new Promise((r) => setTimeout(r, retryAfter * 1000 + 50));
    expect((await fetch(`${srv.url}/models`, { headers: auth(KEYS.rateLimit) })).status).toBe(200);
  });
});

describe('independent server choices', () => {
  it('uses CR line ends and one chunk when asked', async () => {
    const srv = await startIndependentServer({ keys: KEYS, brainId: BRAIN, choices: { lineEnd: '\r', oneChunk: true } });
    try {
      const res = await raw(`${srv.url}/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${KEYS.main}` },
        body: chatBody({ stream: true }),
      });
      const text = res.body.toString();
      expect(text).not.toContain('\n');
      expect(text.endsWith('data: [DONE]\r\r')).toBe(true);
      const chunks = sse(text)
        .filter((e) => e.data !== undefined && e.data !== '[DONE]')
        .map((e) => JSON.parse(e.data!));
      expect(chunks).toHaveLength(1);
      expect(chunks[0].choices[0]).toMatchObject({ finish_reason: 'stop', delta: { role: 'assistant' } });
      expect(chunks[0].choices[0].delta.content.length).toBeGreaterThan(0);
    } finally {
      await srv.close();
    }
  });

  it('uses LF line ends when asked', async () => {
    const srv = await startIndependentServer({ keys: KEYS, brainId: BRAIN, choices: { lineEnd: '\n' } });
    try {
      const res = await raw(`${srv.url}/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${KEYS.main}` },
        body: chatBody({ stream: true }),
      });
      const text = res.body.toString();
      expect(text).not.toContain('\r');
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    } finally {
      await srv.close();
    }
  });

  it('gzips JSON bodies when the client accepts gzip', async () => {
    const srv = await startIndependentServer({ keys: KEYS, brainId: BRAIN, choices: { gzip: true } });
    try {
      const zipped = await raw(`${srv.url}/models`, {
        headers: { Authorization: `Bearer ${KEYS.main}`, 'Accept-Encoding': 'gzip, deflate' },
      });
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(zipped.headers.vary).toBe('Accept-Encoding');
      expect(JSON.parse(gunzipSync(zipped.body).toString()).object).toBe('list');
      const err = await raw(`${srv.url}/models`, { headers: { 'Accept-Encoding': 'gzip' } });
      expect(err.status).toBe(401);
      expect(JSON.parse(gunzipSync(err.body).toString()).error.code).toBe('key_invalid');
      const plain = await raw(`${srv.url}/models`, { headers: { Authorization: `Bearer ${KEYS.main}` } });
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(JSON.parse(plain.body.toString()).object).toBe('list');
      // fetch decompresses transparently.
      const viaFetch = await fetch(`${srv.url}/models`, { headers: { Authorization: `Bearer ${KEYS.main}` } });
      expect(((await viaFetch.json()) as any).object).toBe('list');
    } finally {
      await srv.close();
    }
  });
});

/** Resolves with how long `p` took; fails the test if it takes longer than `ms`. */
async function within<T>(ms: number, p: Promise<T>): Promise<number> {
  const t0 = Date.now();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    p,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`took longer than ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
  return Date.now() - t0;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens a streaming request and collects bytes until `until(text)` holds or `ms` passes. */
function openStream(url: string, body: string) {
  const req = http.request(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, agent: false });
  let text = '';
  let ended = false;
  let status = 0;
  let contentType = '';
  req.on('response', (res) => {
    status = res.statusCode!;
    contentType = String(res.headers['content-type']);
    res.setEncoding('utf8');
    res.on('data', (d: string) => (text += d));
    res.on('end', () => (ended = true));
    res.on('error', () => {});
  });
  req.on('error', () => {});
  req.end(body);
  return {
    get text() {
      return text;
    },
    get ended() {
      return ended;
    },
    get status() {
      return status;
    },
    get contentType() {
      return contentType;
    },
    async waitFor(pred: (t: string) => boolean, ms: number) {
      const t0 = Date.now();
      while (!pred(text) && Date.now() - t0 < ms) await sleep(10);
      return pred(text);
    },
    destroy: () => req.destroy(),
  };
}

describe('hostile server', () => {
  it('hang: reads the request and never answers', async () => {
    const h = await startHostileServer('hang');
    const ac = new AbortController();
    const t = setTimeout(() => ac.abort(), 300);
    await expect(fetch(`${h.url}/models`, { signal: ac.signal })).rejects.toThrow();
    clearTimeout(t);
    expect(h.stats.requests).toBe(1);
    // A second connection left hanging must not block close().
    const s = openStream(`${h.url}/chat/completions`, chatBody({ stream: true }));
    await sleep(100);
    await within(1000, h.close());
    s.destroy();
  });

  it('reset: drops the connection on every request', async () => {
    const h = await startHostileServer('reset');
    try {
      const err = await fetch(`${h.url}/models`).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      expect(h.stats.requests).toBeGreaterThanOrEqual(1);
    } finally {
      await within(1000, h.close());
    }
  });

  it('huge-body: streams lazily, stops when the client goes away, closes promptly', async () => {
    const h = await startHostileServer('huge-body');
    const mem0 = process.memoryUsage().rss;
    const got = await new Promise<{ bytes: number; head: string; type: string; length?: string }>((resolve, reject) => {
      const req = http.get(`${h.url}/models`, { agent: false }, (res) => {
        let bytes = 0;
        let head = '';
        res.on('data', (d: Buffer) => {
          if (head.length < 64) head += d.toString('utf8', 0, Math.min(d.length, 64));
          bytes += d.length;
          if (bytes >= 4 * 1024 * 1024) {
            req.destroy();
            resolve({ bytes, head, type: String(res.headers['content-type']), length: res.headers['content-length'] });
          }
        });
        res.on('error', () => {});
      });
      req.on('error', (e) => (e.message.includes('aborted') || e.message.includes('socket hang up') ? undefined : reject(e)));
    });
    expect(got.type).toBe('application/json');
    expect(got.length).toBeUndefined();
    expect(got.head.startsWith('{"object":"list","data":[')).toBe(true);
    await sleep(100);
    // Far below 300 MiB: the server stopped writing when the socket closed.
    expect(h.stats.bytesSent).toBeGreaterThanOrEqual(4 * 1024 * 1024);
    expect(h.stats.bytesSent).toBeLessThan(64 * 1024 * 1024);
    expect(process.memoryUsage().rss - mem0).toBeLessThan(200 * 1024 * 1024);
    await within(1000, h.close());
  });

  it('huge-body: a small limit yields a complete, valid JSON document', async () => {
    const h = await startHostileServer('huge-body', { hugeBodyBytes: 300_000 });
    try {
      const res = await raw(`${h.url}/models`);
      expect(res.body.length).toBeLessThanOrEqual(300_000);
      expect(res.body.length).toBeGreaterThan(290_000);
      expect(JSON.parse(res.body.toString()).object).toBe('list');
      await sleep(20);
      expect(h.stats.bytesSent).toBe(res.body.length);
    } finally {
      await h.close();
    }
  });

  it('redirect: 307 to another origin, which records only followed requests', async () => {
    const h = await startHostileServer('redirect');
    try {
      expect(h.otherOrigin).toBeDefined();
      const other = h.otherOrigin!;
      expect(new URL(other.url).origin).not.toBe(new URL(h.url).origin);
      const manual = await raw(`${h.url}/models?x=1`, { headers: { Authorization: 'Bearer sk-secret-redirect-key' } });
      expect(manual.status).toBe(307);
      expect(manual.headers.location).toBe(`${new URL(other.url).origin}/v1/models?x=1`);
      expect(other.requests).toEqual([]);
      // Followed by fetch: the second origin sees the request (fetch drops Authorization
      // on a cross-origin redirect; the record tells whatever the client did).
      const followed = await fetch(`${h.url}/chat/completions`, {
        method: 'POST',
        headers: { Authorization: 'Bearer sk-secret-redirect-key', 'Content-Type': 'application/json' },
        body: chatBody(),
      });
      expect(followed.status).toBe(200);
      expect(await followed.json()).toEqual({});
      expect(other.requests).toHaveLength(1);
      expect(other.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
      expect(other.requests[0].authorization).toBeUndefined();
      expect(h.stats.requests).toBe(2);
    } finally {
      await within(1000, h.close());
    }
  });

  it('stall-stream: plausible JSON, then a stream that stops after two chunks', async () => {
    const h = await startHostileServer('stall-stream');
    const models = await fetch(`${h.url}/models`);
    expect(((await models.json()) as any).data.map((m: any) => m.id)).toContain('svc');
    const chat = await fetch(`${h.url}/chat/completions`, { method: 'POST', body: chatBody() });
    expect(((await chat.json()) as any).choices[0].message.role).toBe('assistant');
    const s = openStream(`${h.url}/chat/completions`, chatBody({ stream: true }));
    expect(await s.waitFor((t) => (t.match(/^data: /gm) ?? []).length >= 2, 2000)).toBe(true);
    expect(s.status).toBe(200);
    expect(s.contentType).toMatch(/^text\/event-stream/);
    const before = s.text;
    await sleep(300);
    expect(s.text).toBe(before);
    expect(s.ended).toBe(false);
    for (const e of sse(before).filter((e) => e.data)) expect(JSON.parse(e.data!).object).toBe('chat.completion.chunk');
    await within(1000, h.close());
    s.destroy();
  });

  it('never-close: a complete stream with [DONE] whose response never ends', async () => {
    const h = await startHostileServer('never-close');
    const s = openStream(`${h.url}/chat/completions`, chatBody({ stream: true }));
    expect(await s.waitFor((t) => t.includes('data: [DONE]\n\n'), 2000)).toBe(true);
    const chunks = sse(s.text)
      .filter((e) => e.data && e.data !== '[DONE]')
      .map((e) => JSON.parse(e.data!));
    expect(chunks.filter((c) => c.choices[0].finish_reason === 'stop')).toHaveLength(1);
    await sleep(300);
    expect(s.ended).toBe(false);
    await within(1000, h.close());
    s.destroy();
  });
});
