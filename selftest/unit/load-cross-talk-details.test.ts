// A load run's SVC-9 finding names both requests: which key each was sent with, and a curl
// line for each (keys masked), in summary.json's finding, on the console and in report.html.
// The watch (load/engine/cross-talk-watch.ts) keeps the requests in flight and the last ones
// answered, so a reply showing another's canary or a recent id gets both lines while they
// are at hand. Outcomes made up in memory: no request leaves the process.
import { describe, expect, it } from 'vitest';
import { CrossTalkWatch, MAX_REPRODUCED } from '../../load/engine/cross-talk-watch.ts';
import type { LeanRequest, Outcome } from '../../load/engine/lean-client.ts';
import { Findings } from '../../load/report/findings.ts';
import { renderConsoleSummary } from '../../load/report/console.ts';
import { renderHtml } from '../../load/report/report-html.ts';
import type { LoadSummary } from '../../load/report/summary.ts';
import { toCurl } from '../../lib/http/curl.ts';
import { canaryFor } from '../../lib/spec/rules/cross-talk.ts';

const KEY = 'sk-load-cross-talk-secret-7d1e0c';
const canary = (seq: number) => canaryFor(seq, 7);

function request(seq: number, key: string): LeanRequest {
  return {
    seq, route: 'chat', key, stream: false, path: '/v1/chat/completions', intendedAt: 0, sample: false,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body: JSON.stringify({ model: 'svc-auto', messages: [{ role: 'user', content: `Say hello (request ${seq}, code ${canary(seq)})` }] }),
    work: { promptTokens: 10 + seq, canary: canary(seq) },
  } as unknown as LeanRequest;
}

/** An answered request: its reply carries `replyOf`'s canary, prompt count and id. */
function outcome(seq: number, key: string, at: [number, number], replyOf = seq): Outcome {
  return {
    seq, route: 'chat', key, stream: false, intendedAt: at[0], sentAt: at[0], endAt: at[1], ok: true, status: 200,
    contentChunks: 0, tokenEvents: 1, outputChars: 20,
    replyHead: `${canary(replyOf)} hello there`, completionId: `chatcmpl-${replyOf}`, usagePromptTokens: 13 + replyOf,
    work: { promptTokens: 10 + seq, canary: canary(seq) },
  } as unknown as Outcome;
}

/** Three requests alone, then four at once where 11 (main key) and 13 (bystander key) got each other's replies. */
function run(curls = true): Findings {
  const watch = new CrossTalkWatch(curls ? (req) => toCurl({ method: 'POST', url: `http://127.0.0.1:9${req.path}`, headers: req.headers, body: req.body }) : undefined);
  const findings = new Findings();
  for (const seq of [1, 2, 3]) {
    watch.sent(request(seq, 'main'));
    watch.add(outcome(seq, 'main', [seq * 100, seq * 100 + 10]));
  }
  const busy: Array<[number, string, number]> = [[10, 'main', 10], [11, 'main', 13], [12, 'main', 12], [13, 'bystander', 11]];
  for (const [seq, key] of busy) watch.sent(request(seq, key));
  for (const [seq, key, replyOf] of busy) watch.add(outcome(seq, key, [1000 + seq, 1100], replyOf));
  watch.finish(findings);
  return findings;
}

function summary(findings: Findings): LoadSummary {
  return {
    format: 'chatgate-load-summary', format_version: 1, scenario: 'stream', partial: false, stop_reason: 'requests', started_at: '', finished_at: '', duration_s: 1,
    target: { url: 'http://127.0.0.1:9/v1', kind: 'remote' }, options: {},
    driver: { cpu_user_s: 0, cpu_system_s: 0, cpu_cores: 0, event_loop_utilization: 0, event_loop_delay_p99_ms: 0, max_rss_mib: 0, node_version: 'v20', schedule_lag_p99_ms: 0 },
    counts: { sent: 7, not_sent: 0, responses: 7, ok: 7, failed: 0, aborted_at_stop: 0 }, status_codes: { 200: 7 }, failures: {}, failure_examples: [],
    latencies: {}, output: null, routes: {}, body_checks: { checked: 0, invalid: 0 }, error_answers: { checked: 0, improper: 0 },
    findings: findings.list(), details: {}, metrics: {}, timeline: [], plots: { percentiles: {}, buckets: {}, extra: {} }, hdr_us: {}, baseline: null,
  } as unknown as LoadSummary;
}

describe('a load run\'s cross-talk finding names both requests', () => {
  it('the finding (summary.json) carries both keys and both curl lines, keys masked', () => {
    const list = run().list().filter((f) => f.clause === 'SVC-9');
    const byCanary = list.find((f) => /canary/.test(f.message))!;
    expect(byCanary).toMatchObject({ level: 'MUST', count: 2 });
    expect(byCanary.example).toMatch(/^request #11 \(main key\) got the reply of request #13 \(bystander key\)/);
    expect(byCanary.reproduce).toHaveLength(2);
    expect(byCanary.reproduce![0]).toMatch(/^this request: curl .*'authorization: Bearer \*\*\*'.*request 11, code /);
    expect(byCanary.reproduce![1]).toMatch(/^the other: curl .*request 13, code /);
    const all = JSON.stringify(list);
    expect(all).not.toContain(KEY);
  });

  it('the console and report.html show them', () => {
    const s = summary(run());
    const consoleText = renderConsoleSummary(s);
    expect(consoleText).toMatch(/MUST\s+SVC-9\s+x2\s+a reply under concurrent load carried another request's canary\n\s+request #11 \(main key\) got the reply of request #13 \(bystander key\)[^\n]*\n\s+this request: curl [^\n]*request 11[^\n]*\n\s+the other: curl [^\n]*request 13/);
    const html = renderHtml(s);
    expect(html).toMatch(/<code>this request: curl [^<]*request 11/);
    expect(html).toMatch(/<code>the other: curl [^<]*request 13/);
    for (const text of [consoleText, html]) expect(text).not.toContain(KEY);
  });

  it('without a curl builder, or past the first few, a finding still names both requests and keys', () => {
    const f = run(false).list().find((x) => x.clause === 'SVC-9')!;
    expect(f.reproduce).toBeUndefined();
    expect(f.example).toMatch(/\(main key\) got the reply of request #\d+ \((main|bystander) key\)/);
    expect(MAX_REPRODUCED).toBeGreaterThan(0);
  });
});
