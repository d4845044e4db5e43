// What the load harness puts on the wire and reads off it, against a small local
// server that records every body: --extra-body on every engine (the lean client of
// stream and fixed-rate throughput, autocannon at fixed connections, warm-up included),
// and the reasoning and caching figures of a vLLM-style stream (delta.reasoning before
// the content, usage.prompt_tokens_details.cached_tokens). Count-bounded: a few
// requests per run.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from '../../load/run.ts';
import { parseArgs } from '../../load/setup/options.ts';
import { remoteTarget } from '../../load/setup/load-target.ts';
import { StopToken } from '../../load/setup/stop.ts';
import { loadConfig } from '../../lib/run/config.ts';
import { LONE_REQUESTS } from '../../load/scenarios/drive.ts';

const KEY = 'sk-wire-test-0123456789';
let server: Server;
let url: string;
const bodies: Array<Record<string, unknown>> = [];
/** Requests the server is answering at once, and the most it ever was. */
let active = 0;
const dirs: string[] = [];
let maxActive = 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  server = createServer((req, res) => {
    maxActive = Math.max(maxActive, ++active);
    res.on('close', () => { active--; });
    let text = '';
    req.on('data', (d) => { text += d; });
    req.on('end', async () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      bodies.push(body);
      const usage = { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14, prompt_tokens_details: { cached_tokens: 6 } };
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }], usage }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      // vLLM's reasoning field first, then the answer.
      for (const part of [chunk({ role: 'assistant' }), chunk({ reasoning: 'Let me' }), chunk({ reasoning: ' think.' }), chunk({ content: 'Hi' }), chunk({ content: ' there' })]) {
        res.write(part);
        await sleep(4);
      }
      res.write(chunk({}, 'stop'));
      res.end(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage })}\n\ndata: [DONE]\n\n`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
});

async function run(argv: string[], reports = false) {
  const env = { TARGET_URL: url, API_KEY: KEY };
  const parsed = parseArgs([...argv, '--quiet'], env);
  const config = loadConfig(env);
  const outDir = reports ? mkdtempSync(join(tmpdir(), 'chatgate-load-wire-')) : undefined;
  if (outDir) dirs.push(outDir);
  return executeRun({ scenario: parsed.scenario, options: parsed.options, config, target: remoteTarget(config), stop: new StopToken(), log: () => {}, outDir });
}

const EXTRA = '{"ignore_eos": true, "min_tokens": 3, "temperature": 0}';

describe('--extra-body on the wire', () => {
  const cases: Array<[string, string[]]> = [
    ['stream (lean client)', ['stream', '--rate', '40', '--requests', '5', '--warmup', '2']],
    ['throughput --rate (lean client, open loop)', ['throughput', '--rate', '40', '--requests', '5', '--warmup', '2']],
    ['throughput at fixed connections (autocannon)', ['throughput', '--connections', '1', '--requests', '5', '--warmup', '2']],
  ];
  for (const [what, argv] of cases) {
    it(`${what}: every request, warm-up included, carries the extra fields beside the harness's own`, async () => {
      const from = bodies.length;
      const out = await run([...argv, '--extra-body', EXTRA]);
      expect(out.summary.counts.ok, JSON.stringify([out.summary.counts, out.summary.failure_examples, out.summary.status_codes])).toBeGreaterThanOrEqual(5);
      const sent = bodies.slice(from);
      expect(sent.length).toBeGreaterThanOrEqual(7);
      for (const b of sent) {
        expect(b).toMatchObject({ ignore_eos: true, min_tokens: 3, temperature: 0 });
        expect(Array.isArray(b.messages)).toBe(true);
      }
      expect(out.summary.options.extra_body).toBe(JSON.stringify(JSON.parse(EXTRA)));
    });
  }

  it('refuses what is not one JSON object, or a field the harness sets, with one line', () => {
    const usage = (v: string) => { try { parseArgs(['stream', '--extra-body', v]); return ''; } catch (e) { return (e as Error).message; } };
    expect(usage('{"ignore_eos": tru}')).toMatch(/^--extra-body: not JSON \(.*\); give one object/);
    expect(usage('[1]')).toMatch(/^--extra-body: not a JSON object/);
    expect(usage('{"stream": false}')).toMatch(/^--extra-body: "stream" is set by the scenario; drop it/);
    expect(usage('{"max_tokens": 5}')).toMatch(/"max_tokens" is set by --max-tokens or --output-tokens/);
    expect(usage('@/nonexistent/extra.json')).toMatch(/^--extra-body: cannot read \/nonexistent\/extra\.json \(ENOENT\)/);
    expect(parseArgs(['stream'], { LOAD_EXTRA_BODY: '{"a":1}' }).options.extraBody).toBe('{"a":1}');
  });
});

describe('reasoning and caching figures', () => {
  it('delta.reasoning counts as output (TTFT), the first content chunk gives the time to first answer token, cached_tokens the cache-hit share', async () => {
    const out = await run(['stream', '--rate', '40', '--requests', '6', '--warmup', '1'], true);
    const s = out.summary;
    expect(s.counts.ok).toBe(6);
    const lines = readFileSync(out.requestsPath!, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, number>);
    expect(lines).toHaveLength(6);
    for (const l of lines) {
      expect(l).toMatchObject({ reasoning_chunks: 2, cached_tokens: 6 });
      expect(l.ttfa_ms).toBeGreaterThan(l.ttst_ms!);
      expect(l.ttst_ms).toBeGreaterThan(l.ttft_ms!);
    }
    const l = s.latencies;
    expect(l.ttfa_ms!.count).toBe(6);
    expect(l.ttst_ms!.count).toBe(6);
    // Reasoning first: the answer comes two chunks after the first output, the second token one after.
    expect(l.ttfa_ms!.min_ms).toBeGreaterThan(l.ttft_ms!.min_ms);
    expect(l.ttst_ms!.min_ms).toBeGreaterThan(l.ttft_ms!.min_ms);
    expect(l.ttfa_ms!.min_ms).toBeGreaterThan(l.ttst_ms!.min_ms);
    expect(s.tokens).toMatchObject({
      cache: { requests_reporting_cached_tokens: 6, cached_prompt_tokens: 36, prompt_tokens: 60, cache_hit_share: 0.6 },
      reasoning: { streams_with_reasoning: 6, reasoning_first: 6 },
    });
    // Every measured request is in the report's scatter.
    expect((s.plots.extra.requests as { of: number }).of).toBe(6);
  });

  it('a sweep step reports its own cache-hit share', async () => {
    const out = await run(['sweep', '--sweep-start', '20', '--sweep-steps', '1', '--step-duration', '0.5', '--step-min-requests', '5', '--warmup', '0']);
    const steps = (out.summary.details as { steps: Array<{ cache_hit_share: number | null; samples: number }> }).steps;
    // A step the driver fell behind in is run again: every step that sent requests reports the share.
    expect(steps.length).toBeGreaterThan(0);
    for (const st of steps) expect(st.cache_hit_share).toBe(0.6);
  });
});

describe('warm-up from the workload', () => {
  it('warm-up requests carry the run\'s shared prefix and lengths (a prefix cache is warm), with texts of their own', async () => {
    const from = bodies.length;
    const out = await run(['stream', '--rate', '40', '--requests', '3', '--warmup', '2', '--prompt-tokens', '24', '--output-tokens', '5', '--shared-prefix-tokens', '32', '--tokenizer', 'o200k_base']);
    expect(out.summary.counts.sent).toBe(3);
    const sent = bodies.slice(from) as Array<{ messages: Array<{ role: string; content: string }>; max_tokens: number }>;
    // 2 warm-up, the lone requests SVC-9 learns its evidence from, 3 measured.
    expect(sent).toHaveLength(2 + LONE_REQUESTS + 3);
    const systems = new Set(sent.map((b) => b.messages[0]!.role === 'system' ? b.messages[0]!.content : '(none)'));
    expect(systems.size).toBe(1);
    expect([...systems][0]).not.toBe('(none)');
    expect(sent.every((b) => b.max_tokens === 5)).toBe(true);
    expect(new Set(sent.map((b) => b.messages[1]!.content)).size).toBe(2 + LONE_REQUESTS + 3);
  });
});

describe('--max-concurrency: a rate with a cap on the requests in flight', () => {
  it('never has more in flight than the cap; the arrivals beyond it wait in the client queue, and the wait is reported', async () => {
    // 200 req/s against streams of ~20 ms each: with a cap of 1 most arrivals queue.
    maxActive = 0;
    const out = await run(['stream', '--rate', '200', '--requests', '8', '--max-concurrency', '1', '--warmup', '1', '--arrival', 'constant'], true);
    expect(maxActive).toBe(1);
    const s = out.summary;
    expect(s.counts.ok).toBe(8);
    expect(s.counts.not_sent).toBe(0);
    const q = s.latencies.client_queue_ms!;
    expect(q.count).toBe(8);
    expect(q.max_ms).toBeGreaterThan(0);
    const waits = readFileSync(out.requestsPath!, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { client_queue_ms?: number }).client_queue_ms);
    expect(waits.filter((w) => w !== undefined && w > 0).length).toBeGreaterThan(0);
  });
});
