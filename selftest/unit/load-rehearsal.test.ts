// The parts of a rehearsal that need no target: the phase syntax (and its one-line
// errors, exit 2), the arrivals that follow the phases, the caps, how a lost request is
// classified (graceful or not, by the shared rules), the damage and recovery arithmetic,
// the slices and their CSV, and the change runner (its command's output masked, marks
// from SIGUSR2, what it started stopped with it). Cost: a few seconds.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { parseArgs, UsageError } from '../../load/setup/options.ts';
import { parsePhases, phasedOffsets, rateAt, readCapacity, resolveRehearsal } from '../../load/setup/phases.ts';
import { checkCaps, planFor } from '../../load/setup/safety.ts';
import { assessDamage, classifyLoss, LostRequests, type LossTally, type SliceVerdict } from '../../load/report/damage.ts';
import { Findings } from '../../load/report/findings.ts';
import { Recorder } from '../../load/engine/recorder.ts';
import { SliceRecorder, slicesCsv } from '../../load/report/slices.ts';
import { ChangeRunner } from '../../load/setup/change.ts';
import { GapTally, LatencyHistogram } from '../../load/engine/histogram.ts';
import type { Outcome } from '../../load/engine/lean-client.ts';
import { addSecret } from '../../lib/run/redact.ts';
import { main } from '../../load/run.ts';

const tmp = mkdtempSync(join(tmpdir(), 'chatgate-rehearsal-unit-'));

function outcome(p: Partial<Outcome>): Outcome {
  return { seq: 0, route: 'chat', key: 'main', stream: true, intendedAt: 0, sentAt: 0, endAt: 0, contentChunks: 0, tokenEvents: 0, outputChars: 0, gaps: new GapTally(), events: 0, ok: false, schemaChecked: false, ...p };
}

const ERROR_BODY = JSON.stringify({ error: { message: 'overloaded', type: 'server_error', code: 'overloaded' } });

describe('phases', () => {
  it('reads ramps and holds, rates in req/s or a share of the capacity', () => {
    const p = parsePhases('ramp 30s to 70%, hold 300s', { rps: 10, source: 'test' });
    expect(p.phases.map((x) => [x.kind, x.startS, x.durationS, x.fromRps, x.toRps])).toEqual([['ramp', 0, 30, 0, 7], ['hold', 30, 300, 7, 7]]);
    expect(p.totalS).toBe(330);
    expect(p.peakRps).toBe(7);
    expect(rateAt(p, 15)).toBeCloseTo(3.5);
    const q = parsePhases('hold 1m at 5rps; ramp 500ms to 8; hold 2s');
    expect(q.phases.map((x) => x.toRps)).toEqual([5, 8, 8]);
    expect(q.totalS).toBeCloseTo(62.5);
  });

  it('bad syntax is one line naming the part and the form', () => {
    for (const bad of ['jump 3s', 'ramp to 5', 'ramp 3x to 5', 'hold 10s', 'ramp 3s to fast', 'hold 0s at 3', '', 'ramp 2s to 0']) {
      let err: unknown;
      try { parsePhases(bad); } catch (e) { err = e; }
      expect(err, bad).toBeInstanceOf(UsageError);
      expect((err as Error).message, bad).not.toContain('\n');
      expect((err as Error).message).toMatch(/^--phases/);
    }
    expect(() => parsePhases('ramp 5s to 70%')).toThrow(/--capacity/);
  });

  it('reads a plan file and a sweep summary.json', () => {
    const plan = join(tmp, 'plan.txt');
    writeFileSync(plan, '# warm up\nramp 10s to 50%\nhold 20s   # steady\n');
    const sweep = join(tmp, 'summary.json');
    writeFileSync(sweep, JSON.stringify({ scenario: 'sweep', metrics: { max_rate_meeting_slo_rps: 12 } }));
    const p = parsePhases(`@${plan}`, readCapacity(sweep));
    expect(p.phases.map((x) => x.toRps)).toEqual([6, 6]);
    writeFileSync(join(tmp, 'stream.json'), JSON.stringify({ scenario: 'stream', metrics: {} }));
    expect(() => readCapacity(join(tmp, 'stream.json'))).toThrow(/not a sweep's summary.json/);
    expect(() => parsePhases(`@${join(tmp, 'missing.txt')}`)).toThrow(/cannot read/);
  });

  it('arrivals follow the phases: as many as the rate integrates to, denser as a ramp climbs', () => {
    const p = parsePhases('ramp 10s to 10, hold 10s');
    const c = [...phasedOffsets(p, 'constant', 1)];
    expect(c.length).toBe(150);
    expect(c.every((t, i) => i === 0 || t >= c[i - 1]!)).toBe(true);
    expect(c.filter((t) => t < 5000).length).toBeLessThan(c.filter((t) => t >= 5000 && t < 10_000).length / 2);
    expect(c.filter((t) => t >= 10_000).length).toBe(100);
    const a = [...phasedOffsets(p, 'poisson', 7)];
    expect(a).toEqual([...phasedOffsets(p, 'poisson', 7)]);
    expect(a.length).toBeGreaterThan(110);
    expect(a.length).toBeLessThan(190);
    expect(Math.max(...a)).toBeLessThan(20_000);
  });

  it('the plan is capped like every run: a long hold needs --cap-duration', () => {
    const long = parseArgs(['stream', '--phases', 'hold 400s at 1'], {}).options;
    expect(() => checkCaps('stream', long, planFor('stream', long))).toThrow(/--cap-duration 400/);
    const raised = parseArgs(['stream', '--phases', 'hold 400s at 1', '--cap-duration', '400'], {}).options;
    expect(() => checkCaps('stream', raised, planFor('stream', raised))).not.toThrow();
    const fast = parseArgs(['stream', '--phases', 'ramp 5s to 2000'], {}).options;
    expect(() => checkCaps('stream', fast, planFor('stream', fast))).toThrow(/--cap-rate/);
  });

  it('--at takes a time or a phase; combinations that cannot mean anything are refused', () => {
    const o = (args: string[]) => parseArgs(['stream', ...args], {}).options;
    expect(resolveRehearsal(o(['--phases', 'ramp 30s to 5, hold 60s', '--at', 'phase:2'])).atS).toBe(30);
    expect(resolveRehearsal(o(['--phases', 'hold 60s at 5', '--run', 'true'])).atS).toBe(30);
    expect(resolveRehearsal(o(['--rate', '4', '--duration', '20', '--slice', '2s'])).plan.totalS).toBe(20);
    expect(() => resolveRehearsal(o(['--phases', 'hold 60s at 5', '--at', '90s']))).toThrow(/after the end/);
    expect(() => resolveRehearsal(o(['--phases', 'hold 60s at 5', '--at', 'phase:3']))).toThrow(/phase:1 to phase:1/);
    expect(() => resolveRehearsal(o(['--phases', 'hold 60s at 5', '--rate', '3']))).toThrow(/drop --rate/);
    expect(() => resolveRehearsal(o(['--concurrency', '3', '--slice', '1s']))).toThrow(/open-loop/);
    expect(() => resolveRehearsal(o(['--capacity', '5', '--slice', '1s']))).toThrow(/give --phases/);
  });

  it('npm run load: bad phases are one line on stderr and exit 2, before anything starts', async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s) => { lines.push(String(s)); return true; });
    try {
      expect(await main(['stream', '--phases', 'jump 3s'], {})).toBe(2);
    } finally {
      spy.mockRestore();
    }
    expect(lines.join('').trim().split('\n')).toHaveLength(1);
    expect(lines.join('')).toMatch(/^chatgate load: --phases: "jump 3s" is not a phase/);
  });
});

describe('losses', () => {
  const json = { 'content-type': 'application/json' };
  it('503 and 429 with a proper error body are graceful; everything else is not, on its clause', () => {
    const cases: Array<[Partial<Outcome>, string, boolean, string | undefined]> = [
      [{ status: 503, headers: json, errorBody: ERROR_BODY, failure: 'other' }, 'shed_503', true, undefined],
      [{ status: 429, headers: json, errorBody: ERROR_BODY, failure: 'other' }, 'shed_429', true, undefined],
      [{ status: 503, headers: {}, errorBody: '', failure: 'other' }, 'improper_503', false, 'ERR-4'],
      [{ status: 502, headers: { 'content-type': 'text/html' }, errorBody: '<h1>Bad Gateway</h1>', failure: 'other' }, 'status_502', false, 'ERR-2'],
      [{ status: 504, failure: 'other' }, 'status_504', false, 'ERR-2'],
      [{ failure: 'refused' }, 'refused', false, 'LIM-1'],
      [{ failure: 'dropped' }, 'dropped', false, 'LIM-1'],
      [{ status: 200, failure: 'reset', events: 7 }, 'stream_cut', false, 'EV-6'],
      [{ status: 200, failure: 'incomplete_stream', events: 7 }, 'stream_cut', false, 'EV-6'],
      [{ failure: 'timeout' }, 'timeout', false, undefined],
    ];
    for (const [o, cls, graceful, clause] of cases) {
      const l = classifyLoss(outcome(o));
      expect(l, cls).toMatchObject({ cls, graceful });
      expect(l!.clause, cls).toBe(clause);
    }
    expect(classifyLoss(outcome({ ok: true, status: 200 }))).toBeUndefined();
    expect(classifyLoss(outcome({ failure: 'aborted' }))).toBeUndefined();
  });

  it('lists each lost request once, on the clause it broke, with its curl line (the recorder leaves it to the rehearsal)', () => {
    const findings = new Findings();
    const recorder = new Recorder(true, findings, 0);
    const lost = new LostRequests(findings, recorder);
    const sent: Array<[Partial<Outcome>, string]> = [
      [{ status: 200, failure: 'reset', failureDetail: 'connection lost during the stream', events: 7 }, 'cut-reset'],
      [{ status: 200, failure: 'incomplete_stream', failureDetail: 'stream ended without data: [DONE]', events: 3 }, 'cut-clean'],
      [{ failure: 'refused', failureDetail: 'connection refused' }, 'refused'],
      [{ status: 502, headers: { 'content-type': 'text/html' }, errorBody: '<h1>Bad Gateway</h1>', failure: 'other' }, 'bad-gateway'],
      [{ status: 503, headers: {}, errorBody: '', failure: 'other' }, 'improper-503'],
      [{ status: 200, failure: 'bad_body', failureDetail: 'error event inside a 200 stream' }, 'error-event'],
      [{ status: 503, headers: json, errorBody: ERROR_BODY, failure: 'other' }, 'shed'],
    ];
    sent.forEach(([o, name], seq) => {
      const out = outcome({ seq, sentAt: seq, endAt: seq + 1, intendedAt: seq, ...o });
      recorder.recordOutcome(out);
      lost.add(out, () => `curl ${name}`, seq);
    });
    const list = findings.list();
    expect(list.map((f) => [f.clause, f.count, f.message]).sort()).toEqual([
      ['ERR-2', 1, 'not graceful during the rehearsal: status 502'],
      ['ERR-4', 1, 'not graceful during the rehearsal: improper 503'],
      ['EV-3', 1, 'not graceful during the rehearsal: bad body'],
      ['EV-6', 2, 'not graceful during the rehearsal: stream cut'],
      ['LIM-1', 1, 'not graceful during the rehearsal: refused'],
    ]);
    expect(list.find((f) => f.clause === 'EV-6')!.example).toMatch(/^stream cut after 7 events, without data: \[DONE\] \(sent at 0 s\); reproduce: curl cut-reset$/);
    expect(lost.tally).toMatchObject({ lost: 7, graceful: { shed_503: 1 }, not_graceful: { stream_cut: 2, refused: 1, status_502: 1, improper_503: 1, bad_body: 1 } });
    expect(lost.examples.map((e) => e.curl)).toEqual(['curl cut-reset', 'curl cut-clean', 'curl refused', 'curl bad-gateway', 'curl improper-503', 'curl error-event']);
    // Outside a rehearsal the recorder lists them itself.
    const plain = new Findings();
    new Recorder(true, plain, 0).recordOutcome(outcome({ status: 200, failure: 'incomplete_stream', failureDetail: 'no [DONE]', events: 3 }));
    expect(plain.list().map((f) => f.clause)).toEqual(['EV-6']);
  });
});

describe('damage and recovery', () => {
  const slices = (marks: string): SliceVerdict[] => [...marks].map((c, i) => ({ t_start_s: i, t_end_s: i + 1, within_slo: c === '.' ? null : c === 'o' }));
  const none: LossTally = { lost: 0, attempted: 100, graceful: {}, not_graceful: {}, clauses: [] };

  it('counts violation seconds, places them relative to the change, and times the recovery to the first of N good slices', () => {
    const d = assessDamage(slices('oooxxxxoxoooo'), 1, 3, { t_s: 3.2, label: 'scale' }, { ...none, lost: 9, graceful: { shed_503: 9 } });
    expect(d.violation_s).toBe(5);
    expect(d.violation_from_s).toBeCloseTo(-0.2);
    expect(d.violation_to_s).toBeCloseTo(5.8);
    expect(d.recovery_s).toBeCloseTo(5.8); // slices 9, 10, 11: the first starts at 9 s
    expect(d.graceful).toBe(true);
    expect(d.verdict).toMatch(/^rehearsal \(change at 3.2 s\): graceful: SLO violated 5 s/);
    expect(d.verdict).toContain('9 shed with 503 and an error body');
  });

  it('an empty slice neither breaks nor extends a streak; no recovery within the run is said', () => {
    expect(assessDamage(slices('oxo.oo'), 1, 3, { t_s: 1, label: 'c' }, none).recovery_s).toBe(1);
    const never = assessDamage(slices('oxxoox'), 1, 3, { t_s: 1, label: 'c' }, none);
    expect(never.recovery_s).toBeNull();
    expect(never.verdict).toContain('not recovered within the run');
  });

  it('nothing broken: 0 s and nothing to recover from; a loss that is not graceful names its clauses', () => {
    const calm = assessDamage(slices('oooo'), 1, 3, undefined, none);
    expect([calm.violation_s, calm.recovery_s, calm.change_at_s]).toEqual([0, 0, null]);
    const cut = assessDamage(slices('oxoooo'), 1, 3, { t_s: 1, label: 'restart' }, { lost: 4, attempted: 50, graceful: {}, not_graceful: { stream_cut: 3, refused: 1 }, clauses: ['EV-6', 'LIM-1'] });
    expect(cut.graceful).toBe(false);
    expect(cut.verdict).toMatch(/NOT graceful \(EV-6, LIM-1\)/);
    expect(cut.verdict).toContain('3 stream cut, 1 refused');
  });
});

describe('slices', () => {
  it('one row per slice; percentiles only where samples exist; the SLO judged per slice; the CSV has a line each', () => {
    const r = new SliceRecorder(0, 1000, { ttftP95Ms: 100, errorShare: 0.01 }, 500);
    for (let i = 0; i < 10; i++) {
      r.sent(i * 100);
      r.outcome(outcome({ ok: true, status: 200, intendedAt: i * 100, firstContentAt: i * 100 + 20, endAt: i * 100 + 300, usageTokens: 5 }), undefined);
    }
    // Slice 1: nothing. Slice 2: one shed, one slow.
    r.sent(2100);
    const shed = outcome({ status: 503, headers: { 'content-type': 'application/json' }, errorBody: ERROR_BODY, intendedAt: 2100, endAt: 2110, failure: 'other' });
    r.outcome(shed, classifyLoss(shed));
    r.sent(2200);
    r.outcome(outcome({ ok: true, status: 200, intendedAt: 2200, firstContentAt: 2700, endAt: 2900 }), undefined);
    const rows = r.rows(() => 10, () => 'hold', [{ t_s: 2.05, label: 'change' }]);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatchObject({ sent: 10, ok: 10, within_slo: true, ttft_p50_ms: 20, error_share: 0 });
    expect(rows[0]!.finished_ok).toBe(7); // ended by 1 s
    expect(rows[1]).toMatchObject({ sent: 0, within_slo: null, ttft_p95_ms: null, error_share: null, finished_ok: 3 });
    expect(rows[2]).toMatchObject({ sent: 2, within_slo: false, errors_by_status: { 503: 1 }, errors_by_class: { shed_503: 1 }, findings: 0, marks: ['change'] });
    expect(rows[2]!.broken).toEqual(['ttft_p95_ms', 'error_share']);
    const csv = slicesCsv(rows).trim().split('\n');
    expect(csv).toHaveLength(4);
    expect(csv[3]).toContain('503:1');
  });
});

describe('a long hold keeps its memory flat', () => {
  it('the per-second timeline folds each settled second into its p50/p95 (the same figures), and a second still waiting for an answer stays open', () => {
    const r = new Recorder(true, new Findings(), 0);
    r.requestFindings = false;
    const latencyOf = (sec: number, k: number) => 100 + sec + 7 * k;
    // One slow request sent in second 0, answered in second 30: second 0 and everything after it stay open until then.
    r.recordSent('chat', 0, 0);
    for (let sec = 0; sec < 60; sec++) {
      for (let k = 0; k < 5; k++) {
        const at = sec * 1000 + k * 150;
        r.recordSent('chat', at, 0);
        r.recordOutcome(outcome({ intendedAt: at, sentAt: at, firstContentAt: at + latencyOf(sec, k), endAt: at + 400, ok: true, status: 200 }));
      }
      if (sec === 20) expect(r.openTimelineHistograms(), 'second 0 waits for its slow answer').toBe(21);
      if (sec === 30) r.recordOutcome(outcome({ intendedAt: 0, sentAt: 0, firstContentAt: 900, endAt: 30_500, ok: true, status: 200 }));
    }
    // Settled seconds are folded: only the last few keep a histogram.
    expect(r.openTimelineHistograms()).toBeLessThanOrEqual(3);
    const points = r.timelinePoints();
    for (const sec of [0, 1, 29, 45, 59]) {
      const h = new LatencyHistogram(2);
      for (let k = 0; k < 5; k++) h.record(latencyOf(sec, k));
      if (sec === 0) h.record(900);
      expect([points[sec]!.p50_ms, points[sec]!.p95_ms], `second ${sec}`).toEqual([h.percentileMs(50), h.percentileMs(95)]);
    }
  });
});

describe('the change runner', () => {
  it('runs the command through the shell, keeps its exit status and output with secrets masked; SIGUSR2 marks', async () => {
    const secret = 'sk-rehearsal-secret-0123456789';
    addSecret(secret, 'test key');
    const c = new ChangeRunner(performance.now(), { atS: 0, run: `echo "token ${secret}"; echo oops >&2; exit 3`, markStdin: false, env: { EXTRA: 'x' } });
    c.start();
    process.emit('SIGUSR2', 'SIGUSR2');
    await new Promise((r) => setTimeout(r, 50));
    await c.stop(5000);
    expect(c.command).toMatchObject({ exit_code: 3, signal: null });
    expect(c.command!.stdout).toContain('token ***');
    expect(c.command!.stdout).not.toContain(secret);
    expect(c.command!.stderr).toContain('oops');
    expect(c.marks.map((m) => m.source).sort()).toEqual(['run', 'signal']);
    expect(process.listenerCount('SIGUSR2')).toBe(0);
  });

  it('with --mark-stdin, every line typed is a mark labelled with its text; --at without --run is a mark too', async () => {
    const input = new PassThrough();
    const c = new ChangeRunner(performance.now(), { atS: 0, markStdin: true, input });
    c.start();
    input.write('drained node-3\n\n');
    await new Promise((r) => setTimeout(r, 50));
    await c.stop(1000);
    expect(c.marks.map((m) => [m.source, m.label])).toEqual(expect.arrayContaining([['stdin', 'drained node-3'], ['stdin', 'mark'], ['at', '--at 0 s']]));
    expect(c.command).toBeUndefined();
  });

  it('stops the command\'s whole process group when the run ends: a shell\'s background children do not outlive the run', async () => {
    const secret = 'sk-rehearsal-secret-group-0123456789';
    addSecret(secret, 'test key');
    const nap = uniqueSleep();
    const c = new ChangeRunner(performance.now(), { atS: 0, run: `echo "up ${secret}"; sleep ${nap} & sleep ${nap}`, markStdin: false });
    c.start();
    await running(nap, 2);
    await c.stop(100);
    expect(await leftAfterStop(nap)).toBe(0);
    expect(c.command).toMatchObject({ exit_code: null, signal: 'SIGTERM' });
    expect(c.command!.ended_s).not.toBeNull();
    expect(c.command!.stdout).toContain('up ***');
    expect(c.command!.stdout).not.toContain(secret);
    expect(c.command!.note).toMatch(/still running 0.1 s after the load ended: its process group was stopped/);
  });

  it('a command that exits and leaves processes behind keeps its own exit status; what it left is stopped at the end', async () => {
    const nap = uniqueSleep();
    const c = new ChangeRunner(performance.now(), { atS: 0, run: `sleep ${nap} & sleep ${nap} >/dev/null 2>&1 & echo started; exit 4`, markStdin: false });
    c.start();
    await running(nap, 2);
    await c.stop(100);
    expect(await leftAfterStop(nap)).toBe(0);
    expect(c.command).toMatchObject({ exit_code: 4, signal: null, stdout: 'started\n' });
    expect(c.command!.note).toMatch(/processes it started were still running when the run ended/);
  });
});

/** A sleep of 30 s no other process runs (its argument tells it apart in /proc). */
function uniqueSleep(): string {
  return `30.${String(process.pid).padStart(7, '0')}${Math.floor(Math.random() * 1e6)}`;
}

/** Live processes whose command line is `sleep <nap>` (zombies left out: they hold nothing). */
function sleepers(nap: string): number {
  let n = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue;
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8') === `sleep\0${nap}\0`) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

/** Waits (bounded by polls) until `n` such sleeps run, so the test starts from processes that exist. */
async function running(nap: string, n: number): Promise<void> {
  for (let i = 0; i < 500 && sleepers(nap) < n; i++) await new Promise((r) => setTimeout(r, 10));
  expect(sleepers(nap)).toBe(n);
}

/** Sleeps left; a killed process may take a moment to go (bounded by polls). */
async function leftAfterStop(nap: string): Promise<number> {
  for (let i = 0; i < 100 && sleepers(nap) > 0; i++) await new Promise((r) => setTimeout(r, 10));
  return sleepers(nap);
}
