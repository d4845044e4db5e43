// SVC-9 found by k6 VUs reaches the merged summary with curl lines, keys masked: the
// chat-stream-sse bundle, run in Node through the k6 stand-in (selftest/support/k6-shim.ts),
// judges swapped replies and carries the bodies as metadata on its chatgate_cross_talk
// point; those points, written as k6's `--out json` writes them (checked against k6
// v2.2.0 and k6-sse v1.3.0), and the runners' summaries go through `npm run load -- merge`.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildK6 } from '../../load/k6/build.ts';
import { canaryFor } from '../../lib/spec/rules/cross-talk.ts';
import { mergeMain, type K6Summary } from '../../load/report/merge.ts';
import type { LoadSummary } from '../../load/report/summary.ts';
import { loadBundle, type ShimSseCall, type Sample } from '../support/k6-shim.ts';
import { MAX_WITNESSED, WITNESS_KEY } from '../../load/k6/lib/witness.ts';

const KEY = 'sk-crosstalk-secret-0123456789';
const ENV = { TARGET_URL: 'http://127.0.0.1:9/v1', API_KEY: KEY, MODELS: 'svc' };
const PER_VU = 1048576;

let work: string;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'chatgate-k6-cross-talk-'));
  await buildK6({ outdir: join(work, 'dist'), scripts: ['chat-stream-sse'] });
});
afterAll(() => rmSync(work, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const chunk = (id: string, delta: Record<string, unknown>, finish: string | null = null) => JSON.stringify({
  id, object: 'chat.completion.chunk', created: 1, model: 'svc', choices: [{ index: 0, delta, finish_reason: finish }],
});
/** A stream whose reply says `text`, under completion id `id`. */
const reply = (text: string, id: string): ShimSseCall[] => [
  { event: { data: chunk(id, { role: 'assistant', content: '' }) }, at: 10 },
  { event: { data: chunk(id, { content: text }) }, at: 20 },
  { event: { data: chunk(id, {}, 'stop') }, at: 30 },
  { event: { data: '[DONE]' }, at: 30 },
];

/** One VU of chat-stream-sse running `replies` (one per iteration); its samples. */
function vu(idInTest: number, replies: Array<(seq: number) => ShimSseCall[]>, env: Record<string, string> = ENV): Sample[] {
  let clock = 0;
  vi.spyOn(Date, 'now').mockImplementation(() => clock);
  const { exports, shim } = loadBundle(join(work, 'dist', 'chat-stream-sse.js'), env);
  shim.vu.idInTest = idInTest;
  shim.onSseAt = (at) => { clock = at; };
  replies.forEach((r, i) => {
    shim.vu.iterationInScenario = i;
    shim.sse = () => ({ status: 200, headers: { 'content-type': 'text/event-stream' }, calls: r(idInTest * PER_VU + i) });
    exports.default();
  });
  vi.restoreAllMocks();
  return shim.samples;
}

/** The samples as k6's `--out json` writes them (metadata beside the tags). */
const asPoints = (samples: Sample[]) => samples.map((s) => JSON.stringify({ metric: s.metric, type: 'Point', data: { time: '2026-11-28T12:00:00Z', value: s.value, tags: s.tags, ...(s.metadata ? { metadata: s.metadata } : {}) } })).join('\n');

/** A runner's summary as far as the merge reads it: the SVC-9 count and its crossed threshold. */
function summary(i: number, n: number, crossTalk: number, more: { headers?: string; ok?: number; proxy?: Record<string, string>; target?: string } = {}): K6Summary {
  const target = more.target ?? ENV.TARGET_URL;
  const seq = ['0', ...Array.from({ length: n - 1 }, (_, k) => `${k + 1}/${n}`), '1'];
  return {
    tool: 'chatgate-k6', format_version: 2, script: 'chat-stream-sse',
    identity: { test_id: 'x', script: 'chat-stream-sse', segment: `${seq[i - 1]}:${seq[i]}`, segment_sequence: seq.join(','), runner: i, runners: n, settings: { env: { TARGET_URL: target, ...(more.headers ? { HEADERS: more.headers } : {}) } } },
    target, durationMs: 1000, result: crossTalk ? 'fail' : 'pass',
    thresholds: [{ metric: 'chatgate_cross_talk', expression: 'count<1', ok: crossTalk < 1, judged: true }],
    warnings: [], checks: [],
    metrics: {
      chatgate_cross_talk: { type: 'counter', contains: 'default', values: { count: crossTalk, rate: crossTalk } },
      ...(more.ok ? { streams_ok: { type: 'counter', contains: 'default', values: { count: more.ok, rate: more.ok } } } : {}),
    },
    distributions: {},
    ...(more.proxy ? { proxy_env: more.proxy } : {}),
  };
}

function merge(dir: string): { code: number; out: string; files: Record<string, string> } {
  const lines: string[] = [];
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const code = mergeMain([dir, '--out', join(dir, 'out')], {}, (l) => lines.push(l));
  err.mockRestore();
  const files = Object.fromEntries(readdirSync(join(dir, 'out')).map((f) => [f, readFileSync(join(dir, 'out', f), 'utf8')]));
  return { code, out: lines.join('\n'), files };
}

const svc9 = (files: Record<string, string>) => (JSON.parse(files['summary.json']!) as LoadSummary).findings.find((f) => f.clause === 'SVC-9');

describe('k6 SVC-9 findings carry curl lines into the merge', () => {
  it('a swap between two runners\' VUs: both requests\' curl lines, each its own exact body, the key masked', () => {
    const a = 7 * PER_VU;
    const b = 8 * PER_VU;
    // VU 7 (runner 1) gets VU 8's reply and VU 8 (runner 2) gets VU 7's: a swap.
    const r1 = vu(7, [() => reply(`Begin: ${canaryFor(b, 1)} hello`, 'chatcmpl-b')]);
    const r2 = vu(8, [() => reply(`Begin: ${canaryFor(a, 1)} hello`, 'chatcmpl-a')]);
    const found = r1.filter((s) => s.metric === 'chatgate_cross_talk');
    expect(found.map((s) => s.value)).toEqual([1]);
    const w = JSON.parse(String(found[0]!.metadata![WITNESS_KEY])) as { why: string; body: string; other_canary: string };
    expect(w.other_canary).toBe(canaryFor(b, 1));
    expect(w.body).toContain(`(request ${a}, code ${canaryFor(a, 1)})`);
    expect(JSON.stringify(r1)).not.toContain(KEY);

    const dir = join(work, 'swap');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'r1-summary.json'), JSON.stringify(summary(1, 2, 1)));
    writeFileSync(join(dir, 'r2-summary.json'), JSON.stringify(summary(2, 2, 1)));
    writeFileSync(join(dir, 'r1.ndjson'), asPoints(r1));
    writeFileSync(join(dir, 'r2.ndjson'), asPoints(r2));
    const m = merge(dir);
    expect(m.code).toBe(99);
    const f = svc9(m.files)!;
    expect(f).toMatchObject({ level: 'MUST', count: 2 });
    expect(f.example).toMatch(/another request's canary CG\w{10}, not its own/);
    expect(f.reproduce).toHaveLength(2);
    const [mine, other] = f.reproduce!;
    expect(mine).toMatch(/^this request: curl .* -N -X POST 'http:\/\/127\.0\.0\.1:9\/v1\/chat\/completions' .*-H 'Authorization: Bearer \*\*\*'/);
    expect(other).toMatch(/^the other \(whose canary the reply carried\): curl /);
    // Each line holds its own request's body: the pair is the two requests of the swap.
    const pair = [mine, other].map((l) => /\(request (\d+), code/.exec(l!)?.[1]);
    expect(new Set(pair)).toEqual(new Set([String(a), String(b)]));
    for (const [name, text] of Object.entries(m.files)) expect(text, name).not.toContain(KEY);
    expect(m.files['report.html']).toContain('Authorization: Bearer ***');
    expect(m.out).toMatch(/SVC-9 \(MUST\): 2 replies were another request's; curl lines in summary\.json and report\.html/);
  });

  it('a repeated id in one VU: the earlier request\'s body; a canary from a VU without its own output: the other body rebuilt and said so', () => {
    const learn = (id: string) => (seq: number) => reply(`Begin: ${canaryFor(seq, 1)} hi`, id);
    // Three distinct ids teach that the target gives each reply its own; the fourth repeats the second.
    const samples = vu(3, [learn('c1'), learn('c2'), learn('c3'), learn('c2'), (seq) => reply(`Begin: ${canaryFor(seq + 5, 1)}`, 'c9')]);
    expect(samples.filter((s) => s.metric === 'chatgate_cross_talk').map((s) => s.value)).toEqual([0, 0, 0, 1, 1]);
    const dir = join(work, 'repeat');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'r1-summary.json'), JSON.stringify(summary(1, 1, 2)));
    writeFileSync(join(dir, 'r1.ndjson'), asPoints(samples));
    const f = svc9(merge(dir).files)!;
    expect(f.example).toMatch(/completion id c2, as an earlier reply of this VU did/);
    expect(f.reproduce![0]).toContain(`(request ${3 * PER_VU + 3}, code`);
    expect(f.reproduce![1]).toMatch(new RegExp(`^the other \\(an earlier request of the same VU.*\\(request ${3 * PER_VU + 1}, code`));

    const only = join(work, 'rebuilt');
    mkdirSync(only, { recursive: true });
    writeFileSync(join(only, 'r1-summary.json'), JSON.stringify(summary(1, 1, 1)));
    writeFileSync(join(only, 'r1.ndjson'), asPoints(samples.filter((s) => s.metadata && String(s.metadata[WITNESS_KEY]).includes('other_canary'))));
    const g = svc9(merge(only).files)!;
    const seq = 3 * PER_VU + 4 + 5;
    expect(g.reproduce![1]).toMatch(new RegExp(`^the other \\(request ${seq}, whose canary the reply carried; its body rebuilt .*\\(request ${seq}, code ${canaryFor(seq, 1)}\\)`));
  });

  it(`a VU carries the bodies of its first ${MAX_WITNESSED} findings only; without the runners' outputs the finding says how to get curl lines`, () => {
    const swapped = (seq: number) => reply(`Begin: ${canaryFor(seq + 1, 1)}`, `id-${seq}`);
    const samples = vu(5, Array.from({ length: MAX_WITNESSED + 2 }, () => swapped));
    const found = samples.filter((s) => s.metric === 'chatgate_cross_talk');
    expect(found.map((s) => s.value)).toEqual(Array(MAX_WITNESSED + 2).fill(1));
    expect(found.filter((s) => s.metadata).length).toBe(MAX_WITNESSED);
    // The metadata is unset again after each finding: no other metric carries it.
    expect(samples.filter((s) => s.metadata && s.metric !== 'chatgate_cross_talk')).toEqual([]);

    const dir = join(work, 'no-outputs');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'r1-summary.json'), JSON.stringify(summary(1, 1, 4)));
    const f = svc9(merge(dir).files)!;
    expect(f.count).toBe(4);
    expect(f.reproduce).toBeUndefined();
    expect(f.example).toMatch(/no curl lines: give the merge each runner's --out json output/);
  });

  it('the run\'s HEADERS ride on both curl lines with every secret value masked, and the merging shell\'s own HEADERS do not', () => {
    const GATEWAY = 'pk-gateway-secret-0123456789';
    const CF = 'cf-access-secret-abcdefgh';
    const HEADERS = `x-portkey-provider: openai\nx-portkey-api-key: ${GATEWAY}\nCF-Access-Client-Secret: ${CF}`;
    const env = { ...ENV, HEADERS };
    const a = 7 * PER_VU;
    const b = 8 * PER_VU;
    const r1 = vu(7, [() => reply(`Begin: ${canaryFor(b, 1)} hello`, 'chatcmpl-b')], env);
    const r2 = vu(8, [() => reply(`Begin: ${canaryFor(a, 1)} hello`, 'chatcmpl-a')], env);
    // Witnesses carry bodies only: no key, no header value.
    for (const secret of [KEY, GATEWAY, CF]) expect(JSON.stringify([r1, r2])).not.toContain(secret);
    // As the scripts record HEADERS in a summary's settings: secret values redacted (load/k6/lib/config.ts redact()).
    const recorded = HEADERS.split(GATEWAY).join('[redacted]').split(CF).join('[redacted]');
    const dir = join(work, 'headers');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'r1-summary.json'), JSON.stringify(summary(1, 2, 1, { headers: recorded })));
    writeFileSync(join(dir, 'r2-summary.json'), JSON.stringify(summary(2, 2, 1, { headers: recorded })));
    writeFileSync(join(dir, 'r1.ndjson'), asPoints(r1));
    writeFileSync(join(dir, 'r2.ndjson'), asPoints(r2));
    vi.stubEnv('HEADERS', 'x-merge-shell: 1');
    const m = merge(dir);
    vi.unstubAllEnvs();
    const f = svc9(m.files)!;
    expect(f.reproduce).toHaveLength(2);
    for (const line of f.reproduce!) {
      expect(line).toContain(`-H 'x-portkey-provider: openai' -H 'x-portkey-api-key: ***' -H 'cf-access-client-secret: ***' -H 'Authorization: Bearer ***'`);
      expect(line).not.toContain('x-merge-shell');
    }
    for (const secret of [KEY, GATEWAY, CF]) {
      for (const [name, text] of Object.entries(m.files)) expect(text, name).not.toContain(secret);
      expect(m.out).not.toContain(secret);
    }
    expect(m.files['report.html']).toContain('x-portkey-api-key: ***');
  });

  it('the ok card says how many of the ok replies were another request\'s (SVC-9), as a Node run counts them ok too', () => {
    const dir = join(work, 'card');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'r1-summary.json'), JSON.stringify(summary(1, 2, 40, { ok: 50 })));
    writeFileSync(join(dir, 'r2-summary.json'), JSON.stringify(summary(2, 2, 1, { ok: 51 })));
    const m = merge(dir);
    const s = JSON.parse(m.files['summary.json']!) as LoadSummary;
    expect(s.counts).toMatchObject({ sent: 101, ok: 101 });
    expect(m.files['report.html']).toMatch(/<b>101 \/ 101<\/b><span>ok \/ sent<\/span><span class="lvl-MUST card-bad">of the ok, 41 were another request's reply \(SVC-9\)<\/span>/);
    // The Requests table's ok says the same, from the same count.
    expect(m.files['report.html']).toMatch(/<h2>Requests<\/h2>\s*<table>.*<tr><td>ok<\/td><td class="txt">101 <span class="lvl-MUST">of the ok, 41 were another request's reply \(SVC-9\)<\/span><\/td><\/tr>/);
  });

  it('the curl lines go through the runners\' proxy as their summaries recorded it, not the merging shell\'s; without a record, the finding says whose proxy it is', () => {
    const a = 7 * PER_VU;
    const b = 8 * PER_VU;
    const r1 = vu(7, [() => reply(`Begin: ${canaryFor(b, 1)} hello`, 'chatcmpl-b')]);
    const r2 = vu(8, [() => reply(`Begin: ${canaryFor(a, 1)} hello`, 'chatcmpl-a')]);
    const run = (name: string, proxy?: Record<string, string>, target = 'http://api.staging.example:9/v1') => {
      const dir = join(work, name);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'r1-summary.json'), JSON.stringify(summary(1, 2, 1, { proxy, target })));
      writeFileSync(join(dir, 'r2-summary.json'), JSON.stringify(summary(2, 2, 1, { proxy, target })));
      writeFileSync(join(dir, 'r1.ndjson'), asPoints(r1));
      writeFileSync(join(dir, 'r2.ndjson'), asPoints(r2));
      vi.stubEnv('HTTP_PROXY', 'http://shell-proxy.example:8888');
      const m = merge(dir);
      vi.unstubAllEnvs();
      return svc9(m.files)!;
    };
    // As a runner records it (load/k6/lib/config.ts proxySetting): the password masked; k6 (Go) lets the upper-case name win.
    const theirs = run('proxy-theirs', { HTTP_PROXY: 'http://alice:***@runner-proxy.example:3128', http_proxy: 'http://not-used.example:1' });
    expect(theirs.reproduce).toHaveLength(2);
    for (const line of theirs.reproduce!) {
      expect(line).toContain(`--proxy 'http://alice:***@runner-proxy.example:3128/' --proxytunnel`);
      expect(line).not.toContain('shell-proxy');
    }
    expect(theirs.example).not.toMatch(/proxy/);
    // Runners that went direct recorded {}: no --proxy, whatever the merging shell has; k6 sends to loopback direct whatever the proxy.
    for (const line of run('proxy-direct', {}).reproduce!) expect(line).not.toContain('--proxy');
    for (const line of run('proxy-loopback', { HTTP_PROXY: 'http://runner-proxy.example:3128' }, ENV.TARGET_URL).reproduce!) expect(line).not.toContain('--proxy');
    // Summaries without the record: the shell's proxy, said so.
    const unknown = run('proxy-unknown');
    for (const line of unknown.reproduce!) expect(line).toContain(`--proxy 'http://shell-proxy.example:8888/'`);
    expect(unknown.example).toMatch(/the runners' summaries do not record their proxy .*: the --proxy of these lines, if any, is the merging shell's/);
  });

  it('the merged page names the failed clause in its banner, shows the k6 thresholds as a table, no driver figures it never measured, and each curl line as its own block', () => {
    const dir = join(work, 'page');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'r1-summary.json'), JSON.stringify(summary(1, 2, 3, { ok: 10 })));
    writeFileSync(join(dir, 'r2-summary.json'), JSON.stringify(summary(2, 2, 0, { ok: 10 })));
    const html = merge(dir).files['report.html']!;
    expect(html).toMatch(/<div class="banner fail"><b>1 MUST-level finding: SVC-9<\/b> \(<a href="#findings">Findings<\/a>\)/);
    expect(html).toContain('<h2 id="findings">');
    // The threshold crossed on the whole test, with each runner's own verdict beside it.
    expect(html).toMatch(/<tr><td><code>chatgate_cross_talk<\/code><\/td><td><code>count&lt;1<\/code><\/td><td class="lvl-MUST">✗<\/td><td>[^<]*<\/td><td>✗✓<\/td><\/tr>/);
    expect(html).not.toContain('<h2>Run details</h2>');
    expect(html).toMatch(/<h2>The driver<\/h2>\s*<p class="help"[^>]*>Not measured/);
    expect(html).not.toContain('<td>cpu_user_s</td>');
    expect(html).toContain('<table class="findings">');
    expect(html).toMatch(/\.findings code\{display:block;[^}]*white-space:pre-wrap/);
  });
});
