// The built k6 bundles, executed in Node through a stand-in for k6's modules
// (selftest/support/k6-shim.ts), against answers captured from the reference server,
// its legal variants and its defects: options and thresholds from __ENV, the
// requests sent, the checks and custom metrics each answer produces, and
// handleSummary's text, JSON and JUnit. What only a real k6 can show (timing,
// threshold evaluation, exit codes) is in selftest/e2e/k6-run.test.ts.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildK6 } from '../../load/k6/build.ts';
import { startReferenceServer, type ReferenceOptions, type ReferenceServer } from '../../reference/server.ts';
import { failedChecks, loadBundle, total, type ShimReply } from '../support/k6-shim.ts';
import { bucketLabel, bucketOf, LAST_BUCKET } from '../../load/k6/lib/log-buckets.ts';
import { loadTokenizer } from '../../load/workload/tokenizer.ts';
import { mergeK6, type K6Summary } from '../../load/report/merge.ts';

let outdir: string;
const bundle = (name: string) => join(outdir, `${name}.js`);

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), 'chatgate-k6-scripts-'));
  await buildK6({ outdir });
});
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

interface Captured { ref: { url: string; keys: ReferenceServer['keys']; brainId: string }; reply: ShimReply }

/** One answer from a reference started with `opts`, kept as bytes for the stand-in to replay. */
async function capture(opts: ReferenceOptions, path: string, body: unknown, key: 'main' | 'rateLimit' = 'main'): Promise<Captured> {
  const ref = await startReferenceServer(opts);
  try {
    const res = await fetch(`${ref.url}${path.replace('{brain}', ref.brainId)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ref.keys[key]}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { ref: { url: ref.url, keys: ref.keys, brainId: ref.brainId }, reply: { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() } };
  } finally {
    await ref.close();
  }
}

/** A 429 from the reference's low-limit key, with whatever form the defect gives it. */
async function capture429(opts: ReferenceOptions): Promise<ShimReply> {
  const ref = await startReferenceServer(opts);
  try {
    const replies = await Promise.all(Array.from({ length: 20 }, async () => {
      const res = await fetch(`${ref.url}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ref.keys.rateLimit}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 }),
      }).catch(() => undefined);
      if (!res) return { status: 0, error: 'connection reset by peer' } as ShimReply;
      return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() } as ShimReply;
    }));
    const limited = replies.find((r) => r.status !== 200);
    if (!limited) throw new Error('the reference never limited the rateLimit key');
    return limited;
  } finally {
    await ref.close();
  }
}

const userTurn = { model: 'svc', messages: [{ role: 'user', content: 'hi' }] };

function envFor(c: Captured, extra: Record<string, string> = {}): Record<string, string> {
  return { TARGET_URL: c.ref.url, API_KEY: c.ref.keys.main, RATE_LIMIT_API_KEY: c.ref.keys.rateLimit, BRAIN_ID: c.ref.brainId, ...extra };
}

const TARGET = { TARGET_URL: 'http://127.0.0.1:9/v1', API_KEY: 'sk-test-0123456789abcdef', BRAIN_ID: '3f1c2b9e-8d7a-4c6b-9e5f-1a2b3c4d5e6f' };

describe('configuration from __ENV', () => {
  it('constant-arrival-rate by default, from RATE, DURATION, VUS, MAX_VUS', () => {
    const { exports } = loadBundle(bundle('chat-throughput'), { ...TARGET, RATE: '25', DURATION: '2m', VUS: '30', MAX_VUS: '90' });
    expect(exports.options.scenarios).toEqual({
      chat: { executor: 'constant-arrival-rate', rate: 25, duration: '2m', timeUnit: '1s', preAllocatedVUs: 30, maxVUs: 90 },
    });
  });

  it('SCENARIO=ramp gives ramping-arrival-rate from START_RATE via RAMP_UP to RATE, held for DURATION; STAGES overrides', () => {
    const ramp = loadBundle(bundle('chat-stream'), { ...TARGET, SCENARIO: 'ramp', RATE: '40', START_RATE: '2', RAMP_UP: '1m', DURATION: '5m' }).exports.options.scenarios.stream;
    expect(ramp).toMatchObject({ executor: 'ramping-arrival-rate', startRate: 2, timeUnit: '1s', stages: [{ target: 40, duration: '1m' }, { target: 40, duration: '5m' }] });
    const staged = loadBundle(bundle('chat-throughput'), { ...TARGET, SCENARIO: 'ramp', STAGES: '10:30s,50:1m,0:10s' }).exports.options.scenarios.chat;
    expect(staged.stages).toEqual([{ target: 10, duration: '30s' }, { target: 50, duration: '1m' }, { target: 0, duration: '10s' }]);
    expect(staged.maxVUs).toBeGreaterThanOrEqual(staged.preAllocatedVUs);
  });

  it('PHASES (the Node harness\'s --phases syntax, % of CAPACITY) become ramping-arrival-rate stages; a new hold rate is a 0 s step; SLICE is whole seconds', () => {
    const phased = loadBundle(bundle('chat-stream'), { ...TARGET, PHASES: 'ramp 30s to 70%, hold 300s, hold 10s at 2', CAPACITY: '10' }).exports.options.scenarios.stream;
    expect(phased).toMatchObject({ executor: 'ramping-arrival-rate', startRate: 0, timeUnit: '1s', stages: [{ target: 7, duration: '30000ms' }, { target: 7, duration: '300000ms' }, { target: 2, duration: '0s' }, { target: 2, duration: '10000ms' }] });
    const half = loadBundle(bundle('chat-throughput'), { ...TARGET, PHASES: 'hold 20s at 2.5' }).exports.options.scenarios.chat;
    expect(half).toMatchObject({ executor: 'ramping-arrival-rate', startRate: 25, timeUnit: '10000ms', stages: [{ target: 25, duration: '20000ms' }] });
    expect(() => loadBundle(bundle('chat-stream'), { ...TARGET, PHASES: 'ramp 5s to 70%' })).toThrow(/^chatgate k6: PHASES: "ramp 5s to 70%" is a share of a capacity; give CAPACITY=<req\/s>$/);
    expect(() => loadBundle(bundle('chat-stream'), { ...TARGET, PHASES: 'jump 3s' })).toThrow(/PHASES: "jump 3s" is not a phase/);
    expect(() => loadBundle(bundle('chat-stream'), { ...TARGET, PHASES: 'hold 5s at 1', STAGES: '1:5s' })).toThrow(/drop STAGES/);
    expect(() => loadBundle(bundle('chat-stream'), { ...TARGET, PHASES: 'hold 5s at 1', CHANGE_AT: 'soon' })).toThrow(/CHANGE_AT: "soon" is not a k6 duration/);
    expect(() => loadBundle(bundle('chat-stream-sse'), { ...TARGET, SLICE: '2500ms' })).toThrow(/SLICE: "2500ms" is not a whole number of seconds/);
    expect(() => loadBundle(bundle('chat-stream-sse'), { ...TARGET, SLICE: 'soon' })).toThrow(/SLICE: "soon" is not a k6 duration/);
    expect(() => loadBundle(bundle('chat-stream-sse'), { ...TARGET, SLICE: '5s' })).not.toThrow();
  });

  it('thresholds: p95 latency, failure rate (with an aborting ceiling), 429 share, checks rate, body shape (aborting)', () => {
    const { exports, shim } = loadBundle(bundle('chat-throughput'), { ...TARGET, P95_MS: '1500', MAX_FAILURE_RATE: '0.02', MAX_429_SHARE: '0.1', MIN_CHECKS_RATE: '0.95' });
    // Besides the judging thresholds, one always-true threshold per log bucket of the mergeable request durations (lib/distributions.ts).
    const judging = Object.fromEntries(Object.entries(exports.options.thresholds as Record<string, unknown>).filter(([k]) => !k.startsWith('chatgate_dist_')));
    const buckets = Object.entries(exports.options.thresholds as Record<string, unknown>).filter(([k]) => k.startsWith('chatgate_dist_'));
    expect(buckets.length).toBe(LAST_BUCKET + 2);
    expect(buckets.every(([k, v]) => /^chatgate_dist_req_ms\{b:\d{4}\}$/.test(k) && JSON.stringify(v) === '["count>=0"]')).toBe(true);
    expect(judging).toEqual({
      'http_req_duration{status:200}': ['p(95)<1500'],
      http_req_failed: ['rate<0.02', { threshold: 'rate<0.5', abortOnFail: true, delayAbortEval: '10s' }],
      chatgate_rate_limited: ['rate<=0.1'],
      checks: ['rate>=0.95'],
      chatgate_body_shape_failures: [{ threshold: 'count<1', abortOnFail: true }],
    });
    expect(exports.options.summaryTrendStats).toContain('p(99)');
    // 429 is an expected status for http_req_failed.
    expect(shim.responseCallback).toEqual({ expectedStatuses: [{ min: 200, max: 299 }, 429] });
  });

  it('the stream script judges latency by its TTFB and E2E trends', () => {
    const t = loadBundle(bundle('chat-stream'), { ...TARGET, TTFB_P95_MS: '800', P95_MS: '20000' }).exports.options.thresholds;
    expect(t.chatgate_stream_ttfb).toEqual(['p(95)<800']);
    expect(t.chatgate_stream_e2e).toEqual(['p(95)<20000']);
    expect(t['http_req_duration{status:200}']).toBeUndefined();
  });

  it('THRESHOLDS adds the Node harness\'s absolute limits (metric<limit) as k6 thresholds, under each script\'s metrics', () => {
    const sse = loadBundle(bundle('chat-stream-sse'), { ...TARGET, THRESHOLDS: 'ttft_p95_ms<500,output_tokens_per_s>100,error_share<0.02' }).exports.options.thresholds;
    expect(sse.ttft_ms).toContain('p(95)<500');
    expect(sse.output_tokens).toEqual(['rate>100']);
    expect(sse.chatgate_stream_failed).toContain('rate<0.02');
    const tp = loadBundle(bundle('chat-throughput'), { ...TARGET, THRESHOLDS: 'latency_p95_ms<300' }).exports.options.thresholds;
    expect(tp['http_req_duration{status:200}']).toContain('p(95)<300');
    expect(() => loadBundle(bundle('chat-throughput'), { ...TARGET, THRESHOLDS: 'ttft_p95_ms<500' })).toThrow(/THRESHOLDS: "ttft_p95_ms<500": this script does not measure ttft_p95_ms/);
    expect(() => loadBundle(bundle('chat-throughput'), { ...TARGET, THRESHOLDS: 'ttft_p95_ms=500' })).toThrow(/THRESHOLDS: "ttft_p95_ms=500": use metric<limit/);
  });

  const refusals: Array<[string, string, Record<string, string>, RegExp]> = [
    ['no TARGET_URL', 'chat-throughput', { API_KEY: 'k' }, /TARGET_URL: is required/],
    ['TARGET_URL without /v1', 'chat-throughput', { TARGET_URL: 'https://api.example/api', API_KEY: 'k' }, /TARGET_URL: path "\/api" does not end with \/v1/],
    ['credentials in TARGET_URL', 'chat-throughput', { TARGET_URL: 'https://u:p@api.example/v1', API_KEY: 'k' }, /TARGET_URL: credentials/],
    ['API_KEY with a space', 'chat-stream', { TARGET_URL: 'https://api.example/v1', API_KEY: 'sk test' }, /API_KEY: contains spaces/],
    ['RATE not a number', 'chat-throughput', { ...TARGET, RATE: 'fast' }, /RATE: "fast" is not a whole number/],
    ['bad DURATION', 'chat-throughput', { ...TARGET, DURATION: '10 minutes' }, /DURATION: "10 minutes" is not a k6 duration/],
    ['bad SCENARIO', 'chat-throughput', { ...TARGET, SCENARIO: 'spike' }, /SCENARIO: "spike" is not constant or ramp/],
    ['bad STAGES', 'chat-throughput', { ...TARGET, SCENARIO: 'ramp', STAGES: '10/30s' }, /STAGES: "10\/30s" is not rate:duration/],
    ['brain-mix without BRAIN_ID', 'brain-mix', { TARGET_URL: TARGET.TARGET_URL, API_KEY: 'k' }, /BRAIN_ID: is required by this script/],
    ['bad BRAIN_ID', 'brain-mix', { ...TARGET, BRAIN_ID: 'brain-1' }, /BRAIN_ID: "brain-1" is not a uuid/],
    ['bad MIX', 'brain-mix', { ...TARGET, MIX: 'models=1,images=2' }, /MIX: "images=2" is not kind=weight/],
  ];
  for (const [what, script, env, message] of refusals) {
    it(`refuses ${what} with one line naming the variable`, () => {
      expect(() => loadBundle(bundle(script), env)).toThrow(message);
    });
  }
});

describe('chat-throughput bundle', () => {
  let ok: Captured;
  beforeAll(async () => { ok = await capture({}, '/chat/completions', userTurn); });

  it('sends an authenticated chat request with a per-VU prompt and passes every check on the reference\'s answer', () => {
    const { exports, shim } = loadBundle(bundle('chat-throughput'), envFor(ok, { MODELS: 'svc-auto,svc', MAX_TOKENS: '16' }), () => ok.reply);
    exports.default();
    const req = shim.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe(`${ok.ref.url}/chat/completions`);
    expect(req.params.headers.Authorization).toBe(`Bearer ${ok.ref.keys.main}`);
    const sent = JSON.parse(req.body!);
    expect(sent.model).toBe('svc'); // (idInTest 7 + iteration 0) % 2 models
    expect(sent.max_tokens).toBe(16);
    expect(sent.messages[0].content).toMatch(/^Say hello.*\(request 7340032, code CG[0-9A-Z]{10}\)$/); // unique: vu 7 * 2^20 + iteration 0, with its canary (SVC-9)
    expect(req.params.tags).toMatchObject({ name: 'POST /chat/completions', kind: 'chat', model: 'svc' });
    expect(failedChecks(shim)).toEqual([]);
    expect(Object.keys(shim.checks)).toEqual(['status is 2xx or 429', 'completion: Content-Type is JSON', 'completion: body is a chat completion (schema)']);
    expect(total(shim, 'chatgate_body_shape_failures')).toBe(0);
    expect(total(shim, 'chatgate_completion_tokens')).toBe(JSON.parse(ok.reply.body!).usage.completion_tokens);
    expect(total(shim, 'chatgate_rate_limited')).toBe(0);
    // The 200 answer's duration also counted once in its log bucket (mergeable request durations).
    const dist = shim.samples.filter((s) => s.metric === 'chatgate_dist_req_ms');
    const duration = ok.reply.timings?.duration ?? (ok.reply.timings?.waiting ?? 5) + 1; // the stand-in's timings
    expect(dist).toEqual([{ metric: 'chatgate_dist_req_ms', value: 1, tags: { b: bucketLabel(bucketOf(duration)) } }]);
  });

  it('a 429 answer is not a request duration of the 200s: no bucket count', () => {
    const { exports, shim } = loadBundle(bundle('chat-throughput'), envFor(ok), () => ({ status: 429, headers: { 'Content-Type': 'application/json', 'Retry-After': '1' }, body: '{"error":{"message":"slow down","type":"rate_limit_error","code":"rate_limited"}}' }));
    exports.default();
    expect(shim.samples.filter((s) => s.metric === 'chatgate_dist_req_ms')).toEqual([]);
  });

  const broken: Array<[string, string, string]> = [
    ['cc-id-no-prefix', 'completion: body is a chat completion (schema)', 'RES-CC-1'],
    ['usage-tokens-string', 'completion: body is a chat completion (schema)', 'RES-US-1'],
    ['msg-content-null', 'completion: body is a chat completion (schema)', 'RES-MSG-1'],
    ['cc-usage-missing', 'completion: body is a chat completion (schema)', 'RES-CC-5'],
    ['cc-json-as-text', 'completion: Content-Type is JSON', 'none'],
  ];
  for (const [defect, check, clause] of broken) {
    it(`defect ${defect}: "${check}" fails${clause !== 'none' ? `, a body-shape failure tagged ${clause}` : ''}`, async () => {
      const c = await capture({ defect }, '/chat/completions', userTurn);
      const { exports, shim } = loadBundle(bundle('chat-throughput'), envFor(c), () => c.reply);
      exports.default();
      expect(failedChecks(shim)).toEqual([check]);
      expect(total(shim, 'chatgate_body_shape_failures')).toBe(clause === 'none' ? 0 : 1);
      if (clause !== 'none') {
        expect(total(shim, 'chatgate_body_shape_failures', { clause, schema: 'chat-completion' })).toBe(1);
        expect(shim.logs.join('\n')).toContain(clause);
      }
    });
  }

  it('a 429 with an error body is expected: counted, no failed check', async () => {
    const reply = await capture429({});
    const { exports, shim } = loadBundle(bundle('chat-throughput'), { ...TARGET }, () => reply);
    exports.default();
    expect(reply.status).toBe(429);
    expect(failedChecks(shim)).toEqual([]);
    expect(total(shim, 'chatgate_status_429')).toBe(1);
    expect(total(shim, 'chatgate_rate_limited')).toBe(1);
  });

  it('a 503 without a body fails the status check and the error-body check (ERR-4)', () => {
    const { exports, shim } = loadBundle(bundle('chat-throughput'), { ...TARGET }, () => ({ status: 503, body: '' }));
    exports.default();
    expect(failedChecks(shim).sort()).toEqual(['error status: body is an error object (schema)', 'status is 2xx or 429']);
    expect(total(shim, 'chatgate_status_503')).toBe(1);
    expect(total(shim, 'chatgate_body_shape_failures', { schema: 'error', clause: 'ERR-1' })).toBe(1);
  });

  it('no response at all (status 0) fails the status check and is logged', () => {
    const { exports, shim } = loadBundle(bundle('chat-throughput'), { ...TARGET }, () => ({ status: 0, error: 'dial tcp: connection refused' }));
    exports.default();
    expect(failedChecks(shim)).toEqual(['status is 2xx or 429']);
    expect(shim.logs.join('\n')).toContain('connection refused');
  });

  it('a key the target echoes back never reaches the log', () => {
    const echoed = { status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { message: `bad key ${TARGET.API_KEY}`, type: 'x' } }) };
    const { exports, shim } = loadBundle(bundle('chat-throughput'), { ...TARGET }, () => echoed);
    exports.default();
    const log = shim.logs.join('\n');
    expect(log).toContain('ERR-1'); // code is missing
    expect(JSON.stringify(shim.samples)).not.toContain(TARGET.API_KEY);
    expect(log).not.toContain(TARGET.API_KEY);
  });
});

describe('chat-stream bundle', () => {
  const streamTurn = { ...userTurn, stream: true };
  const STREAM_CHECKS = [
    'status is 2xx or 429',
    'stream: Content-Type is text/event-stream',
    'stream: every chunk is a chat.completion.chunk (schema)',
    'stream: ends with data: [DONE]',
    'stream: reply content is non-empty',
    'stream: exactly one finish_reason',
  ];

  it('sends stream: true and reports http_req_waiting as TTFB and the duration as E2E', async () => {
    const c = await capture({}, '/chat/completions', streamTurn);
    const { exports, shim } = loadBundle(bundle('chat-stream'), envFor(c), () => ({ ...c.reply, timings: { waiting: 42, duration: 180 } }));
    exports.default();
    expect(JSON.parse(shim.requests[0]!.body!).stream).toBe(true);
    expect(Object.keys(shim.checks)).toEqual(STREAM_CHECKS);
    expect(failedChecks(shim)).toEqual([]);
    expect(total(shim, 'chatgate_stream_ttfb')).toBe(42);
    expect(total(shim, 'chatgate_stream_e2e')).toBe(180);
    expect(shim.metrics.chatgate_stream_ttfb).toEqual({ type: 'trend', isTime: true });
    expect(total(shim, 'chatgate_stream_chunks')).toBeGreaterThan(1);
    // The same two samples in their log buckets (mergeable across runners).
    const tags = (m: string) => shim.samples.filter((x) => x.metric === m).map((x) => x.tags.b);
    expect(tags('chatgate_dist_stream_ttfb_ms')).toEqual([bucketLabel(bucketOf(42))]);
    expect(tags('chatgate_dist_stream_e2e_ms')).toEqual([bucketLabel(bucketOf(180))]);
    expect(Object.keys(exports.options.thresholds).filter((k) => k.startsWith('chatgate_dist_'))).toHaveLength(2 * (LAST_BUCKET + 2));
  });

  it('INCLUDE_USAGE=1 asks for the usage chunk and counts its tokens', async () => {
    const c = await capture({}, '/chat/completions', { ...streamTurn, stream_options: { include_usage: true } });
    const { exports, shim } = loadBundle(bundle('chat-stream'), envFor(c, { INCLUDE_USAGE: '1' }), () => c.reply);
    exports.default();
    expect(JSON.parse(shim.requests[0]!.body!).stream_options).toEqual({ include_usage: true });
    expect(failedChecks(shim)).toEqual([]);
    expect(total(shim, 'chatgate_completion_tokens')).toBeGreaterThan(0);
  });

  const legal = ['sse-crlf', 'sse-cr', 'sse-comments', 'sse-fields', 'sse-no-space', 'sse-named-event', 'one-chunk', 'char-per-chunk', 'role-chunk-null-content', 'extra-fields', 'charset', 'split-writes'];
  it(`legal variants pass every check: ${legal.join(', ')}`, async () => {
    for (const variant of legal) {
      const c = await capture({ variants: [variant] }, '/chat/completions', streamTurn);
      const { exports, shim } = loadBundle(bundle('chat-stream'), envFor(c), () => c.reply);
      exports.default();
      expect(failedChecks(shim), variant).toEqual([]);
    }
  });

  const defects: Array<[string, string[]]> = [
    // Content and finish are read from the chunks whatever their shape, as the suite's EV-4/EV-5 do (lib/spec/rules/stream-rules.ts).
    ['stream-wrong-chunk-object', ['stream: every chunk is a chat.completion.chunk (schema)']],
    ['stream-chunk-not-json', ['stream: every chunk is a chat.completion.chunk (schema)']],
    ['stream-no-done', ['stream: ends with data: [DONE]']],
    ['stream-last-event-unterminated', ['stream: ends with data: [DONE]']],
    ['stream-data-after-done', ['stream: ends with data: [DONE]']],
    ['stream-empty-content', ['stream: reply content is non-empty']],
    ['stream-two-finish-reasons', ['stream: exactly one finish_reason']],
    ['stream-wrong-content-type', ['stream: Content-Type is text/event-stream']],
  ];
  for (const [defect, failing] of defects) {
    it(`defect ${defect}: ${failing.join(' + ')}`, async () => {
      const c = await capture({ defect }, '/chat/completions', streamTurn);
      const { exports, shim } = loadBundle(bundle('chat-stream'), envFor(c), () => c.reply);
      exports.default();
      expect(failedChecks(shim).sort()).toEqual([...failing].sort());
      const shapeBroken = failing.includes('stream: every chunk is a chat.completion.chunk (schema)');
      expect(total(shim, 'chatgate_body_shape_failures', { schema: 'chat-completion-chunk' })).toBe(shapeBroken ? 1 : 0);
      if (shapeBroken) expect(total(shim, 'chatgate_body_shape_failures', { clause: 'EV-3' })).toBe(1);
    });
  }

  it('stream-ignored (JSON instead of SSE) fails the stream checks', async () => {
    const c = await capture({ defect: 'stream-ignored' }, '/chat/completions', streamTurn);
    const { exports, shim } = loadBundle(bundle('chat-stream'), envFor(c), () => c.reply);
    exports.default();
    expect(failedChecks(shim)).toEqual(expect.arrayContaining(['stream: Content-Type is text/event-stream', 'stream: ends with data: [DONE]']));
  });
});

describe('ratelimit-probe bundle', () => {
  it('a bounded burst scenario, then a one-VU recovery scenario once the burst has stopped', () => {
    const { exports } = loadBundle(bundle('ratelimit-probe'), { ...TARGET, RATE: '40', DURATION: '5s' });
    const { burst, recovery } = exports.options.scenarios;
    expect(burst).toMatchObject({ executor: 'constant-arrival-rate', rate: 40, duration: '5s', exec: 'burst' });
    expect(recovery).toMatchObject({ executor: 'per-vu-iterations', vus: 1, iterations: 1, startTime: '5500ms', exec: 'recovery' });
    expect(exports.options.thresholds).toMatchObject({
      chatgate_status_429: ['count>0'],
      chatgate_unexpected_status: [{ threshold: 'count<1', abortOnFail: true }],
      chatgate_body_shape_failures: [{ threshold: 'count<1', abortOnFail: true }],
      chatgate_recovered: ['rate>=1'],
    });
    const none = loadBundle(bundle('ratelimit-probe'), { ...TARGET, RECOVERY_ATTEMPTS: '0' }).exports.options;
    expect(none.scenarios.recovery).toBeUndefined();
    expect(none.thresholds.chatgate_recovered).toBeUndefined();
  });

  it('uses RATE_LIMIT_API_KEY, and API_KEY when it is unset', () => {
    const a = loadBundle(bundle('ratelimit-probe'), { ...TARGET, RATE_LIMIT_API_KEY: 'sk-ratelimit-key-1' }, () => ({ status: 200, body: '' }));
    a.exports.burst();
    expect(a.shim.requests[0]!.params.headers.Authorization).toBe('Bearer sk-ratelimit-key-1');
    const b = loadBundle(bundle('ratelimit-probe'), { ...TARGET }, () => ({ status: 200, body: '' }));
    b.exports.burst();
    expect(b.shim.requests[0]!.params.headers.Authorization).toBe(`Bearer ${TARGET.API_KEY}`);
    expect(JSON.parse(b.shim.requests[0]!.body!).max_tokens).toBe(8);
  });

  it('the reference\'s 429: error body, a retry hint, nothing unexpected', async () => {
    const reply = await capture429({});
    const { exports, shim } = loadBundle(bundle('ratelimit-probe'), { ...TARGET }, () => reply);
    exports.burst();
    expect(failedChecks(shim)).toEqual([]);
    expect(total(shim, 'chatgate_status_429')).toBe(1);
    expect(total(shim, 'chatgate_body_shape_failures')).toBe(0);
    expect(total(shim, 'chatgate_unexpected_status')).toBe(0);
    expect(total(shim, 'chatgate_429_without_retry_hint')).toBe(0);
  });

  const defects: Array<[string, Record<string, number>]> = [
    ['ratelimit-429-no-body', { chatgate_body_shape_failures: 1, chatgate_unexpected_status: 0 }],
    ['ratelimit-429-plain-text', { chatgate_body_shape_failures: 1, chatgate_unexpected_status: 0 }],
    ['ratelimit-as-500', { chatgate_status_429: 0, chatgate_unexpected_status: 1 }],
    ['ratelimit-drops-connection', { chatgate_status_429: 0, chatgate_unexpected_status: 1 }],
    ['ratelimit-no-retry-after', { chatgate_429_without_retry_hint: 1, chatgate_body_shape_failures: 0 }],
  ];
  for (const [defect, expected] of defects) {
    it(`defect ${defect}: ${Object.entries(expected).map(([k, v]) => `${k}=${v}`).join(', ')}`, async () => {
      const reply = await capture429({ defect });
      const { exports, shim } = loadBundle(bundle('ratelimit-probe'), { ...TARGET }, () => reply);
      exports.burst();
      for (const [metric, value] of Object.entries(expected)) expect(total(shim, metric), metric).toBe(value);
    });
  }

  it('recovery waits what the 429 advertised, then counts the key as served again', () => {
    const answers: ShimReply[] = [
      { status: 429, headers: { 'retry-after-ms': '1500', 'content-type': 'application/json' }, body: '{"error":{"message":"m","type":"t","code":"c"}}' },
      { status: 200, body: '{}' },
    ];
    const { exports, shim } = loadBundle(bundle('ratelimit-probe'), { ...TARGET }, () => answers.shift()!);
    exports.recovery();
    expect(shim.slept).toBeCloseTo(1.5);
    expect(total(shim, 'chatgate_recovered')).toBe(1);
  });

  it('recovery gives up after RECOVERY_ATTEMPTS, capping each wait at RECOVERY_MAX_WAIT_S', () => {
    const { exports, shim } = loadBundle(bundle('ratelimit-probe'), { ...TARGET, RECOVERY_ATTEMPTS: '3', RECOVERY_MAX_WAIT_S: '2' },
      () => ({ status: 429, headers: { 'Retry-After': '30' }, body: '' }));
    exports.recovery();
    expect(shim.requests).toHaveLength(3);
    expect(shim.slept).toBe(4);
    expect(shim.samples.filter((s) => s.metric === 'chatgate_recovered').map((s) => s.value)).toEqual([0]);
  });

  it('reads every form of advertised wait', () => {
    const { exports } = loadBundle(bundle('ratelimit-probe'), { ...TARGET });
    const wait = (headers: Record<string, string>) => exports.advertisedWaitS({ headers });
    expect(wait({ 'Retry-After-Ms': '250' })).toBe(0.25);
    expect(wait({ 'Retry-After': '3' })).toBe(3);
    expect(wait({ 'X-Ratelimit-Reset-Requests': '1m30s' })).toBe(90);
    expect(wait({ 'X-Ratelimit-Reset-Requests': '850ms' })).toBeCloseTo(0.85);
    expect(wait({ 'Retry-After': new Date(Date.now() + 10_000).toUTCString() })).toBeGreaterThan(8);
    expect(wait({})).toBeUndefined();
  });
});

describe('brain-mix bundle', () => {
  it('one arrival-rate scenario per traffic class with its share of RATE, and per-class thresholds', () => {
    const { exports } = loadBundle(bundle('brain-mix'), { ...TARGET, RATE: '10', VUS: '10', MAX_VUS: '100' });
    const s = exports.options.scenarios;
    expect(Object.keys(s)).toEqual(['models', 'brain_model', 'brain_route']);
    expect(s.models).toMatchObject({ executor: 'constant-arrival-rate', rate: 6, timeUnit: '1s', exec: 'models', preAllocatedVUs: 6, maxVUs: 60 });
    expect(s.brain_model).toMatchObject({ rate: 2, exec: 'brainModel' });
    expect(s.brain_route).toMatchObject({ rate: 2, exec: 'brainRoute' });
    const t = exports.options.thresholds;
    for (const kind of ['models', 'brain-model', 'brain-route']) {
      expect(t[`http_req_duration{kind:${kind},status:200}`]).toEqual(['p(95)<10000']);
      expect(t[`http_req_failed{kind:${kind}}`]).toEqual(['rate<0.01']);
    }
  });

  it('a share that is not a whole rate keeps its precision on a longer timeUnit; weight 0 drops the class', () => {
    const { exports } = loadBundle(bundle('brain-mix'), { ...TARGET, RATE: '1', MIX: 'models=70,brain-model=0,brain-route=30' });
    const s = exports.options.scenarios;
    expect(Object.keys(s)).toEqual(['models', 'brain_route']);
    expect(s.models).toMatchObject({ rate: 7, timeUnit: '10000ms' });
    expect(s.brain_route).toMatchObject({ rate: 3, timeUnit: '10000ms' });
  });

  it('each class calls its own route: plain model, brain:<uuid> model, POST /brains/{id}/chat without a model', async () => {
    const c = await capture({}, '/brains/{brain}/chat', { messages: userTurn.messages });
    const { exports, shim } = loadBundle(bundle('brain-mix'), envFor(c), () => c.reply);
    exports.models();
    exports.brainModel();
    exports.brainRoute();
    const [m, bm, br] = shim.requests;
    expect(m!.url).toBe(`${c.ref.url}/chat/completions`);
    expect(['svc-auto', 'svc']).toContain(JSON.parse(m!.body!).model);
    expect(JSON.parse(bm!.body!).model).toBe(`brain:${c.ref.brainId}`);
    expect(br!.url).toBe(`${c.ref.url}/brains/${c.ref.brainId}/chat`);
    expect(JSON.parse(br!.body!).model).toBeUndefined();
    expect(br!.params.tags).toMatchObject({ name: 'POST /brains/{id}/chat', kind: 'brain-route' });
    expect(failedChecks(shim)).toEqual([]);
  });

  it('defect brain-route-different-shape: the brain route\'s answer is a body-shape failure', async () => {
    const c = await capture({ defect: 'brain-route-different-shape' }, '/brains/{brain}/chat', { messages: userTurn.messages });
    const { exports, shim } = loadBundle(bundle('brain-mix'), envFor(c), () => c.reply);
    exports.brainRoute();
    expect(failedChecks(shim)).toEqual(['completion: body is a chat completion (schema)']);
    expect(total(shim, 'chatgate_body_shape_failures', { kind: 'brain-route' })).toBe(1);
  });

  it('the default function sends one request of the mix', () => {
    const { exports, shim } = loadBundle(bundle('brain-mix'), { ...TARGET, MIX: 'brain-route=1' }, () => ({ status: 200, body: '' }));
    exports.default();
    expect(shim.requests[0]!.url).toContain('/brains/');
  });
});

describe('handleSummary', () => {
  const KEY = TARGET.API_KEY;
  const data = {
    state: { testRunDurationMs: 12_345 },
    metrics: {
      http_reqs: { type: 'counter', contains: 'default', values: { count: 120, rate: 9.7 } },
      http_req_failed: { type: 'rate', contains: 'default', values: { rate: 0, passes: 0, fails: 120 }, thresholds: { 'rate<0.01': { ok: true }, 'rate<0.5': { ok: true } } },
      'http_req_duration{status:200}': { type: 'trend', contains: 'time', values: { avg: 20, med: 18, 'p(95)': 2500, 'p(99)': 3000, max: 3100 }, thresholds: { 'p(95)<2000': { ok: false } } },
      chatgate_status_429: { type: 'counter', contains: 'default', values: { count: 3, rate: 0.2 } },
      chatgate_body_shape_failures: { type: 'counter', contains: 'default', values: { count: 0, rate: 0 }, thresholds: { 'count<1': { ok: true } } },
      checks: { type: 'rate', contains: 'default', values: { rate: 0.99, passes: 357, fails: 3 }, thresholds: { 'rate>=0.99': { ok: true } } },
    },
    root_group: {
      name: '', path: '', groups: [],
      checks: [
        { name: 'status is 2xx or 429', path: '::status is 2xx or 429', passes: 120, fails: 0 },
        { name: `a <check> & "name" with ${KEY}`, path: '::x', passes: 117, fails: 3 },
      ],
    },
  };

  it('writes stdout, the JSON summary and JUnit XML into SUMMARY_DIR', () => {
    const { exports } = loadBundle(bundle('chat-throughput'), { ...TARGET, SUMMARY_DIR: 'reports/load/k6/' });
    const out = exports.handleSummary(data);
    expect(Object.keys(out).sort()).toEqual(['reports/load/k6/k6-chat-throughput-junit.xml', 'reports/load/k6/k6-chat-throughput-summary.json', 'stdout']);
    // The text names the files it asked k6 to write, and what to do when the folder is missing.
    expect(out.stdout).toContain('summary files: reports/load/k6/k6-chat-throughput-summary.json, reports/load/k6/k6-chat-throughput-junit.xml (k6 cannot create folders');

    const text: string = out.stdout;
    expect(text).toContain('chat-throughput');
    expect(text).toContain('FAIL');
    expect(text).toMatch(/✗ http_req_duration\{status:200\}\s+p\(95\)<2000\s+p\(95\)=2.50s/);
    expect(text).toMatch(/✓ checks\s+rate>=0.99\s+rate=0.99/);
    expect(text).toContain('120 (9.7/s)');

    const json = JSON.parse(out['reports/load/k6/k6-chat-throughput-summary.json']);
    expect(json).toMatchObject({ tool: 'chatgate-k6', script: 'chat-throughput', result: 'fail', durationMs: 12_345 });
    expect(json.thresholds).toContainEqual({ metric: 'http_req_duration{status:200}', expression: 'p(95)<2000', ok: false, judged: true, observed: 'p(95)=2.50s' });
    expect(json.checks).toHaveLength(2);

    const xml: string = out['reports/load/k6/k6-chat-throughput-junit.xml'];
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>/);
    expect(xml).toContain('<testsuite name="k6.chat-throughput" tests="7" failures="1"');
    expect(xml.match(/<testcase /g)).toHaveLength(7);
    expect(xml.match(/<failure /g)).toHaveLength(1);
    expect(xml).toContain('name="http_req_duration{status:200}: p(95)&lt;2000"');
    expect(xml).toContain('a &lt;check&gt; &amp; &quot;name&quot;');
    // Well-formed enough: every opened testcase is closed, no raw & or < in attribute values.
    expect(xml.match(/<testcase /g)!.length).toBe(xml.match(/<\/testcase>/g)!.length);
    expect(xml).not.toMatch(/="[^"]*[<&](?!amp;|lt;|gt;|quot;|apos;)[^"]*"/);
  });

  it('never writes a key, even one a check name carries', () => {
    const { exports } = loadBundle(bundle('chat-stream'), { ...TARGET, LIMITED_API_KEY: 'sk-limited-abcdef', SUMMARY_DIR: '/tmp/x' });
    const out = exports.handleSummary(data);
    for (const [name, content] of Object.entries(out)) {
      expect(content, name).not.toContain(KEY);
      expect(content, name).toContain('[redacted]');
    }
  });

  it('SUMMARY_DIR=none: stdout only; the default is the working directory', () => {
    const none = loadBundle(bundle('brain-mix'), { ...TARGET, SUMMARY_DIR: 'none' }).exports.handleSummary(data);
    expect(Object.keys(none)).toEqual(['stdout']);
    const dflt = loadBundle(bundle('ratelimit-probe'), { ...TARGET }).exports.handleSummary(data);
    expect(Object.keys(dflt).sort()).toEqual(['./k6-ratelimit-probe-junit.xml', './k6-ratelimit-probe-summary.json', 'stdout']);
  });

  it('a passing run says PASS and JUnit has no failure', () => {
    const passing = JSON.parse(JSON.stringify(data));
    passing.metrics['http_req_duration{status:200}'].thresholds['p(95)<2000'].ok = true;
    const out = loadBundle(bundle('chat-throughput'), { ...TARGET }).exports.handleSummary(passing);
    expect(out.stdout.split('\n')[0]).toContain('PASS');
    expect(out['./k6-chat-throughput-junit.xml']).not.toContain('<failure');
  });
});

describe('setup(): the key is set and the target gives an HTTP answer', () => {
  const cases: Array<[string, ShimReply, RegExp]> = [
    ['connection refused', { status: 0, error: 'dial: connection refused', error_code: 1212 }, /gave no HTTP answer to GET \/models: connection refused \(k6 error 1212: dial: connection refused\); nothing listens at that host and port/],
    ['unknown host', { status: 0, error: 'lookup: no such host', error_code: 1101 }, /the host name does not resolve \(DNS\) \(k6 error 1101: lookup: no such host\); check the host in TARGET_URL/],
    ['untrusted CA', { status: 0, error: 'x509: unknown authority', error_code: 1310 }, /signed by an authority k6 does not trust \(k6 error 1310: x509: unknown authority\); .*SSL_CERT_FILE=/],
    ['host name mismatch', { status: 0, error: "x509: certificate doesn't match hostname", error_code: 1311 }, /does not name this host \(k6 error 1311/],
    ['expired certificate', { status: 0, error: 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid', error_code: 1000 }, /has expired or is not yet valid \(k6 error 1000: .*\); renew/],
    ['timeout', { status: 0, error: 'request timeout', error_code: 1050 }, /no answer within TIMEOUT_MS \(30000 ms\) \(k6 error 1050: request timeout\)/],
    ['proxy unreachable', { status: 0, error: 'proxyconnect tcp: dial tcp 127.0.0.1:3128: connect: connection refused', error_code: 1200 }, /the forward proxy could not be reached \(k6 error 1200: proxyconnect .*\); check HTTPS_PROXY/],
  ];
  for (const script of ['chat-throughput', 'chat-stream', 'ratelimit-probe', 'brain-mix']) {
    it(`${script}: no HTTP answer stops the run in setup with one line (cause, k6 error code, fix)`, () => {
      const { exports, shim } = loadBundle(bundle(script), TARGET, () => cases[0]![1]);
      expect(exports.options.setupTimeout).toBe('60s');
      expect(() => exports.setup()).toThrow(cases[0]![2]);
      expect(shim.requests.map((r) => `${r.method} ${r.url}`)).toEqual([`GET ${TARGET.TARGET_URL}/models`]);
      expect(shim.requests[0]!.params.headers.Authorization).toBe(`Bearer ${TARGET.API_KEY}`);
      // Whatever it answers, the check's own request never counts in http_req_failed.
      expect(shim.requests[0]!.params.responseCallback).toEqual({ expectedStatuses: [{ min: 100, max: 599 }] });
      expect(total(shim, 'chatgate_not_run')).toBe(1);
    });
  }
  for (const [what, reply, message] of cases.slice(1)) {
    it(`${what}: named, with k6's code and the fix, on one line`, () => {
      const { exports } = loadBundle(bundle('chat-throughput'), TARGET, () => reply);
      let thrown = '';
      try { exports.setup(); } catch (e) { thrown = (e as Error).message; }
      expect(thrown).toMatch(message);
      expect(thrown).not.toContain('\n');
      expect(thrown).not.toContain(TARGET.API_KEY);
    });
  }
  for (const status of [200, 401, 404, 500]) {
    it(`an HTTP ${status} answer goes on (judging it is the thresholds' job)`, () => {
      const { exports, shim } = loadBundle(bundle('chat-throughput'), TARGET, () => ({ status, body: '{}' }));
      expect(() => exports.setup()).not.toThrow();
      expect(total(shim, 'chatgate_not_run')).toBe(0);
      expect(shim.samples.some((s) => s.metric === 'chatgate_not_run')).toBe(true);
    });
  }
  it('no API_KEY: init code runs (k6 archive, k6 inspect need no key); setup stops before any request', () => {
    const { exports, shim } = loadBundle(bundle('chat-stream'), { TARGET_URL: 'https://api.example/v1' }, () => ({ status: 200, body: '{}' }));
    expect(exports.options.scenarios.stream).toBeDefined();
    expect(() => exports.setup()).toThrow(/chatgate k6: API_KEY: is required when TARGET_URL is set/);
    expect(shim.requests).toEqual([]);
  });
  it('handleSummary after a stopped setup: one NOT RUN line, no files', () => {
    const { exports } = loadBundle(bundle('chat-throughput'), { ...TARGET, SUMMARY_DIR: '/tmp/x' });
    const out = exports.handleSummary({ metrics: { chatgate_not_run: { type: 'counter', contains: 'default', values: { count: 1, rate: 1 } } }, root_group: { name: '', checks: [] } });
    expect(Object.keys(out)).toEqual(['stdout']);
    expect(out.stdout).toMatch(/^chatgate k6 · chat-throughput · .* · NOT RUN: setup stopped the run before any load/);
  });
});

describe('ratelimit-probe summary: LIM-2 and LIM-3 shown as measured', () => {
  const base = {
    state: { testRunDurationMs: 7000 },
    metrics: {
      http_reqs: { type: 'counter', contains: 'default', values: { count: 40, rate: 6 } },
      chatgate_status_429: { type: 'counter', contains: 'default', values: { count: 12, rate: 2 }, thresholds: { 'count>0': { ok: true } } },
      chatgate_429_without_retry_hint: { type: 'counter', contains: 'default', values: { count: 3, rate: 0.5 } },
      chatgate_recovered: { type: 'rate', contains: 'default', values: { rate: 1, passes: 1, fails: 0 }, thresholds: { 'rate>=1': { ok: true } } },
    },
    root_group: { name: '', checks: [] },
  };
  it('429s without a retry hint: a figure and a warning line in the text, a warning in the JSON', () => {
    const out = loadBundle(bundle('ratelimit-probe'), { ...TARGET, SUMMARY_DIR: 'd' }).exports.handleSummary(base);
    expect(out.stdout).toMatch(/429s without a retry hint \(LIM-2\)\s+3 of 12 \(SHOULD: a warning, no threshold\)/);
    expect(out.stdout).toContain('warning: 3 of 12 429 answers advertised no wait');
    expect(out.stdout).toMatch(/recovery \(LIM-3\)\s+served again 1 of 1/);
    expect(out.stdout.split('\n')[0]).toMatch(/PASS$/);
    expect(JSON.parse(out['d/k6-ratelimit-probe-summary.json']).warnings).toEqual([expect.stringContaining('3 of 12 429 answers advertised no wait')]);
  });
  it('chatgate_recovered with no samples (the probe stopped before recovery): not judged, no tick, result INCOMPLETE', () => {
    const data = JSON.parse(JSON.stringify(base));
    data.metrics.chatgate_429_without_retry_hint.values.count = 0;
    data.metrics.chatgate_recovered.values = { rate: 0, passes: 0, fails: 0 };
    const out = loadBundle(bundle('ratelimit-probe'), { ...TARGET, SUMMARY_DIR: 'd' }).exports.handleSummary(data);
    expect(out.stdout).toMatch(/– chatgate_recovered\s+rate>=1\s+no samples: not judged/);
    expect(out.stdout).not.toMatch(/✓ chatgate_recovered/);
    expect(out.stdout).toMatch(/recovery \(LIM-3\)\s+not measured: the recovery scenario did not run/);
    expect(out.stdout).not.toContain('warning:');
    expect(out.stdout.split('\n')[0]).toMatch(/INCOMPLETE$/);
    const json = JSON.parse(out['d/k6-ratelimit-probe-summary.json']);
    expect(json.result).toBe('incomplete');
    expect(json.thresholds).toContainEqual({ metric: 'chatgate_recovered', expression: 'rate>=1', ok: true, judged: false, observed: 'no samples' });
    expect(out['d/k6-ratelimit-probe-junit.xml']).toContain('<skipped message="no samples: not judged"/>');
    expect(out['d/k6-ratelimit-probe-junit.xml']).toContain('skipped="1"');
  });
});

describe('workload (lib/workload.ts over load/workload)', () => {
  // The requests the bundle sends: `vus` VUs, `n` iterations each (the shim's VU and iteration counters).
  const sends = (script: string, env: Record<string, string>, vus: number[], n: number) => {
    const out: Array<Record<string, any>> = [];
    for (const vu of vus) {
      const { exports, shim } = loadBundle(bundle(script), { ...TARGET, ...env });
      shim.vu.idInTest = vu;
      for (let i = 0; i < n; i++) {
        shim.vu.iterationInScenario = i;
        exports.default();
      }
      for (const r of shim.requests) out.push(JSON.parse(r.body!));
    }
    return out;
  };

  it('PROMPT_TOKENS=256 OUTPUT_TOKENS=32: prompts of exactly 256 o200k_base tokens, each its own, and max_tokens 32', async () => {
    const o200k = await loadTokenizer('o200k_base');
    const sent = sends('chat-throughput', { PROMPT_TOKENS: '256', OUTPUT_TOKENS: '32' }, [7, 8], 4);
    expect(sent).toHaveLength(8);
    for (const b of sent) {
      expect(b.messages).toHaveLength(1);
      expect(o200k.count(b.messages[0].content)).toBe(256);
      expect(b.max_tokens).toBe(32);
    }
    expect(new Set(sent.map((b) => b.messages[0].content)).size).toBe(8); // UNIQUE (default): no cache can serve them
    // UNIQUE=0: the same words for the same length.
    expect(new Set(sends('chat-throughput', { PROMPT_TOKENS: '256', UNIQUE: '0' }, [7, 8], 2).map((b) => b.messages[0].content)).size).toBe(1);
  });

  it('lengths drawn from PROMPT_TOKENS_STDEV/MIN/MAX count exactly what was drawn; a shared prefix is one system prompt for every VU', async () => {
    const o200k = await loadTokenizer('o200k_base');
    const sent = sends('chat-stream', { PROMPT_TOKENS: '100', PROMPT_TOKENS_STDEV: '30', PROMPT_TOKENS_MIN: '60', PROMPT_TOKENS_MAX: '140', OUTPUT_TOKENS: '20', OUTPUT_TOKENS_STDEV: '5', SHARED_PREFIX_TOKENS: '64', MAX_TOKENS: '22', SEED: '3' }, [1, 2, 3], 5);
    const lengths = sent.map((b) => o200k.count(b.messages[1].content));
    // Each prompt is a whole number of one-token words: its word count is its o200k_base count.
    for (const [i, b] of sent.entries()) expect(lengths[i]).toBe(b.messages[1].content.split(' ').length - 1);
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(60);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(140);
    expect(new Set(lengths).size).toBeGreaterThan(3); // each VU draws its own lengths
    expect(new Set(sent.map((b) => b.messages[0].content)).size).toBe(1);
    expect(sent[0]!.messages[0].role).toBe('system');
    expect(o200k.count(sent[0]!.messages[0].content)).toBe(64);
    // max_tokens: drawn from OUTPUT_TOKENS, capped by MAX_TOKENS (the Node harness's rule).
    expect(sent.every((b) => b.stream === true && b.max_tokens >= 1 && b.max_tokens <= 22)).toBe(true);
    expect(new Set(sent.map((b) => b.max_tokens)).size).toBeGreaterThan(1);
  });

  it('EXTRA_BODY (the Node harness\'s --extra-body) reaches every request body of every script', () => {
    const extra = { ignore_eos: true, min_tokens: 4 };
    for (const script of ['chat-throughput', 'chat-stream', 'chat-stream-sse', 'brain-mix', 'ratelimit-probe']) {
      const { exports, shim } = loadBundle(bundle(script), { ...TARGET, EXTRA_BODY: JSON.stringify(extra) }, () => ({ status: 500, headers: { 'content-type': 'text/plain' }, body: 'no' }));
      try { exports.default?.(); } catch { /* a 500 may stop the script: the request it sent is what counts */ }
      const posts = shim.requests.filter((r) => r.method === 'POST');
      expect(posts.length, script).toBeGreaterThan(0);
      for (const r of posts) expect(JSON.parse(r.body!), script).toMatchObject(extra);
    }
  });

  it('the bundles carry the word list, not the tokenizer\'s ranks', () => {
    for (const script of ['chat-throughput', 'chat-stream', 'chat-stream-sse', 'brain-mix']) {
      const code = readFileSync(bundle(script), 'utf8');
      expect(code).toContain('// load/workload/synthetic-words.ts');
      expect(code).not.toContain('gpt-tokenizer');
    }
  });

  const refusals: Array<[string, Record<string, string>, RegExp]> = [
    ['PROMPT_TOKENS_MIN above PROMPT_TOKENS_MAX', { PROMPT_TOKENS: '100', PROMPT_TOKENS_STDEV: '10', PROMPT_TOKENS_MIN: '300', PROMPT_TOKENS_MAX: '200' }, /^chatgate k6: PROMPT_TOKENS: min 300 is above max 200; give a min at most the max$/],
    ['a stdev without the mean', { OUTPUT_TOKENS_STDEV: '5' }, /^chatgate k6: OUTPUT_TOKENS: stdev, min or max given without the mean; add OUTPUT_TOKENS=<n>$/],
    ['PROMPT_TOKENS=0', { PROMPT_TOKENS: '0' }, /^chatgate k6: PROMPT_TOKENS: 0 is out of range; set it between 1 and 10000000$/],
    ['a stdev that is not a number', { PROMPT_TOKENS: '10', PROMPT_TOKENS_STDEV: 'wide' }, /^chatgate k6: PROMPT_TOKENS_STDEV: "wide" is not a number/],
    ['BURSTINESS (gamma gaps)', { BURSTINESS: '0.5' }, /^chatgate k6: BURSTINESS: k6's arrival-rate executors .* use the Node harness for it/],
    ['TRACE (replay)', { TRACE: 'trace.jsonl' }, /^chatgate k6: TRACE: k6's executors cannot start requests at a trace's offsets; use the Node harness/],
    ['EXTRA_BODY with a field the harness sets', { EXTRA_BODY: '{"stream": false}' }, /^chatgate k6: EXTRA_BODY: "stream" is set by the scenario; drop it from the extra body$/],
    ['EXTRA_BODY that is not JSON', { EXTRA_BODY: '{ignore_eos}' }, /^chatgate k6: EXTRA_BODY: not JSON \(/],
  ];
  for (const [what, env, message] of refusals) {
    it(`refuses ${what} at init, with one line`, () => {
      for (const script of ['chat-throughput', 'brain-mix']) {
        let thrown: unknown;
        try {
          loadBundle(bundle(script), { ...TARGET, ...env });
        } catch (e) {
          thrown = e;
        }
        expect(String(thrown)).toMatch(message);
        expect(String(thrown)).not.toContain('\n');
      }
    });
  }

  it('the workload is part of the runner identity: merge refuses runners with different workloads', () => {
    const data = { state: { testRunDurationMs: 1000 }, metrics: { http_reqs: { type: 'counter', contains: 'default', values: { count: 3, rate: 3 } } }, root_group: { name: '', checks: [] } };
    const summary = (env: Record<string, string>, segment: string): K6Summary => {
      const { exports, shim } = loadBundle(bundle('chat-throughput'), { ...TARGET, SUMMARY_DIR: 'out', ...env });
      shim.testOptions = { executionSegment: segment, executionSegmentSequence: '0,1/2,1' };
      const out = exports.handleSummary(data) as Record<string, string>;
      return JSON.parse(out[Object.keys(out).find((k) => k.endsWith('-summary.json'))!]!);
    };
    const a = summary({ PROMPT_TOKENS: '256', OUTPUT_TOKENS: '32' }, '0:1/2');
    expect(a.identity.settings.workload).toEqual({ source: 'synthetic', prompt_tokens: '256', output_tokens: '32', unique: true, seed: 1 });
    // Same workload, PROMPT_TOKENS_MIN/MAX at their defaults: the same setting.
    const b = summary({ PROMPT_TOKENS: '256', PROMPT_TOKENS_MIN: '256', PROMPT_TOKENS_MAX: '256', OUTPUT_TOKENS: '32' }, '1/2:1');
    expect(mergeK6([{ path: 'a.json', doc: a }, { path: 'b.json', doc: b }]).merged.identity.runners).toBe(2);
    const c = summary({ PROMPT_TOKENS: '512', OUTPUT_TOKENS: '32' }, '1/2:1');
    expect(() => mergeK6([{ path: 'a.json', doc: a }, { path: 'c.json', doc: c }])).toThrow(/settings differ \(workload\.prompt_tokens/);
  });
});

describe('dist/base/ (CommonJS, --compatibility-mode=base) does exactly what the ES module bundles do', () => {
  const summaryData = {
    state: { testRunDurationMs: 1000 },
    metrics: { http_reqs: { type: 'counter', contains: 'default', values: { count: 3, rate: 3 } }, checks: { type: 'rate', contains: 'default', values: { rate: 1, passes: 3, fails: 0 }, thresholds: { 'rate>=0.99': { ok: true } } } },
    root_group: { name: '', checks: [{ name: 'status is 2xx or 429', passes: 3, fails: 0 }] },
  };
  const runs: Array<[string, string[]]> = [
    ['chat-throughput', ['default']], ['chat-stream', ['default']], ['ratelimit-probe', ['burst', 'recovery']], ['brain-mix', ['models', 'brainModel', 'brainRoute']],
  ];
  for (const [script, fns] of runs) {
    it(`${script}: same options, requests, checks, metrics and summaries`, async () => {
      const ok = await capture({}, script === 'chat-stream' ? '/chat/completions' : '/chat/completions', script === 'chat-stream' ? { ...userTurn, stream: true } : userTurn);
      const env = envFor(ok, { SUMMARY_DIR: 'out', RECOVERY_ATTEMPTS: '1' });
      const observe = (file: string) => {
        const { exports, shim } = loadBundle(file, env, () => ok.reply);
        exports.setup();
        for (const f of fns) exports[f]();
        // One clock for both: a summary records handleSummary's time (its finished_at).
        vi.useFakeTimers({ toFake: ['Date'] });
        vi.setSystemTime(Date.parse('2026-03-01T10:00:00.000Z'));
        const summary = exports.handleSummary(summaryData);
        vi.useRealTimers();
        return { options: exports.options, requests: shim.requests, checks: shim.checks, samples: shim.samples, metrics: shim.metrics, callback: shim.responseCallback, summary, exportNames: Object.keys(exports).sort() };
      };
      const esm = observe(bundle(script));
      const cjs = observe(join(outdir, 'base', `${script}.js`));
      expect(cjs.requests.length).toBeGreaterThan(1);
      expect(cjs).toEqual(esm);
    });
  }
});
