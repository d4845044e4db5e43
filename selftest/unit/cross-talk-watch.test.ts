// A load run's SVC-9 watch judges each reply as soon as what the rule needs of it is known
// (whether it ran alone, the replies in flight beside it, the request its canaries name),
// then drops it: it holds what is in flight, not every reply, and finds exactly what judging
// every reply at the end of the phase finds (lib/spec/rules/cross-talk.ts on all samples).
// Outcomes made up in memory, bounded by count: no request leaves the process.
import { describe, expect, it } from 'vitest';
import { CrossTalkWatch, MAX_HELD, sampleOf } from '../../load/engine/cross-talk-watch.ts';
import type { LeanRequest, Outcome } from '../../load/engine/lean-client.ts';
import { Findings } from '../../load/report/findings.ts';
import { canaryFor, crossedLone, judgeCrossTalk, learnEvidence, splitLone } from '../../lib/spec/rules/cross-talk.ts';

const canary = (seq: number) => canaryFor(seq, 7);
const size = (seq: number) => 20 + ((seq * 37) % 200);

interface Planned { seq: number; start: number; end: number; replyOf?: number; idOf?: number; countOf?: number; ok?: boolean }

function request(p: Planned): LeanRequest {
  return { seq: p.seq, route: 'chat', key: p.seq % 2 ? 'main' : 'other', stream: false, path: '/v1/chat/completions', intendedAt: p.start, sample: false, headers: {}, body: '', work: { promptTokens: size(p.seq), canary: canary(p.seq) } } as unknown as LeanRequest;
}

/** The target echoes the canary, counts the prompt + 3 and gives each reply its own id; `replyOf` etc. swap a part. */
function outcome(p: Planned): Outcome {
  const ok = p.ok ?? true;
  return {
    seq: p.seq, route: 'chat', key: p.seq % 2 ? 'main' : 'other', stream: false, intendedAt: p.start, sentAt: p.start, endAt: p.end, ok, status: ok ? 200 : undefined,
    ...(ok ? { replyHead: `${canary(p.replyOf ?? p.seq)} hello`, completionId: `chatcmpl-${p.idOf ?? p.replyOf ?? p.seq}`, usagePromptTokens: size(p.countOf ?? p.replyOf ?? p.seq) + 3 } : { failure: 'dropped' }),
    contentChunks: 0, tokenEvents: 1, outputChars: 20, work: { promptTokens: size(p.seq), canary: canary(p.seq) },
  } as unknown as Outcome;
}

type Row = [string, number, number, string];
/** The watch's findings in the batch's order (by canary or usage, then by id; each group in start order). */
const batchOrder = (rows: Row[]) => [...rows.filter((r) => r[0] !== 'id'), ...rows.filter((r) => r[0] === 'id')];

/** The phase judged at its end, as the watch did before it judged as it went. */
function endOfRun(before: Outcome[], outs: Outcome[], learn = Infinity): { findings: Row[]; judged: unknown; lone: number } {
  const all = outs.filter((o) => o.ok).sort((a, b) => a.endAt - b.endAt).map(sampleOf);
  const split = splitLone(all);
  const lone = [...before.map(sampleOf), ...split.lone.slice(0, learn)];
  const j = judgeCrossTalk(learnEvidence(lone), split.busy);
  // Lone replies that are other lone requests' come first (the watch finds them once the evidence is learned).
  const crossed: Row[] = crossedLone(lone).map((f) => [f.kind, lone[f.request]!.seq, lone[f.other]!.seq, f.detail]);
  return { findings: [...crossed, ...j.findings.map((f): Row => [f.kind, split.busy[f.request]!.seq, split.busy[f.other]!.seq, f.detail])], judged: j.judged, lone: lone.length };
}

/** Sends and answers in time order through the watch; the most it held, overall and once the evidence was learned. */
function watched(before: Outcome[], plan: Planned[], tracked = true, limits?: { learn?: number; held?: number }) {
  const rows: Row[] = [];
  const watch = new CrossTalkWatch(undefined, (f) => rows.push([f.kind, f.seq, f.otherSeq, f.detail]), limits);
  watch.alone(before);
  const events = plan.flatMap((p) => [{ t: p.start, k: 0, p }, { t: p.end, k: 1, p }]).sort((a, b) => a.t - b.t || a.k - b.k || a.p.seq - b.p.seq);
  let most = 0;
  let mostLate = 0;
  events.forEach((e, i) => {
    if (e.k === 0) { if (tracked) watch.sent(request(e.p)); } else watch.add(outcome(e.p));
    most = Math.max(most, watch.held);
    if (i > events.length / 2) mostLate = Math.max(mostLate, watch.held);
  });
  const findings = new Findings();
  const summary = watch.finish(findings);
  return { rows, summary, findings: findings.list(), most, mostLate };
}

/** Twenty requests one at a time, then `n` at 2 ms apart lasting 30-70 ms (about 25 in flight); `swapEvery`: two overlapping requests swap whole replies. */
function plan(n: number, swapEvery = 0): Planned[] {
  const out: Planned[] = [];
  for (let i = 0; i < 20; i++) out.push({ seq: i, start: i * 100, end: i * 100 + 10 });
  let x = 12345;
  const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i < n; i++) {
    const seq = 20 + i;
    const start = 3000 + i * 2;
    out.push({ seq, start, end: start + 30 + Math.floor(rnd() * 40), ok: i % 97 !== 5 });
  }
  if (swapEvery) {
    for (let i = 20 + swapEvery; i + 3 < out.length; i += swapEvery) {
      const a = out[i]!;
      const b = out[i + 3]!;
      if (a.ok === false || b.ok === false) continue;
      a.replyOf = b.seq;
      b.replyOf = a.seq;
    }
  }
  return out;
}

const before = [1, 2, 3].map((k) => outcome({ seq: 1_000_000_000 + k, start: -1000 + k * 100, end: -1000 + k * 100 + 10 }));

describe('SVC-9 in a long load run: each reply judged as it settles, then dropped', () => {
  it('a legal run of 50,000 replies: no finding, the same judgement as at the end, and the watch holds what is in flight', () => {
    const p = plan(50_000);
    const w = watched(before, p);
    const end = endOfRun(before, p.map(outcome));
    expect(end.findings).toEqual([]);
    expect(w.rows).toEqual([]);
    expect(w.summary.cross_talk).toMatchObject({ verdict: 'judged', judged_by: end.judged, lone: end.lone, findings: 0, not_kept: 0 });
    // Until the evidence is learned it waits (at most MAX_HELD replies); after, about the ~25 in flight and the window beside them
    // (the judged part of it walked once it doubled, plus 64: at most about twice the window, whatever the run's length).
    expect(w.most).toBeLessThanOrEqual(MAX_HELD + 100);
    expect(w.mostLate).toBeLessThan(250);
  });

  it('swapped replies among 50,000: the same findings, in the same order, as judging every reply at the end', () => {
    const p = plan(50_000, 500);
    const w = watched(before, p);
    const end = endOfRun(before, p.map(outcome));
    expect(end.findings.length).toBeGreaterThan(150);
    expect(batchOrder(w.rows)).toEqual(end.findings);
    expect(w.summary.cross_talk).toMatchObject({ judged_by: end.judged, findings: end.findings.length });
    const svc9 = w.findings.filter((f) => f.clause === 'SVC-9');
    expect(svc9.map((f) => f.count)).toEqual([end.findings.length]);
    expect(svc9[0]!.example).toMatch(/got the reply of request #\d+/);
    expect(w.mostLate).toBeLessThan(250);
  });

  it('usage or id alone: a reply whose count or id is another\'s is found as at the end', () => {
    const p = plan(6000, 0);
    for (let i = 600; i + 3 < p.length; i += 700) {
      if (p[i]!.ok === false || p[i + 3]!.ok === false) continue;
      p[i]!.countOf = p[i + 3]!.seq;
      p[i + 1]!.idOf = p[i - 1]!.seq;
    }
    const w = watched(before, p);
    const end = endOfRun(before, p.map(outcome));
    expect(new Set(end.findings.map((f) => f[0]))).toEqual(new Set(['usage', 'id']));
    expect(batchOrder(w.rows)).toEqual(end.findings);
  });

  it('a reply cache one request behind: lone replies carrying the lone request before\'s canary are findings, as are the concurrent ones, as at the end', () => {
    const before = [0, 1, 2].map((i) => outcome({ seq: 1000 + i, start: i * 100, end: i * 100 + 10, ...(i > 0 ? { replyOf: 999 + i } : {}) }));
    const p = plan(200).map((x) => ({ ...x, replyOf: x.seq > 0 && x.ok !== false ? x.seq - 1 : undefined }));
    const w = watched(before, p);
    const end = endOfRun(before, p.map(outcome));
    expect(w.rows).toEqual(end.findings);
    expect(w.rows.slice(0, 2).map((r) => [r[1], r[2]])).toEqual([[1001, 1000], [1002, 1001]]);
    expect(w.rows.length).toBeGreaterThan(100);
  });

  it('a reply that overlaps a later request waits for it: its swap partner answered long after is still found', () => {
    // After enough lone requests to learn from: 1 starts, 2 starts while 1 runs; 1 ends carrying 2's reply;
    // 2 is answered 5 s later, and 3 (sent and answered while 2 runs) is its own.
    const L = 64;
    const p: Planned[] = [
      ...Array.from({ length: L }, (_, i): Planned => ({ seq: 100 + i, start: i * 10, end: i * 10 + 5 })),
      { seq: 1, start: 1000, end: 1050, replyOf: 2 },
      { seq: 2, start: 1020, end: 6000, replyOf: 1 },
      { seq: 3, start: 2000, end: 2010 },
    ];
    const rows: Row[] = [];
    const watch = new CrossTalkWatch(undefined, (f) => rows.push([f.kind, f.seq, f.otherSeq, f.detail]));
    watch.alone(before);
    for (const q of p.slice(0, L)) { watch.sent(request(q)); watch.add(outcome(q)); }
    const [one, two, three] = p.slice(L);
    watch.sent(request(one!));
    watch.sent(request(two!));
    watch.add(outcome(one!));
    watch.sent(request(three!));
    watch.add(outcome(three!));
    // 1 is answered but cannot be judged while 2, which overlaps it, is in flight.
    expect(rows).toEqual([]);
    expect(watch.held).toBeGreaterThanOrEqual(3);
    watch.add(outcome(two!));
    expect(rows.map((r) => r.slice(0, 3))).toEqual([['canary', 1, 2], ['canary', 2, 1]]);
    const s = watch.finish(new Findings()).cross_talk;
    expect(s).toMatchObject({ findings: 2, lone: 3 + L });
    expect(rows).toEqual(endOfRun(before, p.map(outcome)).findings);
    expect(watch.held).toBe(0);
  });

  it('outcomes never announced as sent: it holds everything and judges at the end, with the same result', () => {
    const p = plan(3000, 300);
    const w = watched(before, p, false);
    expect(batchOrder(w.rows)).toEqual(endOfRun(before, p.map(outcome)).findings);
    expect(w.most).toBeGreaterThan(2900);
  });

  it('300 random phases (gaps, overlaps, failures, swaps of replies, counts and ids), judged as they settle: the findings of judging them at the end on the same evidence', () => {
    let x = 987654321;
    const kinds = new Map<string, number>();
    const rnd = (n: number) => Math.floor(((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * n);
    for (let run = 0; run < 300; run++) {
      const p: Planned[] = [];
      let t = 0;
      for (let i = 0; i < 6; i++) p.push({ seq: 500 + i, start: (t += 100), end: t + 10 });
      const n = 10 + rnd(80);
      for (let i = 0; i < n; i++) {
        t += rnd(4) === 0 ? 80 : rnd(12);
        p.push({ seq: i, start: t, end: t + 1 + rnd(60), ok: rnd(12) !== 0 });
      }
      for (let k = rnd(7); k > 0; k--) {
        const a = p[6 + rnd(n)]!;
        const b = p[6 + rnd(n)]!;
        const part = rnd(3);
        // A reply can carry only what a request sent before its end asked for.
        if (part === 0) { if (b.start < a.end) a.replyOf = b.seq; if (a.start < b.end) b.replyOf = a.seq; } else if (part === 1) a.countOf = b.seq; else a.idOf = b.seq;
      }
      const learn = 6;
      const w = watched(before, p, true, { learn, held: 1 + rnd(40) });
      const end = endOfRun(before, p.map(outcome), learn);
      expect(batchOrder(w.rows), `run ${run}`).toEqual(end.findings);
      expect(w.summary.cross_talk.judged_by, `run ${run}`).toEqual(end.judged);
      for (const f of end.findings) kinds.set(f[0], (kinds.get(f[0]) ?? 0) + 1);
    }
    // Not vacuous: each kind of finding met many times.
    for (const k of ['canary', 'usage', 'id']) expect(kinds.get(k) ?? 0, k).toBeGreaterThan(20);
  });
});
