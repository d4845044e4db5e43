// chat-stream-sse (k6 with xk6-sse) and the EV-12 rule in both k6 stream scripts, run in
// Node through the k6 stand-in (selftest/support/k6-shim.ts), whose k6/x/sse plays
// crafted extension events to the script's handlers at fake times. The real binary
// against a paced reference is selftest/e2e/k6-sse-run.test.ts.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildK6 } from '../../load/k6/build.ts';
import { METRICS } from '../../load/report/metric-names.ts';
import { failedChecks, loadBundle, total, type ShimSseCall, type ShimSseReply } from '../support/k6-shim.ts';
import { bucketLabel, bucketOf, LAST_BUCKET, RELATIVE_ERROR } from '../../load/k6/lib/log-buckets.ts';

let outdir: string;
const bundle = (name: string) => join(outdir, `${name}.js`);
beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), 'chatgate-k6-sse-'));
  await buildK6({ outdir, scripts: ['chat-stream', 'chat-stream-sse'] });
});
afterAll(() => rmSync(outdir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const ENV = { TARGET_URL: 'https://api.example/v1', API_KEY: 'sk-test-0123456789' };

const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: Record<string, number>) => JSON.stringify({
  id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'svc', choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}),
});

/** A stream as the extension hands it over: role at 300 ms, contents 50 ms apart, finish, usage, [DONE]. */
function stream(contents: string[], opts: { done?: boolean; first?: number; gap?: number } = {}): ShimSseCall[] {
  const first = opts.first ?? 300;
  const gap = opts.gap ?? 50;
  const calls: ShimSseCall[] = [{ event: { data: chunk({ role: 'assistant', content: '' }) }, at: first }];
  contents.forEach((c, i) => calls.push({ event: { data: chunk({ content: c }) }, at: first + gap * (i + 1) }));
  const end = first + gap * (contents.length + 1);
  calls.push({ event: { data: chunk({}, 'stop') }, at: end });
  calls.push({ event: { data: chunk({}, null, { prompt_tokens: 5, completion_tokens: contents.length, total_tokens: 5 + contents.length }).replace('"choices":[{"index":0,"delta":{},"finish_reason":null}]', '"choices":[]') }, at: end });
  if (opts.done !== false) calls.push({ event: { data: '[DONE]' }, at: end });
  return calls;
}

const SSE_OK = { status: 200, headers: { 'content-type': 'text/event-stream' } };

/** Runs one iteration of chat-stream-sse with this extension reply; the clock starts at 0 and follows each call's `at`. */
function runSse(reply: ShimSseReply, env: Record<string, string> = {}) {
  let clock = 0;
  vi.spyOn(Date, 'now').mockImplementation(() => clock);
  const loaded = loadBundle(bundle('chat-stream-sse'), { ...ENV, ...env });
  loaded.shim.sse = () => reply;
  loaded.shim.onSseAt = (at) => { clock = at; };
  loaded.exports.default();
  return loaded;
}

const samples = (shim: ReturnType<typeof runSse>['shim'], metric: string) => shim.samples.filter((s) => s.metric === metric).map((s) => s.value);

describe('chat-stream-sse bundle (xk6-sse)', () => {
  it('options: thresholds on TTFT and ITL percentiles, the stream failure rate in place of http_req_failed, EV-12', () => {
    const t = loadBundle(bundle('chat-stream-sse'), { ...ENV, TTFT_P95_MS: '700', ITL_P95_MS: '80' }).exports.options.thresholds;
    expect(t.ttft_ms).toEqual(['p(95)<700']);
    expect(t.itl_ms).toEqual(['p(95)<80']);
    expect(t.e2e_ms).toEqual(['p(95)<60000']);
    expect(t.http_req_failed).toBeUndefined();
    expect(t['http_req_duration{status:200}']).toBeUndefined();
    expect(t.chatgate_stream_failed[0]).toBe('rate<0.01');
    expect(t.chatgate_cumulative_deltas).toEqual(['count<1']);
    expect(t.chatgate_body_shape_failures).toBeDefined();
  });

  it('times a stream as the Node driver does: TTFT to the first content, gaps between contents, TPOT from usage, E2E', () => {
    const { shim } = runSse({ ...SSE_OK, calls: stream(['Hello', ' there', ' friend', '!']) });
    const req = shim.requests.find((r) => r.url.endsWith('/chat/completions'))!;
    expect(req.method).toBe('POST');
    expect(JSON.parse(req.body!)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(req.params.headers.Authorization).toBe(`Bearer ${ENV.API_KEY}`);
    expect(failedChecks(shim)).toEqual([]);
    expect(samples(shim, 'ttft_ms')).toEqual([350]);
    expect(samples(shim, 'first_event_ms')).toEqual([300]);
    expect(samples(shim, 'itl_ms')).toEqual([50, 50, 50]);
    // (last content - first content) / (tokens - 1) = 150 / 3
    expect(samples(shim, 'tpot_ms')).toEqual([50]);
    expect(samples(shim, 'e2e_ms')).toEqual([550]);
    expect(total(shim, 'output_tokens')).toBe(4);
    expect(total(shim, 'streams_ok')).toBe(1);
    expect(total(shim, 'chatgate_stream_failed')).toBe(0);
    expect(total(shim, 'chatgate_cumulative_deltas')).toBe(0);
    for (const m of ['ttft_ms', 'itl_ms', 'tpot_ms', 'e2e_ms']) expect(shim.metrics[m], m).toEqual({ type: 'trend', isTime: true });
  });

  it('reasoning chunks (delta.reasoning, reasoning_content) are output, as in the Node driver: TTFT to the first of them', () => {
    const calls = stream(['Hi', ' there']);
    calls.splice(1, 0, { event: { data: chunk({ reasoning: 'Let me' }) }, at: 320 }, { event: { data: chunk({ reasoning_content: ' think.' }) }, at: 335 });
    const { shim } = runSse({ ...SSE_OK, calls });
    expect(failedChecks(shim)).toEqual([]);
    expect(samples(shim, 'ttft_ms')).toEqual([320]);
    expect(samples(shim, 'itl_ms')).toEqual([15, 15, 50]);
  });

  it('EV-12: deltas that are cumulative snapshots are counted (lib/spec/cumulative-deltas.ts), legal repetition is not', () => {
    const bad = runSse({ ...SSE_OK, calls: stream(['Hel', 'Hello', 'Hello wor', 'Hello world']) });
    expect(total(bad.shim, 'chatgate_cumulative_deltas')).toBe(1);
    expect(bad.shim.samples.find((s) => s.metric === 'chatgate_cumulative_deltas')!.tags.clause).toBe('EV-12');
    expect(bad.shim.logs.join('\n')).toMatch(/cumulative snapshots \(EV-12\).*"Hel", "Hello", "Hello wor"/);
    const legal = runSse({ ...SSE_OK, calls: stream(['ha', 'ha', 'ha', 'ha']) });
    expect(total(legal.shim, 'chatgate_cumulative_deltas')).toBe(0);
    expect(failedChecks(legal.shim)).toEqual([]);
  });

  it('a stream without [DONE] fails its check and the stream failure rate, and is not timed', () => {
    const { shim } = runSse({ ...SSE_OK, calls: stream(['a', 'b'], { done: false }) });
    expect(failedChecks(shim)).toEqual(['stream: ends with data: [DONE]']);
    expect(total(shim, 'chatgate_stream_failed')).toBe(1);
    expect(samples(shim, 'ttft_ms')).toEqual([]);
    expect(total(shim, 'streams_ok')).toBe(0);
  });

  it('a broken chunk counts as a body-shape failure on its clause', () => {
    const calls = stream(['a', 'b']);
    calls.splice(2, 0, { event: { data: '{"object":"chat.completion"}' }, at: 360 });
    const { shim } = runSse({ ...SSE_OK, calls });
    expect(failedChecks(shim)).toContain('stream: every chunk is a chat.completion.chunk (schema)');
    expect(total(shim, 'chatgate_body_shape_failures', { schema: 'chat-completion-chunk' })).toBe(1);
    expect(total(shim, 'chatgate_stream_failed')).toBe(1);
  });

  it('the strict framing is applied to what the extension hands over: a BOM\'d first line, CRLF remnants, comments, JSON without data:', () => {
    const calls = stream(['a', 'b']);
    // xk6-sse reports a BOM'd first line as unknown, then an empty event for its blank line.
    const first = calls.shift() as { event: { data: string }; at: number };
    calls.unshift({ error: `unknown event: \ufeffdata: ${first.event.data}\n`, at: 300 }, { event: {}, at: 300 });
    // CRLF: the extension leaves the CR on values; a comment-only keep-alive block.
    calls.splice(3, 0, { event: { comment: 'ping\r' }, at: 360 }, { event: { id: '7\r', name: 'message\r', data: chunk({ content: '' }) + '\r' }, at: 360 });
    const ok = runSse({ ...SSE_OK, calls });
    expect(failedChecks(ok.shim)).toEqual([]);
    expect(samples(ok.shim, 'ttft_ms')).toEqual([350]);
    // A payload without data: is a malformed line to the framing: never a chunk.
    const noPrefix = runSse({ ...SSE_OK, calls: [{ error: `unknown event: ${chunk({ content: 'x' })}\n`, at: 300 }, { event: {}, at: 300 }, ...stream(['a'])] });
    expect(failedChecks(noPrefix.shim)).toEqual([]);
    expect(total(noPrefix.shim, 'chatgate_stream_chunks')).toBe(4);
  });

  it('a 2xx stream the extension handed nothing of (lone-CR line ends, or empty) is not judged, and the summary says so', () => {
    const { exports, shim } = runSse({ ...SSE_OK, calls: [] });
    expect(total(shim, 'chatgate_sse_nothing_read')).toBe(1);
    expect(failedChecks(shim)).toEqual([]);
    expect(total(shim, 'chatgate_stream_failed')).toBe(0);
    const out = exports.handleSummary({ metrics: { chatgate_sse_nothing_read: { type: 'counter', contains: 'default', values: { count: 3 } } }, state: { testRunDurationMs: 1000 } });
    expect(out.stdout).toMatch(/3 2xx streams gave xk6-sse nothing to read/);
  });

  it('TIMEOUT_MS: a stream still sending after it is closed at the next event and counted as failed, not timed', () => {
    const { shim } = runSse({ ...SSE_OK, calls: stream(['a', 'b', 'c'], { first: 300, gap: 400 }) }, { TIMEOUT_MS: '1000' });
    // Events at 300 (role), 700, 1100: the one at 1100 closes the stream; nothing after it is played.
    expect(total(shim, 'chatgate_stream_chunks')).toBe(3);
    expect(total(shim, 'chatgate_stream_failed')).toBe(1);
    expect(samples(shim, 'ttft_ms')).toEqual([]);
    expect(shim.logs.join('\n')).toMatch(/still open after TIMEOUT_MS \(1000 ms\): closed/);
  });

  it('429 is rate limiting, not a failed stream; a refused connection is', () => {
    const limited = runSse({ status: 429, headers: { 'content-type': 'application/json' } });
    expect(total(limited.shim, 'chatgate_status_429')).toBe(1);
    expect(total(limited.shim, 'chatgate_stream_failed')).toBe(0);
    const refused = runSse({ status: 0, error: 'dial tcp: connection refused' });
    expect(total(refused.shim, 'chatgate_stream_failed')).toBe(1);
    expect(failedChecks(refused.shim)).toEqual(['status is 2xx or 429']);
  });

  it('handleSummary: the Node driver\'s metric names (load/report/metric-names.ts) in the JSON and the text', () => {
    const { exports } = loadBundle(bundle('chat-stream-sse'), { ...ENV, SUMMARY_DIR: '/tmp/x' });
    const trend = (med: number) => ({ type: 'trend', contains: 'time', values: { avg: med, med, 'p(95)': med * 1.2, 'p(99)': med * 1.3, max: med * 2 } });
    const out = exports.handleSummary({
      metrics: { ttft_ms: trend(350), itl_ms: trend(50), tpot_ms: trend(50), e2e_ms: trend(900), output_tokens: { type: 'counter', contains: 'default', values: { count: 100, rate: 20 } }, streams_ok: { type: 'counter', contains: 'default', values: { count: 10, rate: 2 } } },
      state: { testRunDurationMs: 5000 },
    });
    const json = JSON.parse(out['/tmp/x/k6-chat-stream-sse-summary.json']);
    for (const name of Object.keys(json.loadMetrics)) expect(Object.keys(METRICS), name).toContain(name);
    expect(json.loadMetrics).toMatchObject({ ttft_p50_ms: 350, itl_p50_ms: 50, tpot_p50_ms: 50, e2e_p50_ms: 900, output_tokens_per_s: 20, streams_ok_per_s: 2 });
    expect(out.stdout).toMatch(/ttft_p50_ms\s+350 ms/);
    expect(out['/tmp/x/k6-chat-stream-sse-junit.xml']).toContain('testsuite name="k6.chat-stream-sse"');
  });
});

describe('chat-stream bundle (k6/http): EV-12 through the same rule', () => {
  const body = (contents: string[]) => [
    ...[{ role: 'assistant', content: '' }, ...contents.map((c) => ({ content: c }))].map((d) => `data: ${chunk(d)}\n\n`),
    `data: ${chunk({}, 'stop')}\n\n`, 'data: [DONE]\n\n',
  ].join('');
  it('counts cumulative snapshots, not repetition; threshold count<1', () => {
    const reply = (contents: string[]) => () => ({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: body(contents) });
    const bad = loadBundle(bundle('chat-stream'), ENV, reply(['Hel', 'Hello', 'Hello wor']));
    bad.exports.default();
    expect(total(bad.shim, 'chatgate_cumulative_deltas')).toBe(1);
    expect(bad.exports.options.thresholds.chatgate_cumulative_deltas).toEqual(['count<1']);
    const legal = loadBundle(bundle('chat-stream'), ENV, reply(['a', 'a', 'a', 'a']));
    legal.exports.default();
    expect(total(legal.shim, 'chatgate_cumulative_deltas')).toBe(0);
    expect(failedChecks(legal.shim)).toEqual([]);
  });

  it('mergeable timing: every sample also counts in its log bucket; a split runner names its segment, runner and test in its files and inside', () => {
    const { shim, exports } = runSse({ ...SSE_OK, calls: stream(['Hello', ' there', ' friend', '!']) }, { SUMMARY_DIR: 'd', SUMMARY_STDOUT: '1' });
    const dist = shim.samples.filter((s) => s.metric.startsWith('chatgate_dist_'));
    // Each trend sample (TTFT, three gaps, TPOT, E2E) counted once, tagged with its value's bucket.
    const tagged = (metric: string) => dist.filter((s) => s.metric === metric).map((s) => s.tags.b);
    for (const f of ['ttft_ms', 'itl_ms', 'tpot_ms', 'e2e_ms']) {
      expect(samples(shim, f).length, f).toBeGreaterThan(0);
      expect(tagged(`chatgate_dist_${f}`), f).toEqual(samples(shim, f).map((v) => bucketLabel(bucketOf(v))));
    }
    expect(tagged('chatgate_dist_itl_ms')).toHaveLength(3);
    expect(dist.every((s) => s.value === 1)).toBe(true);
    // Every bucket of the four families has its always-true threshold, so k6 keeps the per-bucket counts.
    expect(Object.keys(exports.options.thresholds).filter((k) => k.startsWith('chatgate_dist_'))).toHaveLength(4 * (LAST_BUCKET + 2));

    shim.testOptions = { executionSegment: '1/3:2/3', executionSegmentSequence: '0,1/3,2/3,1', tags: { testid: 'nightly 42' } };
    const b = bucketLabel(bucketOf(350));
    const out = exports.handleSummary({
      metrics: {
        ttft_ms: { type: 'trend', contains: 'time', values: { avg: 350, min: 350, med: 350, max: 350, 'p(90)': 350, 'p(95)': 350, 'p(99)': 350, count: 1 }, thresholds: { 'p(95)<10000': { ok: true } } },
        [`chatgate_dist_ttft_ms{b:${b}}`]: { type: 'counter', contains: 'default', values: { count: 1, rate: 0.1 }, thresholds: { 'count>=0': { ok: true } } },
        'chatgate_dist_ttft_ms{b:0001}': { type: 'counter', contains: 'default', values: { count: 0, rate: 0 }, thresholds: { 'count>=0': { ok: true } } },
        chatgate_dist_ttft_ms: { type: 'counter', contains: 'default', values: { count: 1, rate: 0.1 } },
      },
      state: { testRunDurationMs: 10_000 },
    });
    const file = 'd/k6-chat-stream-sse-nightly_42-runner2of3-summary.json';
    expect(Object.keys(out).sort()).toEqual(['d/k6-chat-stream-sse-nightly_42-runner2of3-junit.xml', file, 'stdout']);
    const json = JSON.parse(out[file]);
    expect(json.identity).toMatchObject({ test_id: 'nightly 42', script: 'chat-stream-sse', segment: '1/3:2/3', segment_sequence: '0,1/3,2/3,1', runner: 2, runners: 3 });
    expect(json.identity.settings.thresholds.ttft_ms).toEqual(['p(95)<10000']);
    expect(Object.keys(json.identity.settings.thresholds).some((k) => k.startsWith('chatgate_dist_'))).toBe(false);
    expect(json.distributions).toEqual({ ttft_ms: { trend: 'ttft_ms', relative_error: RELATIVE_ERROR, counts: { [b]: 1 }, count: 1, min: 350, max: 350, sum: 350 } });
    // The bucket counters and their thresholds stay out of the metrics and the verdicts.
    expect(Object.keys(json.metrics).some((k) => k.startsWith('chatgate_dist_'))).toBe(false);
    expect(json.thresholds).toEqual([expect.objectContaining({ metric: 'ttft_ms' })]);
    expect(out.stdout).toContain('runner 2 of 3 (execution segment 1/3:2/3) of test nightly 42: the figures and thresholds below are this runner\'s share only');
    // SUMMARY_STDOUT=1: the same JSON summary as one log line, for pods whose files vanish.
    const line = (out.stdout as string).split('\n').find((l) => l.startsWith('chatgate-k6-summary '))!;
    expect(JSON.parse(line.slice('chatgate-k6-summary '.length))).toEqual(json);
    // A k6-operator that adds --tag instance_id/testrun_name replaces K6_TAGS: the TestRun's name is the test id.
    shim.testOptions = { executionSegment: '1/3:2/3', executionSegmentSequence: '0,1/3,2/3,1', tags: { instance_id: '1', testrun_name: 'chatgate-chat-stream-sse' } };
    const op = exports.handleSummary({ metrics: {}, state: { testRunDurationMs: 10_000 } });
    expect(Object.keys(op)).toContain('d/k6-chat-stream-sse-chatgate-chat-stream-sse-runner2of3-summary.json');
  });
});
