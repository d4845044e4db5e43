// Every scenario runs against the reference and writes the reports: summary.json with
// its stable fields and units, report.html self-contained with uPlot charts; the brain
// mix reaches both brain routes; a fast wrong answer (bad body, stream without
// [DONE], deltas that are cumulative snapshots: EV-12) is a failure, not a success; a target without usage is counted in
// characters (output) and by the tokenizer (tokens), clearly labelled, never in chunks.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/run/config.ts';
import { startReferenceServer, type ReferenceOptions } from '../../reference/server.ts';
import { parseArgs, type Scenario } from '../../load/setup/options.ts';
import { executeRun, type RunOutcome } from '../../load/run.ts';
import { startReferenceProcess, type EmbeddedReference } from '../../load/setup/reference-process.ts';
import { referenceTarget, type LoadTarget } from '../../load/setup/load-target.ts';
import { StopToken } from '../../load/setup/stop.ts';
import { METRICS } from '../../load/report/metric-names.ts';

const SUMMARY_FIELDS = ['format', 'format_version', 'scenario', 'partial', 'stop_reason', 'started_at', 'finished_at', 'duration_s', 'target', 'options', 'driver', 'counts', 'status_codes', 'failures', 'failure_examples', 'latencies', 'output', 'routes', 'body_checks', 'error_answers', 'findings', 'details', 'metrics', 'timeline', 'plots', 'hdr_us', 'baseline'];

function run(target: LoadTarget, scenario: Scenario, flags: string[], outDir?: string): Promise<RunOutcome> {
  const { options } = parseArgs([scenario, '--quiet', '--warmup', '2', ...flags], {});
  return executeRun({ scenario, options, config: loadConfig({}), target, stop: new StopToken(), outDir, log: () => {} });
}

async function withReference(opts: ReferenceOptions, scenario: Scenario, flags: string[]): Promise<RunOutcome> {
  const ref = await startReferenceServer({ latency: { jsonMs: 3, ttftMs: 20, itlMs: 5 }, replyWords: 8, ...opts });
  try {
    return await run(referenceTarget(ref), scenario, flags);
  } finally {
    await ref.close();
  }
}

describe('scenarios against the embedded reference (child process)', () => {
  let ref: EmbeddedReference;
  let target: LoadTarget;
  const out = mkdtempSync(join(tmpdir(), 'chatgate-load-'));
  beforeAll(async () => {
    ref = await startReferenceProcess({ latency: { jsonMs: 5, ttftMs: 60, itlMs: 10 }, replyWords: 12 });
    target = { ...referenceTarget(ref), reference: ref };
  });
  afterAll(() => ref?.close());

  it('throughput (autocannon, closed loop) with a brain mix: figures, routes, reports', async () => {
    const dir = join(out, 'throughput');
    const o = await run(target, 'throughput', ['--connections', '4', '--duration', '2', '--brain-share', '0.2'], dir);
    const s = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
    expect(Object.keys(s)).toEqual([...SUMMARY_FIELDS, 'tokens', 'gates']); // tokens: null, autocannon reads no usage per request
    expect(s).toMatchObject({ format: 'chatgate-load-summary', format_version: 1, scenario: 'throughput', partial: false, stop_reason: 'completed' });
    expect(s.status_codes).toEqual({ 200: s.counts.ok });
    expect(s.counts.ok).toBeGreaterThan(50);
    expect(s.details.mode).toMatchObject({ kind: 'connections', engine: 'autocannon', connections: 4 });
    expect(s.body_checks.checked).toBeGreaterThanOrEqual(20);
    expect(s.body_checks.invalid).toBe(0);
    expect(Object.keys(s.routes).sort()).toEqual(['brain-model', 'brain-route', 'chat']);
    expect(s.routes['brain-route'].ok).toBeGreaterThan(0);
    expect(s.routes['brain-model'].ok).toBeGreaterThan(0);
    expect(s.latencies.latency_ms.p50_ms).toBeGreaterThan(4);
    expect(s.timeline.length).toBeGreaterThanOrEqual(2);
    expect(s.plots.percentiles.latency_ms.value_ms.length).toBeGreaterThan(10);
    expect(typeof s.hdr_us.latency).toBe('string');
    expect(s.target.reference_cpu_s).toBeGreaterThan(0);
    for (const name of Object.keys(s.metrics)) expect(Object.keys(METRICS), name).toContain(name);
    expect(s.metrics.ok_rps).toBeGreaterThan(20);
    expect(o.exitCode).toBe(0);
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html).toContain('uPlot');
    expect(html).toContain('<script type="application/json" id="data">');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\/(?!127\.0\.0\.1|github\.com\/leeoniya)/);
    expect(html).toContain('Answers per second by status');
    for (const key of Object.values(ref.keys)) {
      expect(html).not.toContain(key);
      expect(JSON.stringify(s)).not.toContain(key);
    }
  });

  it('throughput at a fixed rate: open loop by default, autocannon on request', async () => {
    const [open, ac] = await Promise.all([
      run(target, 'throughput', ['--rate', '40', '--connections', '4', '--duration', '2']),
      run(target, 'throughput', ['--rate', '40', '--connections', '4', '--duration', '2', '--rate-engine', 'autocannon']),
    ]);
    expect(open.summary.details.mode).toMatchObject({ kind: 'rate', engine: 'open-loop', rate_rps: 40, arrival: 'constant' });
    expect(open.summary.counts.sent).toBe(80);
    expect(open.summary.counts.ok).toBe(80);
    expect(ac.summary.details.mode).toMatchObject({ kind: 'rate', engine: 'autocannon', co_correction: true, expected_interval_ms: 100 });
    expect(ac.summary.counts.ok).toBeGreaterThan(50);
    for (const o of [open, ac]) expect((o.summary.details as { latency_uncorrected_ms: { count: number } }).latency_uncorrected_ms.count).toBeGreaterThan(0);
  });

  it('stream with half the requests through the brain: TTFT, ITL, E2E, usage tokens, reports', async () => {
    const dir = join(out, 'stream');
    const o = await run(target, 'stream', ['--rate', '20', '--arrival', 'constant', '--duration', '2', '--brain-share', '0.5'], dir);
    const s = o.summary;
    expect(s.counts).toMatchObject({ sent: 40, ok: 40, failed: 0 });
    expect(Object.keys(s.routes).sort()).toEqual(['brain-model', 'brain-route', 'chat']);
    expect(s.routes.chat).toMatchObject({ sent: 20, ok: 20 });
    for (const k of ['ttft_ms', 'first_event_ms', 'itl_ms', 'tpot_ms', 'e2e_ms']) expect(s.latencies[k]!.count, k).toBeGreaterThan(0);
    expect(s.output).toMatchObject({ tokens_source: 'usage', output_tokens_total: 40 * 12 });
    expect(s.metrics.output_tokens_per_s).toBeGreaterThan(0);
    expect(s.metrics.ttft_p50_ms).toBeGreaterThan(60);
    expect(s.driver?.cpu_cores).toBeGreaterThan(0);
    expect(s.details).toMatchObject({ mode: { kind: 'rate', rate_rps: 20, arrival: 'constant' } });
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html).toContain('percentile-charts');
    expect(html).toContain('"ttft_ms"');
  });

  it('stream at a fixed concurrency holds that many streams', async () => {
    const o = await run(target, 'stream', ['--concurrency', '8', '--duration', '1.5', '--ramp-up', '0.2']);
    expect(o.summary.details).toMatchObject({ mode: { kind: 'concurrency', concurrency: 8 }, peak_concurrent_streams: 8 });
    expect(o.summary.counts.ok).toBeGreaterThan(16);
  });

  it('sweep: steps, goodput, the highest step meeting the SLO, the curve', async () => {
    const dir = join(out, 'sweep');
    // A loaded shared machine's timers can be 100 ms late: a step the driver fell behind in is re-run, not judged.
    const o = await run(target, 'sweep', ['--sweep-start', '5', '--sweep-factor', '2', '--sweep-steps', '3', '--step-duration', '1', '--step-min-requests', '1', '--slo-ttft-p95-ms', '2000', '--sweep-max-driver-lag-ms', '250'], dir);
    const d = o.summary.details as { steps: Array<{ offered: number; slo_met: boolean; goodput_rps: number; valid: boolean }>; max_meeting_slo: number };
    const valid = d.steps.filter((s) => s.valid);
    expect(valid.map((s) => s.offered)).toEqual([5, 10, 20]);
    expect(valid.every((s) => s.slo_met && s.goodput_rps > 0)).toBe(true);
    expect(d.max_meeting_slo).toBe(20);
    expect(o.summary.metrics).toMatchObject({ max_rate_meeting_slo_rps: 20 });
    expect(o.summary.stop_reason).toBe('completed');
    expect(readFileSync(join(dir, 'report.html'), 'utf8')).toContain('Offered vs sent vs completed');
    expect(o.summary.details).toMatchObject({ broken_at: null, refine_steps: 0, invalid_steps: 0, resolved: false });
  });

  it('sweep: a TPOT SLO the target misses breaks the step and names itself; one it meets does not', async () => {
    // The reference sends a token every 10 ms: TPOT about 10 ms.
    const tight = await run(target, 'sweep', ['--sweep-start', '5', '--sweep-steps', '1', '--step-duration', '1', '--step-min-requests', '1', '--slo-tpot-p95-ms', '4', '--sweep-max-driver-lag-ms', '250']);
    expect(tight.summary.details).toMatchObject({ max_meeting_slo: null, broken_at: 5, bound_by: ['tpot_p95_ms'], goodput_at_max_rps: null });
    expect((tight.summary.details as { note: string }).note).toMatch(/first step \(5 req\/s\) already broke the SLO/);
    const loose = await run(target, 'sweep', ['--sweep-start', '5', '--sweep-steps', '1', '--step-duration', '1', '--step-min-requests', '1', '--slo-tpot-p95-ms', '60', '--sweep-max-driver-lag-ms', '250']);
    expect(loose.summary.details).toMatchObject({ max_meeting_slo: 5, broken_at: null, bound_by: [], slo_unjudged: [] });
    // Legal: a target that sends no usage. The tokenizer counts what arrived, so TPOT is still judged;
    // without a tokenizer it cannot be, and the report says so instead of a verdict.
    // Without canaries: the reference echoes one as the reply's first word, several tokens the tokenizer would count in one 10 ms chunk.
    const counted = await withReference({ variants: ['no-usage-chunk'] }, 'sweep', ['--no-canaries', '--sweep-start', '5', '--sweep-steps', '1', '--step-duration', '1', '--step-min-requests', '1', '--slo-tpot-p95-ms', '4', '--sweep-max-driver-lag-ms', '250']);
    expect(counted.summary.details).toMatchObject({ max_meeting_slo: null, broken_at: 5, bound_by: ['tpot_p95_ms'], slo_unjudged: [] });
    const blind = await withReference({ variants: ['no-usage-chunk'] }, 'sweep', ['--sweep-start', '5', '--sweep-steps', '1', '--step-duration', '1', '--step-min-requests', '1', '--slo-tpot-p95-ms', '4', '--sweep-max-driver-lag-ms', '250', '--tokenizer', 'none']);
    expect(blind.summary.details).toMatchObject({ max_meeting_slo: 5, broken_at: null, slo_unjudged: ['tpot_p95_ms'] });
    expect((blind.summary.details as { note: string }).note).toMatch(/not judged for lack of evidence: tpot_p95_ms/);
  });

  it('sweep: a rate limit that binds is named as 429s, not passed off as the engine\'s speed', async () => {
    const o = await withReference({ rateLimit: { main: { limit: 4, windowMs: 1000 } } }, 'sweep', ['--sweep-start', '10', '--sweep-steps', '1', '--step-duration', '1', '--step-min-requests', '1', '--warmup', '0', '--arrival', 'constant', '--sweep-max-driver-lag-ms', '250']);
    const d = o.summary.details as { bound_by: string[]; bound_by_detail: string[]; max_meeting_slo: number | null };
    expect(d.max_meeting_slo).toBeNull();
    expect(d.bound_by).toContain('error_share');
    expect(d.bound_by_detail.join(' ')).toMatch(/errors [\d.]+ % > 1\.0 % \(429: [1-9][\d.]* %, 503: 0\.0 %\)/);
  });

  it('sweep: a step in which the driver fell behind is invalid, re-run once, and never counted for or against the target', async () => {
    // The driver's own event loop blocked 120 ms of every 150 ms: its sends run late.
    const hog = setInterval(() => { const end = performance.now() + 120; while (performance.now() < end); }, 30);
    let o;
    try {
      o = await run(target, 'sweep', ['--sweep-start', '5', '--sweep-steps', '2', '--step-duration', '1', '--step-min-requests', '1', '--sweep-refine-steps', '1', '--warmup', '0']);
    } finally {
      clearInterval(hog);
    }
    const d = o.summary.details as { steps: Array<{ valid: boolean; slo_met: boolean | null; invalid_reason?: string; offered: number }>; max_meeting_slo: number | null; broken_at: number | null; note: string };
    expect(o.summary.stop_reason).toBe('driver-fell-behind');
    expect(d.steps.map((r) => [r.offered, r.valid, r.slo_met])).toEqual([[5, false, null], [5, false, null]]);
    expect(d.steps[0]!.invalid_reason).toMatch(/the driver fell behind: (schedule lag|event-loop delay) p99 [\d.]+ ms/);
    expect(d.max_meeting_slo).toBeNull();
    expect(d.broken_at).toBeNull();
    expect(d.note).toMatch(/the load driver fell behind/);
  });
});

describe('judging answers under load', () => {
  it.concurrent('a 2xx body that breaks the schema is a failure, not throughput (RES-CC-1)', async () => {
    const o = await withReference({ defect: 'cc-id-no-prefix' }, 'throughput', ['--connections', '2', '--duration', '1', '--sample-every', '1']);
    expect(o.summary.failures.bad_body).toBe(o.summary.body_checks.invalid);
    expect(o.summary.body_checks.invalid).toBeGreaterThan(10);
    expect(o.summary.counts.ok).toBe(0);
    expect(o.summary.findings[0]).toMatchObject({ clause: 'RES-CC-1', level: 'MUST', message: '2xx body breaks RES-CC-1 (a fast wrong answer is not a success)' });
    expect(o.exitCode).toBe(1);
  });

  it.concurrent('a stream without [DONE] is incomplete (EV-6)', async () => {
    const o = await withReference({ defect: 'stream-no-done' }, 'stream', ['--rate', '20', '--duration', '1']);
    expect(o.summary.failures.incomplete_stream).toBe(o.summary.counts.sent);
    expect(o.summary.findings.map((f) => f.clause)).toContain('EV-6');
    expect(o.exitCode).toBe(1);
  });

  it.concurrent('every stream whose deltas are cumulative snapshots is counted under EV-12; legal repetition is not', async () => {
    const o = await withReference({ defect: 'cumulative-deltas' }, 'stream', ['--rate', '20', '--duration', '1']);
    const ev12 = o.summary.findings.filter((f) => f.clause === 'EV-12');
    expect(ev12).toHaveLength(1);
    expect(ev12[0]).toMatchObject({ level: 'COMPAT', count: o.summary.counts.sent, message: '2xx body breaks EV-12 (a fast wrong answer is not a success)' });
    expect(ev12[0]!.example).toMatch(/the first three: "\w+", "\w+ \w+", "\w+ \w+ \w+"/);
    expect(o.summary.findings.map((f) => f.clause)).toEqual(['EV-12']);
    expect(o.summary.failures.bad_body).toBe(o.summary.counts.sent);
    expect(o.exitCode).toBe(1);
    const legal = await withReference({ variants: ['repetitive-deltas'] }, 'stream', ['--rate', '20', '--duration', '1']);
    expect(legal.summary.findings).toEqual([]);
    expect(legal.summary.counts.failed).toBe(0);
    expect(legal.exitCode).toBe(0);
  });

  it.concurrent('without usage from the target, output is counted in characters and says so', async () => {
    const o = await withReference({ variants: ['no-usage-chunk'] }, 'stream', ['--rate', '20', '--duration', '1']);
    expect(o.summary.output).toMatchObject({ tokens_source: 'characters', output_tokens_total: 0, output_tokens_per_s: null });
    expect((o.summary.output as { output_chars_total: number }).output_chars_total).toBeGreaterThan(0);
    expect((o.summary.output as { note: string }).note).toMatch(/counted in characters, not tokens\. Chunks are never counted as tokens/);
    expect(o.summary.metrics.output_tokens_per_s).toBeNull();
    // summary.tokens counts the reply text with the tokenizer instead, and says so; TPOT uses that count.
    expect((o.summary.tokens as { completion_tokens_source: Record<string, number> }).completion_tokens_source).toEqual({ usage: 0, tokenizer: o.summary.counts.ok, none: 0 });
    expect(o.summary.latencies.tpot_ms!.count).toBe(o.summary.counts.ok);
    expect(o.exitCode).toBe(0);
  });
});

describe('SVC-9 and EV-13 under load (count-bounded: --requests)', () => {
  /** A stream run at the default rate against the reference with `opts`, its console lines and its reports. */
  async function streamRun(opts: ReferenceOptions, flags: string[] = []): Promise<{ o: RunOutcome; console: string; html: string }> {
    const ref = await startReferenceServer({ latency: { jsonMs: 3, ttftMs: 20, itlMs: 5 }, replyWords: 8, ...opts });
    const dir = mkdtempSync(join(tmpdir(), 'chatgate-load-svc9-'));
    const lines: string[] = [];
    try {
      const { options } = parseArgs(['stream', '--warmup', '2', '--requests', '40', ...flags], {});
      const o = await executeRun({ scenario: 'stream', options, config: loadConfig({}), target: referenceTarget(ref), stop: new StopToken(), outDir: dir, log: (l) => lines.push(l) });
      return { o, console: lines.join('\n'), html: readFileSync(o.htmlPath!, 'utf8') };
    } finally {
      await ref.close();
    }
  }

  it.concurrent('replies swapped between concurrent requests are an SVC-9 finding (MUST, exit 1) in the console, summary.json and report.html', async () => {
    const { o, console, html } = await streamRun({ defect: 'replies-swapped-under-concurrency' });
    const svc9 = o.summary.findings.filter((f) => f.clause === 'SVC-9');
    expect(svc9.length).toBeGreaterThan(0);
    expect(svc9[0]).toMatchObject({ level: 'MUST', message: expect.stringMatching(/another request's canary/) });
    expect(svc9[0]!.example).toMatch(/request #\d+ \(main key\) got the reply of request #\d+/);
    expect(o.exitCode).toBe(1);
    expect(console).toMatch(/MUST\s+SVC-9\s+x\d+\s+a reply under concurrent load carried another request's canary/);
    expect(html).toContain('SVC-9');
    // Both requests' curl lines, keys masked, in summary.json's finding, on the console and in the page.
    expect(svc9[0]!.reproduce).toEqual([expect.stringMatching(/^this request: curl .*Bearer \*\*\*/), expect.stringMatching(/^the other: curl .*Bearer \*\*\*/)]);
    expect(console).toMatch(/\n\s+this request: curl [^\n]*\n\s+the other: curl /);
    expect(html).toMatch(/<code>this request: curl /);
    const summary = JSON.parse(readFileSync(o.summaryPath!, 'utf8'));
    expect(summary.details.cross_talk).toMatchObject({ verdict: 'judged', findings: svc9.reduce((n, f) => n + f.count, 0) });
  });

  it.concurrent('a reply cache one request behind is an SVC-9 finding by canary, though no lone reply repeats its own canary', async () => {
    const { o } = await streamRun({ defect: 'reply-of-previous-request' }, ['--requests', '20']);
    const svc9 = o.summary.findings.filter((f) => f.clause === 'SVC-9');
    expect(svc9.map((f) => f.message)).toEqual([expect.stringMatching(/another request's canary/)]);
    // Each reply is the previous request's; those whose previous ran alone are not counted (lone replies own no canary).
    expect(svc9[0]!.count).toBeGreaterThan(0);
    expect(svc9[0]!.example).toMatch(/request #(\d+) \(main key\) got the reply of request #\d+ \(main key\): the reply carries request #\d+'s canary/);
    expect(o.exitCode).toBe(1);
  });

  it.concurrent('multi-turn sessions whose replies repeat an earlier turn\'s canary (the reference repeats the first in the conversation) are no SVC-9 finding', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'chatgate-load-sessions-')), 'sharegpt.jsonl');
    const conv = (k: number) => JSON.stringify({ conversations: [1, 2, 3].flatMap((t) => [{ from: 'human', value: `Conversation ${k} question ${t}` }, { from: 'gpt', value: 'A short answer' }]) });
    writeFileSync(file, [1, 2, 3, 4].map(conv).join('\n'));
    const { o } = await streamRun({}, ['--dataset', file, '--multi-turn', '--output-tokens', '8', '--concurrency', '3', '--requests', '24']);
    expect(o.summary.findings).toEqual([]);
    expect(o.exitCode).toBe(0);
  });

  it.concurrent('the clean reference and legal variants (no echo, usage counted its own way, a fast writer) have no finding; --no-canaries says what evidence is left', async () => {
    for (const variants of [[], ['never-echoes'], ['usage-own-count'], ['fast-writer']]) {
      const { o } = await streamRun({ variants }, ['--requests', '20']);
      expect(o.summary.findings, variants.join(',')).toEqual([]);
      expect(o.exitCode).toBe(0);
      expect((o.summary.details as { cross_talk: { verdict: string } }).cross_talk.verdict).toBe('judged');
    }
    const bare = await streamRun({ variants: ['never-echoes'] }, ['--requests', '20', '--no-canaries']);
    expect((bare.o.summary.details as { cross_talk: { judged_by: { canary: number; id: number } } }).cross_talk.judged_by).toMatchObject({ canary: 0 });
  });

  it.concurrent('streams held back until their end are counted as one-burst deliveries (EV-13, SHOULD)', async () => {
    const { o } = await streamRun({ defect: 'stream-buffered-until-end', latency: { ttftMs: 20, itlMs: 30 }, replyWords: 40 }, ['--requests', '12']);
    const ev13 = o.summary.findings.filter((f) => f.clause === 'EV-13');
    expect(ev13).toHaveLength(1);
    expect(ev13[0]!.message).toMatch(/^12 of 12 long streams \(100.0 %\) delivered in one burst/);
    expect((o.summary.details as { delivery: unknown }).delivery).toMatchObject({ judged: 12, one_burst: 12, one_burst_share: 1 });
  });
});

describe('--cancel-share (count-bounded)', () => {
  it.concurrent('cancels the asked share of streams after their first token, counted apart from failures; after a cancel the swap defect is an SVC-9 finding', async () => {
    const ref = await startReferenceServer({ defect: 'replies-swapped-after-cancel', latency: { jsonMs: 3, ttftMs: 20, itlMs: 5 }, replyWords: 8 });
    try {
      const o = await run(referenceTarget(ref), 'stream', ['--requests', '30', '--cancel-share', '0.2']);
      expect(o.summary.counts).toMatchObject({ sent: 30, cancelled: 6, failed: 0 });
      expect(o.summary.counts.ok).toBe(24);
      expect(o.summary.findings.map((f) => f.clause)).toContain('SVC-9');
      expect(o.exitCode).toBe(1);
    } finally {
      await ref.close();
    }
  });
});
