// A rehearsal's per-slice counts (load/report/slices.ts, drawn by rehearsal-html.ts): every
// count of a slice's requests is by their intended send time, so none exceeds `sent`; the
// one count by finish time is named so (finished_ok); each adds up to the run's total;
// slices start with the plan's first arrival, not before the unmeasured requests ahead of it,
// and so do a stream run's send-time axis and requests.jsonl's offsets.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../load/run.ts';
import { SLICE_CSV_COLUMNS, SliceRecorder, slicesCsv, type SliceRow } from '../../load/report/slices.ts';
import { classifyLoss } from '../../load/report/damage.ts';
import { rehearsalSection, requestSeries } from '../../load/report/rehearsal-html.ts';
import type { LoadSummary } from '../../load/report/summary.ts';
import { GapTally } from '../../load/engine/histogram.ts';
import type { Outcome } from '../../load/engine/lean-client.ts';

function outcome(p: Partial<Outcome>): Outcome {
  return { seq: 0, route: 'chat', key: 'main', stream: true, intendedAt: 0, sentAt: 0, endAt: 0, contentChunks: 0, tokenEvents: 0, outputChars: 0, gaps: new GapTally(), events: 0, ok: false, schemaChecked: false, ...p };
}
const ERROR_BODY = JSON.stringify({ error: { message: 'overloaded', type: 'server_error', code: 'overloaded' } });

/** A load run through the CLI's entry, its output kept off the test's console; `out` is its report folder. */
async function quietMain(prefix: string, args: string[]): Promise<{ out: string; code: number }> {
  const out = mkdtempSync(join(tmpdir(), prefix));
  const quiet = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const quietOut = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  try {
    return { out, code: await main([...args, '--out', out], {}) };
  } finally {
    quiet.mockRestore();
    quietOut.mockRestore();
  }
}

/** Slices of 1 s: four streams due in slice 0 end in slice 1, beside slice 1's own two (one shed); slice 2 has one ok and one cut by the run's end. */
function run(): SliceRow[] {
  const r = new SliceRecorder(0, 1000, { ttftP95Ms: 500, errorShare: 0.01 }, 500);
  const ok = (at: number, end: number) => {
    r.sent(at);
    r.outcome(outcome({ ok: true, status: 200, intendedAt: at, sentAt: at, firstContentAt: at + 50, endAt: end, usageTokens: 10 }), undefined);
  };
  for (const at of [100, 200, 300, 400]) ok(at, 1500);
  ok(1100, 1300);
  r.sent(1200);
  const shed = outcome({ status: 503, headers: { 'content-type': 'application/json' }, errorBody: ERROR_BODY, intendedAt: 1200, sentAt: 1200, endAt: 1210, failure: 'other' });
  r.outcome(shed, classifyLoss(shed));
  ok(2100, 2400);
  r.sent(2200);
  r.outcome(outcome({ intendedAt: 2200, sentAt: 2200, endAt: 2600, failure: 'aborted' }), undefined);
  return r.rows(() => 4, () => 'hold', []);
}

/** Columns that are not counts of the slice's own requests: its span, rates, latencies, state at its end, and finish-time counts (named finished_). */
const NOT_OF_SENT = /^(slice|t_start_s|t_end_s|offered_rps|not_sent|in_flight|error_share|output_tokens_per_s)$|_ms$|^finished_/;

describe('per-slice counts', () => {
  it('every count of a slice\'s requests is at most what was sent in it; the finish-time count says so in its name', () => {
    const rows = run();
    for (const row of rows) {
      for (const c of SLICE_CSV_COLUMNS) {
        const v = (row as unknown as Record<string, unknown>)[c];
        if (typeof v === 'number' && !NOT_OF_SENT.test(c)) expect(v, `slice ${row.slice}: ${c} (${v}) of ${row.sent} sent`).toBeLessThanOrEqual(row.sent);
      }
    }
    // Slice 1 served more than it was sent: only under the finish-time name.
    expect(rows.map((r) => [r.sent, r.ok, r.finished_ok])).toEqual([[4, 4, 0], [2, 1, 5], [2, 1, 1]]);
  });

  it('the slices add up to the run: sent, ok (by due time) and finished ok (by end time) each to its total', () => {
    const rows = run();
    const sum = (k: 'sent' | 'ok' | 'finished_ok') => rows.reduce((a, r) => a + r[k], 0);
    expect([sum('sent'), sum('ok'), sum('finished_ok')]).toEqual([8, 6, 6]);
  });

  it('the CSV header and the chart legend name what each count is', () => {
    const rows = run();
    const header = slicesCsv(rows).split('\n')[0]!.split(',');
    expect(header).toEqual(expect.arrayContaining(['sent', 'ok', 'finished_ok']));
    expect(header).not.toContain('completed');
    const series = requestSeries(rows);
    expect(series.map((s) => s.label)).toEqual(['sent (due in the slice)', 'ok (of those sent)', 'streams cut (of those sent)', "in flight at the slice's end"]);
    // A line named by the slice's own requests never rises above sent.
    for (const s of series.filter((x) => /due in the slice|of those sent/.test(x.label))) {
      s.pts.forEach((p, i) => expect(p.y!, `${s.label} at slice ${i}`).toBeLessThanOrEqual(rows[i]!.sent));
    }
  });
});

describe('the rehearsal page', () => {
  it('marks the plan\'s end (past it every count drops) and lists the lost answers by send time', () => {
    const lost = (at: number) => ({ sent_at_s: at, class: 'stream_cut', clause: 'EV-6', detail: `cut at ${at}`, curl: null });
    const summary = {
      details: { rehearsal: { phases: [{ phase: 'hold 2s', start_s: 0, duration_s: 2 }], slice_s: 1, slo: { ttft_p95_ms: 500, error_share: 0.01 }, marks: [], command: null, damage: { graceful: false, verdict: 'v' }, lost_examples: [lost(1.5), lost(0.25), lost(1.25)] } },
      plots: { extra: { slices: run() } },
    } as unknown as LoadSummary;
    const html = rehearsalSection(summary);
    expect(html.match(/>phases end \(drain\)</g)).toHaveLength(4);
    expect([...html.matchAll(/cut at ([\d.]+)/g)].map((m) => Number(m[1]))).toEqual([0.25, 1.25, 1.5]);
  });
});

describe('the slices\' clock', () => {
  it('starts with the plan: a slow target\'s lone requests before it (about 1 s here) do not push arrivals into later slices', async () => {
    // 10 req/s at fixed spacing for 2 s: 10 arrivals due in each 1 s slice; each lone request takes 300 ms or more.
    const { out, code } = await quietMain('chatgate-slice-clock-', ['stream', '--phases', 'hold 2s at 10', '--arrival', 'constant', '--slice', '1s', '--ref-ttft-ms', '300', '--ref-itl-ms', '5', '--max-tokens', '4']);
    expect(code).toBe(0);
    const rows = (JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')).plots.extra.slices as SliceRow[]);
    expect(rows.map((r) => r.sent)).toEqual([10, 10, ...rows.slice(2).map(() => 0)]);
  }, 30_000);
});

describe('the sweep step\'s settle window', () => {
  it('starts on the driver\'s clock: the lone requests before it (about 1 s here) do not eat the settle, so its first requests stay out of the latency samples', async () => {
    // One step of 3 s at 10 req/s, fixed spacing: its settle is the first 0.3 s (3 arrivals); each lone request takes 300 ms or more.
    const { out } = await quietMain('chatgate-sweep-clock-', ['sweep', '--sweep-start', '10', '--sweep-steps', '1', '--step-duration', '3', '--step-min-requests', '1', '--arrival', 'constant', '--slo-ttft-p95-ms', '5000',
      '--ref-ttft-ms', '300', '--ref-itl-ms', '5', '--max-tokens', '4', '--sweep-max-driver-lag-ms', '1000']);
    const step = (JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')).details.steps as Array<{ sent: number; samples: number }>)[0]!;
    // Timed from before the lone requests, the settle had passed before the first arrival: every answer was a sample.
    expect(step.sent).toBe(30);
    expect(step.samples).toBeGreaterThanOrEqual(26);
    expect(step.samples).toBeLessThanOrEqual(28);
  }, 30_000);
});

describe('a stream run\'s clock', () => {
  it('starts on the driver\'s clock: the report\'s send-time axis and requests.jsonl\'s intended_ms begin at the first arrival, not before the lone requests (about 1 s here)', async () => {
    // 10 req/s at fixed spacing for 2 s; each lone request takes 300 ms or more.
    const { out, code } = await quietMain('chatgate-stream-clock-', ['stream', '--rate', '10', '--arrival', 'constant', '--duration', '2', '--ref-ttft-ms', '300', '--ref-itl-ms', '5', '--max-tokens', '4']);
    expect(code).toBe(0);
    const lines = readFileSync(join(out, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { seq: number; intended_ms: number });
    const intended = lines.map((l) => l.intended_ms).sort((a, b) => a - b);
    expect(intended).toHaveLength(20);
    // Arrival k is due at k x 100 ms of the driver's clock; from before the lone requests it was 900 ms or more later.
    expect(intended[0]).toBeGreaterThanOrEqual(0);
    expect(intended[0]).toBeLessThan(50);
    expect(intended[19]! - intended[0]!).toBeCloseTo(1900, -1);
    const points = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')).plots.extra.requests.points as Array<[number, ...unknown[]]>;
    expect(Math.min(...points.map((p) => p[0]))).toBeLessThan(0.05);
  }, 30_000);
});
