// load/workload and the load report fixes: length distributions (and the
// impossible ones as one-line errors), synthetic prompts of an exact token count,
// datasets and traces with their errors naming file and line, sessions and a shared
// prefix, gamma arrivals against their distribution (seeded, no clock), one
// percentile method that never passes the max, histogram bars up to the max, empty
// seconds as gaps, and --baseline naming the settings that differ. Bounded by counts.
import { describe, expect, it, beforeAll } from 'vitest';
import { fixed, lengthDistribution, lengthSampler } from '../../load/workload/distribution.ts';
import { loadTokenizer, type Tokenizer } from '../../load/workload/tokenizer.ts';
import { SyntheticText } from '../../load/workload/synthetic.ts';
import { parseDataset } from '../../load/workload/dataset.ts';
import { parseTrace } from '../../load/workload/trace.ts';
import { Workload, type WorkloadSpec } from '../../load/workload/workload.ts';
import { WorkloadInputError } from '../../load/workload/input-error.ts';
import { arrivals, gammaSampler } from '../../load/engine/arrivals.ts';
import { LatencyHistogram } from '../../load/engine/histogram.ts';
import { Recorder } from '../../load/engine/recorder.ts';
import { Findings } from '../../load/report/findings.ts';
import { settingsDiffer, compareMetrics, formatComparison } from '../../load/report/baseline.ts';
import { seededRandom } from '../../lib/run/seeded-random.ts';

const inputError = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(WorkloadInputError);
    expect((e as Error).message).not.toContain('\n');
    return (e as Error).message;
  }
  throw new Error('expected a WorkloadInputError');
};

let o200k: Tokenizer;
beforeAll(async () => {
  o200k = await loadTokenizer('o200k_base');
});

describe('length distributions', () => {
  it('refuses impossible ones with the fix', () => {
    expect(inputError(() => lengthDistribution('--prompt-tokens', { mean: 100, min: 200, max: 50 }))).toMatch(/^--prompt-tokens: min 200 is above max 50; give a min at most the max$/);
    expect(inputError(() => lengthDistribution('--output-tokens', { mean: 100, stdev: -1 }))).toMatch(/stdev -1 is negative/);
    expect(inputError(() => lengthDistribution('--prompt-tokens', { mean: 10, min: 20, max: 30 }))).toMatch(/mean 10 lies outside \[20, 30\]/);
    expect(inputError(() => lengthDistribution('--prompt-tokens', { mean: 10, stdev: 2, min: 0 }))).toMatch(/min 0 is below 1/);
  });

  it('draws seeded lengths within min..max with the asked mean and stdev', () => {
    const d = lengthDistribution('x', { mean: 500, stdev: 100, min: 200, max: 800 });
    const draw = lengthSampler(d, seededRandom(7));
    const xs = Array.from({ length: 4000 }, draw);
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(200);
    expect(Math.max(...xs)).toBeLessThanOrEqual(800);
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
    expect(Math.abs(mean - 500)).toBeLessThan(10);
    expect(Math.abs(sd - 100)).toBeLessThan(8);
    expect(Array.from({ length: 50 }, lengthSampler(d, seededRandom(7)))).toEqual(xs.slice(0, 50));
    expect(new Set(Array.from({ length: 20 }, lengthSampler(fixed(64), seededRandom(1))))).toEqual(new Set([64]));
  });
});

describe('synthetic prompts', () => {
  it('have exactly the asked token count, in o200k_base and cl100k_base', async () => {
    const cl100k = await loadTokenizer('cl100k_base');
    for (const tok of [o200k, cl100k]) {
      const s = new SyntheticText(tok);
      for (const n of [1, 2, 17, 256, 1024, 4096]) expect(tok.count(s.text(n, seededRandom(n))), `${tok.name} ${n}`).toBe(n);
    }
    await expect(loadTokenizer('o300k')).rejects.toThrow(/--tokenizer: "o300k" is not a known encoding; use one of o200k_base/);
  });

  it('are windows of one pool: the same text for the same draw, other texts for other draws, any length', () => {
    const s = new SyntheticText(o200k);
    for (let i = 0; i < 40; i++) s.text(8, seededRandom(i)); // past the checked texts: the pool's own path
    expect(s.text(300, seededRandom(5))).toBe(s.text(300, seededRandom(5)));
    const firsts = new Set(Array.from({ length: 200 }, (_, i) => s.text(300, seededRandom(1000 + i)).slice(0, 40)));
    expect(firsts.size).toBeGreaterThan(195); // no shared beginnings a prefix cache could serve
    const long = s.text(70_000, seededRandom(9)); // longer than the pool: several windows
    expect(long.split(' ').length - 1).toBe(70_000);
    expect(long.startsWith(' ')).toBe(true);
  });
});

describe('datasets and traces', () => {
  it('reads OpenAI chat, ShareGPT, prompt JSONL and text files into conversations', () => {
    const text = [
      JSON.stringify({ messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello there' }, { role: 'user', content: 'More' }] }),
      '',
      JSON.stringify({ conversations: [{ from: 'human', value: 'Q1' }, { from: 'gpt', value: 'A1' }, { from: 'human', value: 'Q2' }] }),
      JSON.stringify({ prompt: 'Plain', output_tokens: 12 }),
    ].join('\n');
    expect(parseDataset(text, 'd.jsonl')).toEqual([
      { system: 'Be brief.', turns: [{ user: 'Hi', reply: 'Hello there' }, { user: 'More' }] },
      { turns: [{ user: 'Q1', reply: 'A1' }, { user: 'Q2' }] },
      { turns: [{ user: 'Plain', outputTokens: 12 }] },
    ]);
    expect(parseDataset('one\n\ntwo\n', 'p.txt')).toEqual([{ turns: [{ user: 'one' }] }, { turns: [{ user: 'two' }] }]);
  });

  it('names the file, the line and the fix for a bad line', () => {
    expect(inputError(() => parseDataset('{"prompt":"a"}\n{oops\n', 'data/x.jsonl'))).toMatch(/^data\/x\.jsonl:2: not a JSON object .*; each line must be \{"messages"/);
    expect(inputError(() => parseDataset('{"messages":[{"role":"assistant","content":"a"}]}', 'm.jsonl'))).toMatch(/^m\.jsonl:1: has no user message; /);
    expect(inputError(() => parseDataset('{"prompt":"a","output_tokens":-3}', 'p.jsonl'))).toMatch(/^p\.jsonl:1: output_tokens -3 is not a whole number/);
    expect(inputError(() => parseDataset('{"foo":1}', 'f.jsonl'))).toMatch(/^f\.jsonl:1: has none of "messages", "conversations", "prompt"/);
    expect(inputError(() => parseDataset('\n', 'e.jsonl'))).toMatch(/^e\.jsonl: the file holds no record/);
  });

  it('reads a JSON array of records (vLLM\'s ShareGPT file), skipping records without a human turn, errors naming the record', () => {
    const arr = JSON.stringify([
      { id: 'a', conversations: [{ from: 'human', value: 'Q1' }, { from: 'gpt', value: 'A1' }] },
      { id: 'b', conversations: [] },
      { id: 'c', conversations: [{ from: 'gpt', value: 'only a reply' }] },
      { id: 'd', conversations: [{ from: 'human', value: 'Q2' }] },
    ], null, 2);
    const ds = parseDataset(arr, 'ShareGPT_V3.json');
    expect([...ds]).toEqual([{ turns: [{ user: 'Q1', reply: 'A1' }] }, { turns: [{ user: 'Q2' }] }]);
    expect(ds.skipped).toBe(2);
    expect(parseDataset('[{"prompt":"p"}]', 'p.json')).toEqual([{ turns: [{ user: 'p' }] }]);
    expect(inputError(() => parseDataset('[{"conversations":[{"from":"human","value":1}]}]', 's.json'))).toMatch(/^s\.json\[0\]: conversations\[0\] needs "from"/);
    expect(inputError(() => parseDataset('[{"x":1}', 's.json'))).toMatch(/^s\.json: starts with "\[" but is not valid JSON .*each array element must be/);
    expect(inputError(() => parseDataset('[{"conversations":[]}]', 's.json'))).toMatch(/^s\.json: none of its 1 records has a user turn/);
    expect(inputError(() => parseDataset('{\n  "prompt": "a"\n}\n', 'one.json'))).toMatch(/^one\.json: is one JSON object, neither JSONL .* nor a JSON array/);
  });

  it('reads traces (JSONL or CSV), offsets from the first record, and refuses bad ones', () => {
    const jsonl = [0, 250, 250, 1000].map((t, i) => JSON.stringify({ timestamp: 1_700_000_000_000 + t, input_length: 10 + i, output_length: 5 })).join('\n');
    expect(parseTrace(jsonl, 't.jsonl').map((r) => r.offsetMs)).toEqual([0, 250, 250, 1000]);
    expect(parseTrace('timestamp,prompt_tokens,output_tokens\n100,8,4\n300,9,5\n', 't.csv')).toEqual([{ offsetMs: 0, promptTokens: 8, outputTokens: 4 }, { offsetMs: 200, promptTokens: 9, outputTokens: 5 }]);
    expect(inputError(() => parseTrace('{"timestamp":5,"input_length":1,"output_length":1}\n{"timestamp":4,"input_length":1,"output_length":1}', 't.jsonl'))).toMatch(/^t\.jsonl:2: timestamp 4 is before the previous record's 5; sort the trace by timestamp$/);
    expect(inputError(() => parseTrace('{"timestamp":5,"input_length":0,"output_length":1}', 't.jsonl'))).toMatch(/^t\.jsonl:1: input_length 0 is not a whole number of at least 1/);
    expect(inputError(() => parseTrace('timestamp,input_length\n1,2,3\n', 't.csv'))).toMatch(/^t\.csv:2: 3 columns where the header has 2/);
  });
});

describe('workload', () => {
  const spec = (over: Partial<WorkloadSpec>): WorkloadSpec => ({ seed: 1, tokenizer: o200k, prompt: 'P', multiTurn: false, turns: 1, sharedPrefixTokens: 0, unique: true, ...over });

  it('counts a fixed prompt with its request tail exactly, whether or not the two count apart', () => {
    // Ends that split before " (" and ends that do not (trailing spaces join the tail's space).
    for (const prompt of ['Write one short sentence about load testing.', 'Say hi', 'ends with spaces   ', 'ends in a newline\n', 'nested (paren', '数字123']) {
      for (const canaries of [true, false]) {
        const w = new Workload(spec({ prompt, canaries }));
        for (const seq of [0, 7, 99, 1234, 987654]) {
          const item = w.next(seq);
          expect(item.promptTokens, `${JSON.stringify(prompt)} ${seq}`).toBe(o200k.count(item.messages[0]!.content));
        }
      }
    }
    // A tokenizer whose counts do not add up at that point: every text is counted whole.
    const bytes4: typeof o200k = { ...o200k, count: (text) => Math.ceil(text.length / 4) };
    const w = new Workload(spec({ tokenizer: bytes4, prompt: 'abcde' }));
    for (const seq of [0, 1, 22, 333]) expect(w.next(seq).promptTokens).toBe(bytes4.count(w.next(seq).messages[0]!.content));
  });

  it('synthetic prompts with a shared prefix: exact counts, the same prefix, unique or repeated text', () => {
    const w = new Workload(spec({ promptTokens: fixed(40), outputTokens: fixed(16), sharedPrefixTokens: 100 }));
    const a = w.next(0);
    const b = w.next(1);
    expect(a.promptTokens).toBe(140);
    expect(a.maxTokens).toBe(16);
    expect(a.messages[0]).toEqual(b.messages[0]);
    expect(o200k.count(a.messages[0]!.content)).toBe(100);
    expect(o200k.count(a.messages[1]!.content)).toBe(40);
    expect(a.messages[1]).not.toEqual(b.messages[1]);
    const same = new Workload(spec({ promptTokens: fixed(40), unique: false }));
    expect(same.next(0).messages).toEqual(same.next(1).messages);
  });

  it('multi-turn sessions carry the conversation so far with the replies received, and keep nothing after the last turn', () => {
    const w = new Workload(spec({ promptTokens: fixed(10), turns: 3 }));
    const t0 = w.next(0);
    const other = w.next(1); // a second session starts while the first waits for its answer
    expect([t0.session, t0.turn, other.session, other.turn]).toEqual([0, 0, 1, 0]);
    w.done(0, true, ' reply one');
    const t1 = w.next(2);
    expect([t1.session, t1.turn]).toEqual([0, 1]);
    expect(t1.messages.slice(0, 2)).toEqual([t0.messages[0], { role: 'assistant', content: ' reply one' }]);
    expect(t1.promptTokens).toBe(10 + o200k.count(' reply one') + 10);
    w.done(2, true, ' two');
    const t2 = w.next(3);
    expect([t2.session, t2.turn, t2.messages.length]).toEqual([0, 2, 5]);
    w.done(3, true, ' three');
    expect(w.next(4).session).toBe(2); // session 0 had its 3 turns
    w.done(1, false, undefined); // a failed turn ends its session
    expect(w.next(5).session).toBe(3);
  });

  it('a dataset: first turns in order, or every turn with --multi-turn; asked length from the record, else its reply', () => {
    const conversations = parseDataset([
      JSON.stringify({ conversations: [{ from: 'human', value: 'Q1' }, { from: 'gpt', value: 'A one two three' }, { from: 'human', value: 'Q2' }] }),
      JSON.stringify({ prompt: 'Solo', output_tokens: 9 }),
    ].join('\n'), 'd.jsonl');
    const single = new Workload(spec({ dataset: { source: 'd.jsonl', conversations }, unique: false }));
    const a = single.next(0);
    expect(a.messages).toEqual([{ role: 'user', content: 'Q1' }]);
    expect(a.maxTokens).toBe(o200k.count('A one two three'));
    expect(single.next(1)).toMatchObject({ messages: [{ role: 'user', content: 'Solo' }], maxTokens: 9 });
    const multi = new Workload(spec({ dataset: { source: 'd.jsonl', conversations }, multiTurn: true, unique: false }));
    multi.next(0);
    multi.done(0, true, 'Got it');
    expect(multi.next(1).messages).toEqual([{ role: 'user', content: 'Q1' }, { role: 'assistant', content: 'Got it' }, { role: 'user', content: 'Q2' }]);
  });
});

describe('arrivals', () => {
  // Gamma gaps of shape k have mean k*theta and coefficient of variation 1/sqrt(k): n = 2000 seeded draws.
  it.each([0.25, 0.5, 1, 2, 8])('gamma gaps with burstiness %s keep the mean gap and have CV 1/sqrt(k)', (k) => {
    const offsets: number[] = [];
    for (const t of arrivals('gamma', 20, 1e12, 42, { burstiness: k })) if (offsets.push(t) > 2000) break;
    const gaps = offsets.slice(1).map((t, i) => t - offsets[i]!);
    expect(gaps.length).toBe(2000);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    const cv = Math.sqrt(gaps.reduce((a, b) => a + (b - mean) ** 2, 0) / gaps.length) / mean;
    expect(Math.abs(mean - 50) / 50).toBeLessThan(0.08);
    expect(Math.abs(cv - 1 / Math.sqrt(k)) / (1 / Math.sqrt(k))).toBeLessThan(0.1);
  });

  it('gamma draws pass a Kolmogorov-Smirnov test against the exponential at k = 1', () => {
    const draw = gammaSampler(1, 1, seededRandom(3));
    const xs = Array.from({ length: 2000 }, draw).sort((a, b) => a - b);
    let d = 0;
    xs.forEach((x, i) => {
      const f = 1 - Math.exp(-x);
      d = Math.max(d, Math.abs(f - i / xs.length), Math.abs(f - (i + 1) / xs.length));
    });
    expect(d).toBeLessThan(1.36 / Math.sqrt(xs.length)); // 5 % critical value
  });

  it('trace arrivals are the trace offsets, cut at the duration', () => {
    expect([...arrivals('trace', 1, 1000, 1, { offsetsMs: [0, 10, 10, 999, 1000, 2000] })]).toEqual([0, 10, 10, 999]);
  });
});

describe('report fixes', () => {
  it('percentiles never exceed the max or fall below the min (HdrHistogram\'s raw answer can)', () => {
    const h = new LatencyHistogram();
    const random = seededRandom(5);
    for (let i = 0; i < 500; i++) h.record(150 + random() * 40);
    h.record(181.8);
    const raw = h.h.getValueAtPercentile(100) / 1000;
    expect(raw).toBeGreaterThan(h.h.maxValue / 1000); // the defect the clamp removes
    const s = h.summary();
    for (const p of [50, 90, 95, 99, 99.9]) {
      expect(s[`p${p === 99.9 ? '999' : p}_ms` as 'p50_ms']).toBeLessThanOrEqual(s.max_ms);
      expect(h.percentileMs(p)).toBeGreaterThanOrEqual(s.min_ms);
    }
    expect(h.percentileMs(100)).toBe(s.max_ms);
  });

  it('histogram bars reach the max: every value has its bar', () => {
    const h = new LatencyHistogram();
    for (let i = 1; i <= 999; i++) h.record(i);
    h.record(50_000);
    const plot = h.bucketPlot(50);
    expect(plot.count.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(plot.count[49]).toBe(1);
    // The range is the data's (1 ms to 50 s), in log bins: it spans decades.
    expect(plot.bucket_ms[0]).toBe(1);
    expect(plot.upper_ms).toBe(h.summary().max_ms);
    expect(plot.log).toBe(true);
    const narrow = new LatencyHistogram();
    for (let i = 0; i < 100; i++) narrow.record(900 + i);
    const lin = narrow.bucketPlot(10);
    expect(lin.log).toBeUndefined();
    expect(lin.bucket_ms[0]).toBe(900);
    expect(lin.count.every((c) => c > 0)).toBe(true); // no empty stretch from 0 to the data
    const zeros = new LatencyHistogram();
    zeros.record(0);
    zeros.record(0);
    expect(zeros.bucketPlot().count).toEqual([2]);
  });

  it('a percentile curve stops where its samples stop (p99.9 needs 1,000)', () => {
    const h = new LatencyHistogram();
    for (let i = 1; i <= 93; i++) h.record(i);
    expect(h.percentilePlot().percentile.at(-1)).toBe(98.5);
    for (let i = 1; i <= 907; i++) h.record(i);
    expect(h.percentilePlot().percentile.at(-1)).toBe(99.9);
  });

  it('a second without answers has no latency in the timeline (a gap, not 0 ms)', () => {
    const r = new Recorder(false, new Findings(), 0);
    r.recordResponse(200, 10, 100, undefined);
    r.recordResponse(200, 12, 2500, undefined);
    const t = r.timelinePoints();
    expect(t.map((p) => p.p50_ms)).toEqual([10, null, 12]);
  });

  it('--baseline names every setting that differs and says the comparison is not like for like', () => {
    const base = { options: { rate: 5, out: '/a', prompt_tokens: 1024 }, workload: { source: 'synthetic', prompt_tokens: '1024' }, target: { url: 'http://127.0.0.1:1/v1', reference: { latency: { ttftMs: 150 } } } };
    const cur = { options: { rate: 10, out: '/b', prompt_tokens: 1024 }, workload: { source: 'synthetic', prompt_tokens: '2048' }, target: { url: 'http://127.0.0.1:2/v1', reference: { latency: { ttftMs: 100 } } } };
    expect(settingsDiffer(base, cur).map((d) => d.setting)).toEqual(['target.reference.latency.ttftMs', 'target.url', 'options.rate', 'workload.prompt_tokens']);
    const cmp = compareMetrics({ ok_rps: 10 }, { path: 'b.json', scenario: 'stream', startedAt: null, metrics: { ok_rps: 10 }, settings: base }, new Map(), cur);
    expect(cmp.like_for_like).toBe(false);
    expect(cmp.settings_differ).toHaveLength(4);
    const text = formatComparison(cmp);
    expect(text).toMatch(/NOT LIKE FOR LIKE: 4 settings differ between the two runs/);
    for (const d of cmp.settings_differ) expect(text).toContain(`  ${d.setting}: ${JSON.stringify(d.baseline)} -> ${JSON.stringify(d.current)}`);
    const same = compareMetrics({ ok_rps: 10 }, { path: 'b.json', scenario: 'stream', startedAt: null, metrics: { ok_rps: 10 }, settings: base }, new Map(), { ...base, options: { ...base.options, out: '/elsewhere' } });
    expect(same.like_for_like).toBe(true);
    // An option the older baseline did not know yet, at its default, is no difference; away from it, it is.
    expect(settingsDiffer({ options: { rate: 5 } }, { options: { rate: 5, tokenizer: 'o200k_base', burstiness: 1 } })).toEqual([]);
    expect(settingsDiffer({ options: { rate: 5 } }, { options: { rate: 5, tokenizer: 'cl100k_base' } }).map((d) => d.setting)).toEqual(['options.tokenizer']);
  });
});

describe('token timing counts reasoning and tool-call deltas (load/engine/lean-client.ts)', () => {
  it('TTFT at the first reasoning delta, ITL across reasoning, tool-call and content deltas; usage read for both counts', async () => {
    const { LeanCall } = await import('../../load/engine/lean-client.ts');
    let out: import('../../load/engine/lean-client.ts').Outcome | undefined;
    const call = new LeanCall({ seq: 0, route: 'chat', key: 'main', stream: true, path: '/v1/chat/completions', body: '{}', headers: {}, intendedAt: 0, sample: false, keepReply: true }, (o) => { out = o; });
    const c = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
    const ctl = { abort() {}, aborted: false } as never;
    call.onRequestStart(ctl);
    call.onResponseStart(ctl, 200, { 'content-type': 'text/event-stream' });
    const pieces = [
      c({ role: 'assistant' }),
      c({ reasoning_content: 'Think' }),
      c({ reasoning_content: 'ing' }),
      c({ tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'f', arguments: '' } }] }),
      c({ content: 'Hi' }),
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 } })}\n\n`,
      'data: [DONE]\n\n',
    ];
    for (const p of pieces) call.onResponseData(ctl, Buffer.from(p));
    call.onResponseEnd();
    expect(out).toMatchObject({ ok: true, tokenEvents: 4, contentChunks: 1, usageTokens: 5, usagePromptTokens: 11, reply: 'ThinkingHi' });
    expect(out!.gaps.count).toBe(3);
    expect(out!.firstContentAt).toBeDefined();
  });

  // EV-4 asks for content of uncapped requests only (the fuzz oracle's scope): reasoning alone is not the reply.
  it.each([
    ['uncapped, role only', false, [{ role: 'assistant' }], false],
    ['uncapped, reasoning only', false, [{ role: 'assistant' }, { reasoning_content: 'hmm' }], false],
    ['capped, role and finish only (legal: the cap spent on hidden reasoning)', true, [{ role: 'assistant' }], true],
  ])('%s', async (_name, capped, deltas, ok) => {
    const { LeanCall } = await import('../../load/engine/lean-client.ts');
    let out: import('../../load/engine/lean-client.ts').Outcome | undefined;
    const call = new LeanCall({ seq: 0, route: 'chat', key: 'main', stream: true, path: '/', body: '{}', headers: {}, intendedAt: 0, sample: false, capped: capped as boolean }, (o) => { out = o; });
    const ctl = { abort() {}, aborted: false } as never;
    call.onRequestStart(ctl);
    call.onResponseStart(ctl, 200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    call.onResponseData(ctl, Buffer.from(`${(deltas as unknown[]).map((d) => chunk(d)).join('')}${chunk({}, 'length')}data: [DONE]\n\n`));
    call.onResponseEnd();
    expect(out!.ok).toBe(ok);
    if (!ok) expect(out).toMatchObject({ failure: 'bad_body', failureDetail: 'stream carried no content' });
  });
});
