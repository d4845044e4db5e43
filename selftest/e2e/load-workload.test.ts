// Workload runs against the reference (in this process, short latencies): synthetic
// prompts of an exact token count with the reply length asked by max_tokens, tokens per
// request in requests.jsonl with their source (usage, else the tokenizer), a dataset
// in multi-turn sessions, a shared prefix, trace replay at the trace's offsets (the
// intended send times in requests.jsonl, not the clock), an interrupted run keeping
// every record, and bad input as one line and exit 2 before any request. Bounded by
// request counts; about 10 s.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../lib/run/config.ts';
import { startReferenceServer } from '../../reference/server.ts';
import { parseArgs, type Scenario } from '../../load/setup/options.ts';
import { executeRun, main, type RunOutcome } from '../../load/run.ts';
import { referenceTarget, type LoadTarget } from '../../load/setup/load-target.ts';
import { StopToken } from '../../load/setup/stop.ts';

type Rec = Record<string, any>;
const dir = mkdtempSync(join(tmpdir(), 'chatgate-workload-'));
let n = 0;

function run(target: LoadTarget, scenario: Scenario, flags: string[], stop = new StopToken()): Promise<RunOutcome & { records: Rec[] }> {
  const { options } = parseArgs([scenario, '--quiet', '--warmup', '1', ...flags], {});
  const out = join(dir, `run-${n++}`);
  return executeRun({ scenario, options, config: loadConfig({}), target, stop, outDir: out, log: () => {} }).then((o) => ({
    ...o,
    records: readFileSync(join(out, 'requests.jsonl'), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec),
  }));
}

describe('workload runs against the reference', () => {
  let ref: Awaited<ReturnType<typeof startReferenceServer>>;
  let bare: Awaited<ReturnType<typeof startReferenceServer>>;
  let target: LoadTarget;
  beforeAll(async () => {
    ref = await startReferenceServer({ latency: { ttftMs: 10, itlMs: 1, jsonMs: 2 }, replyWords: 64 });
    bare = await startReferenceServer({ latency: { ttftMs: 10, itlMs: 1, jsonMs: 2 }, replyWords: 64, variants: ['no-usage-chunk'] });
    target = referenceTarget(ref);
  });
  afterAll(async () => {
    await ref?.close();
    await bare?.close();
  });

  it('synthetic prompts: prompt and completion tokens per request match what was asked, with their source', async () => {
    const o = await run(target, 'stream', ['--prompt-tokens', '1024', '--output-tokens', '48', '--rate', '20', '--requests', '12']);
    expect(o.records).toHaveLength(12);
    for (const r of o.records) {
      expect(r).toMatchObject({ ok: true, status: 200, prompt_tokens_sent: 1024, prompt_tokens_source: 'usage', completion_tokens: 48, completion_tokens_source: 'usage', max_tokens: 48 });
      // usage counts the same text, plus whatever the server adds per message (chat framing).
      expect(r.prompt_tokens).toBeGreaterThanOrEqual(1024);
      expect(r.prompt_tokens).toBeLessThanOrEqual(1024 + 16);
      expect(r.ttft_ms).toBeGreaterThan(0);
      // The path to the first token in order: sent, on the wire, headers, first output chunk.
      expect(r.wire_ms).toBeGreaterThanOrEqual(r.sent_ms);
      expect(r.headers_ms).toBeGreaterThan(0);
      expect(r.headers_ms).toBeLessThanOrEqual(r.ttft_ms);
      expect(r.itl.count).toBe(47);
      expect(JSON.stringify(r)).not.toContain(ref.keys.main);
    }
    const t = o.summary.tokens as Rec;
    expect(t.input_tokens_total).toBe(o.records.reduce((a, r) => a + r.prompt_tokens, 0));
    expect(t.output_tokens_total).toBe(12 * 48);
    expect(t.prompt_tokens_source).toEqual({ usage: 12, tokenizer: 0, none: 0 });
    expect(t.total_tokens_per_s).toBeCloseTo(t.input_tokens_per_s + t.output_tokens_per_s, 1);
    expect(o.summary.metrics.input_tokens_per_s).toBe(t.input_tokens_per_s);
    expect(o.summary.workload).toMatchObject({ source: 'synthetic', tokenizer: 'o200k_base', prompt_tokens: '1024', output_tokens: '48' });
    // Goodput under the default TTFT SLO (1000 ms): every request of this light run.
    expect(o.summary.metrics.goodput_rps).toBeGreaterThan(0);
  });

  it('without usage the tokenizer counts what was sent and received, and the report says so', async () => {
    const o = await run(referenceTarget(bare), 'stream', ['--prompt-tokens', '200', '--output-tokens', '32', '--rate', '20', '--requests', '6']);
    for (const r of o.records) {
      expect(r).toMatchObject({ ok: true, prompt_tokens: 200, prompt_tokens_source: 'tokenizer', completion_tokens_source: 'tokenizer' });
      expect(r.completion_tokens).toBeGreaterThanOrEqual(32); // 32 words, one or more tokens each
    }
    expect((o.summary.tokens as Rec).note).toMatch(/tokenizer's count of the message contents sent.*tokenizer's count of the reply text received/);
  });

  it('a shared prefix is the same system prompt of N tokens in every request', async () => {
    const o = await run(target, 'stream', ['--shared-prefix-tokens', '300', '--prompt-tokens', '20', '--output-tokens', '4', '--rate', '20', '--requests', '5']);
    expect(o.records.map((r) => r.prompt_tokens_sent)).toEqual([320, 320, 320, 320, 320]);
    expect(o.summary.workload).toMatchObject({ shared_prefix_tokens: 300 });
  });

  it('a ShareGPT dataset in multi-turn sessions: each turn carries the conversation so far', async () => {
    const file = join(dir, 'sharegpt.jsonl');
    const conv = (k: number) => JSON.stringify({ conversations: [1, 2, 3].flatMap((t) => [{ from: 'human', value: `Conversation ${k} question ${t} about the weather` }, { from: 'gpt', value: 'An answer of a few words' }]) });
    writeFileSync(file, `${conv(1)}\n${conv(2)}\n`);
    const o = await run(target, 'stream', ['--dataset', file, '--multi-turn', '--output-tokens', '8', '--concurrency', '1', '--requests', '6']);
    expect(o.records.map((r) => [r.session, r.turn])).toEqual([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]);
    for (const s of [0, 1]) {
      const turns = o.records.filter((r) => r.session === s);
      expect(turns[1].prompt_tokens_sent).toBeGreaterThan(turns[0].prompt_tokens_sent + 8);
      expect(turns[2].prompt_tokens_sent).toBeGreaterThan(turns[1].prompt_tokens_sent + 8);
      expect(turns[2].prompt_tokens).toBeGreaterThan(turns[1].prompt_tokens); // the server saw the history too
    }
  });

  it('trace replay sends at the trace\'s offsets with its lengths', async () => {
    const file = join(dir, 'trace.jsonl');
    const offsets = [0, 40, 40, 130, 300, 620];
    writeFileSync(file, offsets.map((t, i) => JSON.stringify({ timestamp: 5000 + t, input_length: 50 + i, output_length: 3 + i })).join('\n'));
    const o = await run(target, 'stream', ['--trace', file, '--save-gaps']);
    const recs = [...o.records].sort((a, b) => a.seq - b.seq);
    expect(recs).toHaveLength(offsets.length);
    const t0 = recs[0].intended_ms;
    recs.forEach((r, i) => {
      expect(r.intended_ms - t0).toBeCloseTo(offsets[i]!, 2);
      expect(r).toMatchObject({ prompt_tokens_sent: 50 + i, max_tokens: 3 + i, completion_tokens: 3 + i });
      expect(r.gaps_ms).toHaveLength(r.itl.count); // --save-gaps: every gap, beside the summary
    });
    expect(o.summary.details.mode).toMatchObject({ kind: 'trace', records: offsets.length });
  });

  it('an interrupted run keeps every record it wrote', async () => {
    const stop = new StopToken();
    const timer = setTimeout(() => stop.trigger('interrupted'), 800);
    const o = await run(target, 'stream', ['--prompt-tokens', '16', '--output-tokens', '8', '--rate', '30', '--duration', '60', '--drain', '1'], stop);
    clearTimeout(timer);
    expect(o.summary.partial).toBe(true);
    expect(o.records.length).toBe(o.summary.counts.sent + o.summary.counts.not_sent);
    expect(o.records.length).toBeGreaterThan(3);
  });
});

describe('EV-4 under a token cap: a legal empty capped reply is not a failure; the seeded defect still is', () => {
  it('capped-empty-reply (legal variant) with --output-tokens: every request ok, no finding', async () => {
    const ref = await startReferenceServer({ latency: { ttftMs: 5, itlMs: 1, jsonMs: 2 }, replyWords: 16, variants: ['capped-empty-reply'] });
    try {
      const o = await run(referenceTarget(ref), 'stream', ['--prompt-tokens', '32', '--output-tokens', '8', '--rate', '20', '--requests', '8']);
      expect(o.summary.findings).toEqual([]);
      expect(o.summary.counts.ok).toBe(8);
      expect(o.records.every((r) => r.ok && r.ttft_ms === null && r.completion_tokens === 0)).toBe(true);
      expect(o.exitCode).toBe(0);
    } finally {
      await ref.close();
    }
  });

  it('stream-empty-content (seeded EV-4 defect), uncapped: EV-4 under load', async () => {
    const ref = await startReferenceServer({ latency: { ttftMs: 5, itlMs: 1, jsonMs: 2 }, replyWords: 16, defect: 'stream-empty-content' });
    try {
      const o = await run(referenceTarget(ref), 'stream', ['--prompt-tokens', '32', '--rate', '20', '--requests', '8']);
      expect(o.summary.findings.map((f) => f.clause)).toContain('EV-4');
      expect(o.exitCode).toBe(1);
    } finally {
      await ref.close();
    }
  });
});

describe('bad workload input: one line naming the file, the line and the fix, exit 2, before any request', () => {
  const cases: Array<[string, string[], RegExp]> = [];
  beforeAll(() => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"prompt": "fine"}\n{"prompt": \n');
    const badTrace = join(dir, 'bad-trace.jsonl');
    const burst = join(dir, 'burst.jsonl');
    writeFileSync(burst, [0, 100, 200, 300, 400, 500, 1500].map((t) => JSON.stringify({ timestamp: t, input_length: 5, output_length: 5 })).join('\n'));
    writeFileSync(badTrace, '{"timestamp": 0, "input_length": 5, "output_length": 5}\n{"timestamp": 10, "input_length": -2, "output_length": 5}\n');
    cases.push(
      ['missing dataset', ['stream', '--dataset', join(dir, 'nope.jsonl')], /--dataset .*nope\.jsonl: no such file; give the path of a readable file$/],
      ['malformed line', ['stream', '--dataset', bad], /bad\.jsonl:2: not a JSON object/],
      ['bad trace line', ['stream', '--trace', badTrace], /bad-trace\.jsonl:2: input_length -2 is not a whole number/],
      ['min above max', ['stream', '--prompt-tokens', '100', '--prompt-tokens-stdev', '10', '--prompt-tokens-min', '300', '--prompt-tokens-max', '200'], /--prompt-tokens: min 300 is above max 200/],
      ['negative length', ['stream', '--data', 'prompt_tokens=-5'], /--data: "prompt_tokens=-5" is not a length setting/],
      ['autocannon', ['throughput', '--prompt-tokens', '100'], /--prompt-tokens shapes the requests of the open-loop sender; give --rate/],
      ['trace above the rate cap', ['stream', '--trace', burst, '--cap-rate', '5'], /--trace .*burst\.jsonl: the trace sends 6 requests within one second, above the rate cap of 5 req\/s; raise the cap with --cap-rate 6$/],
      ['trace above the duration cap', ['stream', '--trace', burst, '--cap-duration', '1'], /the trace lasts 2 s, above the cap of 1 s; raise the cap with --cap-duration 3, or give --duration/],
      ['no tokenizer', ['stream', '--prompt-tokens', '100', '--tokenizer', 'none'], /--tokenizer: none cannot build prompts of a token count/],
      ['turns without lengths', ['stream', '--turns', '3'], /--turns: sessions of synthetic turns need a prompt length; add --prompt-tokens <n>$/],
      ['stdev without mean', ['stream', '--output-tokens-stdev', '5'], /--output-tokens: stdev, min or max given without the mean; add --output-tokens <n>$/],
    );
  });

  it('each case', async () => {
    for (const [name, argv, pattern] of cases) {
      const err: string[] = [];
      const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s) => { err.push(String(s)); return true; });
      let code: number;
      try {
        code = await main([...argv, '--quiet'], {});
      } finally {
        spy.mockRestore();
      }
      expect(code, name).toBe(2);
      expect(err, name).toHaveLength(1);
      expect(err[0]!.trimEnd(), name).toMatch(pattern);
      expect(err[0]!.trimEnd().split('\n'), name).toHaveLength(1);
    }
  });
});
