// The fuzz campaign: the coverage phase, then random requests; judge, group, minimise, report.
//
// 0. The coverage phase (coverage.ts) sends its fixed list first: the same requests for
//    every seed. A failing pack is split into its probes, a probe's size bisected, so a
//    coverage finding is the one change that caused it (FUZZ_REPLAY=<k>@c:<probe>:<size>).
// 1. The random phase gets what is left of FUZZ_RUNS (at least a quarter of it). fast-check
//    runs an async property one run at a time, which would make it as slow as the target's
//    latency times the run count, so generation and shrinking are split:
//    - case i is the first value fast-check generates for seed caseSeed(seed, i) (fc.check
//      replaying path "0"), so cases are independent of each other and of the order they
//      are sent in: FUZZ_CONCURRENCY at a time, and the same seed gives the same requests;
//    - a failure is shrunk with fc.check on its own case seed (path "0", endOnFailure off),
//      whose counterexample path makes the shrunk request replayable:
//      FUZZ_SEED=<seed> FUZZ_REPLAY=<case>@<path>.
// Random failures a finding already explains (signature.ts: same status, every feature the
// finding needed) are its. The rest are grouped by (clause, status, kind, route, streaming)
// and shrunk in passes, each clause's first group before any clause's second, at most
// maxShrinks in all. The shrink budget decides what is minimised, never whether a clause
// fails: a group it does not reach is reported with the request that showed it, and its curl.
import fc from 'fast-check';
import type { AuthSpec, Exchange, RequestSpec } from '../lib/http/http-client.ts';
import type { FuzzConfig } from '../lib/run/config.ts';
import { caseArbitrary, type FuzzCase } from './generators.ts';
import { judge as judgeWith, judgedClauses, measureBaseline, NO_BASELINE, wantsStream, type Baseline, FUZZ_CLAUSES, type Breach, type FuzzClause } from './oracles.ts';
import { covers, difference, features, signature } from './signature.ts';
import { coverageCaseAt, coverageCases, packCase, type CoverageCase } from './coverage.ts';

export interface CampaignOptions {
  send: (spec: RequestSpec) => Promise<Exchange>;
  auth: AuthSpec;
  models: string[];
  brainId?: string;
  fuzz: FuzzConfig & { seed: number };
  /** How a reader reruns the campaign (env before FUZZ_SEED/FUZZ_REPLAY), e.g. "REFERENCE_DEFECT=x ". */
  replayPrefix?: string;
  /** Requests one shrink may send; the run's time cap bounds them all as well. */
  shrinkBudget?: number;
  /** Failures shrunk at most (default MAX_SHRINKS); the rest are reported as generated. */
  maxShrinks?: number;
  /** The coverage phase before the random one (default on; self-tests turn it off to test the random phase alone). */
  coverage?: boolean;
  /**
   * The clock the time cap is measured on (ms; default performance.now). The suite's
   * leaves out the time requests waited for the run's governor: a throttled target
   * slows the phase down, it does not shorten it.
   */
  clock?: () => number;
}

export interface Finding {
  clause: FuzzClause;
  signature: string;
  status: number | undefined;
  expected: string;
  seen: string;
  case: FuzzCase;
  caseIndex: number;
  caseSeed: number;
  path: string;
  replay: string;
  exchange: Exchange;
  /** Bytes of the shrunk body as sent, and its top-level field count. */
  bytes: number;
  fields: number;
  difference: string[];
  /** Raw failures of the campaign this finding accounts for. */
  rawCount: number;
  /** How it was minimised: a coverage probe (alone), shrunk, or not minimised (shrink budget spent). */
  origin: 'coverage' | 'shrunk' | 'unshrunk' | 'replayed';
  shrinkRequests: number;
  notes: string[];
}

export interface CampaignSummary {
  seed: number;
  /** Requests of the coverage phase (fixed for a target's models, brain and body cap) and how many were sent. */
  coverage: { planned: number; sent: number; probes: number; splitRequests: number };
  /** Generated requests of the random phase (FUZZ_RUNS). */
  planned: number;
  sent: number;
  stoppedByTimeCap: boolean;
  /** Sending stopped because the target failed this many requests at the transport level. */
  stoppedByTransport?: number;
  durationMs: number;
  sendMs: number;
  byKind: Record<string, number>;
  byLabel: Record<string, number>;
  byRoute: Record<string, number>;
  streams: number;
  bytes: number;
  statuses: Record<string, number>;
  throttled: number;
  overloaded: number;
  rawFailures: number;
  /** Per clause: generated requests that broke it (both phases). */
  rawByClause: Record<string, number>;
  shrinks: number;
  shrinkRequests: number;
  unattributed: number;
  /** Per clause: generated responses it had something to judge in. */
  judged: Record<string, number>;
  /** What an ordinary request already got wrong (not reported by the fuzz phase). */
  baseline: string[];
  replay?: string;
}

export interface CampaignResult { summary: CampaignSummary; findings: Finding[] }

/** Requests of the random phase: FUZZ_RUNS less the coverage phase's, at least a quarter of FUZZ_RUNS. */
export function randomBudget(runs: number, coverage: number): number {
  return Math.max(runs - coverage, Math.ceil(runs / 4));
}

/** Case i's own seed: independent cases, reproducible from the run's seed alone. */
export function caseSeed(seed: number, i: number): number {
  return (Math.imul(seed ^ 0x5bd1e995, 0x27d4eb2d) ^ Math.imul(i + 1, 0x9e3779b1)) >>> 1;
}

/** The value fast-check generates for `seed` at `path` ("0" = the first value, "0:3:1" = a shrunk one). */
export function caseAt(arb: fc.Arbitrary<FuzzCase>, seed: number, path: string): FuzzCase {
  let got: FuzzCase | undefined;
  fc.check(fc.property(arb, (c) => { got = c; return false; }), { seed, path, numRuns: 1, endOnFailure: true });
  if (!got) throw new Error(`fast-check produced no value for seed ${seed} path ${path}`);
  return got;
}

export function requestFor(c: FuzzCase, o: Pick<CampaignOptions, 'auth' | 'brainId'>): RequestSpec {
  const path = c.route === 'brain' ? `/brains/${encodeURIComponent(o.brainId!)}/chat` : '/chat/completions';
  return c.raw !== undefined
    ? { method: 'POST', path, auth: o.auth, body: c.raw }
    : { method: 'POST', path, auth: o.auth, json: c.body, stream: wantsStream(c) };
}

interface Raw { i: number; seed: number; c: FuzzCase; ex: Exchange; breaches: Breach[]; feats: Set<string> }

const MAX_TRANSPORT_FAILURES = 4;
/** Failures shrunk per campaign at most (each costs up to the shrink budget's requests). */
export const MAX_SHRINKS = 16;
const KIND_ORDER = ['valid', 'edge', 'no-model', 'bad-messages', 'bad-message', 'bad-stream', 'not-json'];

/**
 * A raw failure is the same bug as a shrunk finding when it got the same status and shows
 * every feature the shrunk request needed. A finding that needed nothing special (an
 * ordinary request of its kind) only covers failures of its own kind, route and streaming.
 */
function coveredBy(f: Finding, raw: Raw): boolean {
  if (f.status !== raw.ex.status) return false;
  if ((f.case.raw === undefined) !== (raw.c.raw === undefined)) return false;
  if (f.case.raw !== undefined) return f.case.label === raw.c.label;
  if (f.difference.length === 0 && (f.case.kind !== raw.c.kind || f.case.route !== raw.c.route || wantsStream(f.case) !== wantsStream(raw.c))) return false;
  return covers(raw.feats, f.difference);
}

const CLAUSE_ORDER = new Map(FUZZ_CLAUSES.map((c, i) => [c, i]));
const statusKey = (ex: Exchange) => ex.status ?? -1;
const bytesOf = (c: FuzzCase) => Buffer.byteLength(c.raw ?? JSON.stringify(c.body) ?? '');
const fieldsOf = (c: FuzzCase) => (c.body && typeof c.body === 'object' && !Array.isArray(c.body) ? Object.keys(c.body).length : 0);

export async function runCampaign(o: CampaignOptions): Promise<CampaignResult> {
  const now = o.clock ?? (() => performance.now());
  const started = now();
  const { seed, runs, timeMs, concurrency, maxBodyBytes, replay } = o.fuzz;
  const deadline = started + timeMs;
  // Sending stops at 3/4 of the cap, so the failures found still get shrunk within it.
  const sendDeadline = started + timeMs * 0.75;
  const arb = caseArbitrary({ models: o.models, brainId: o.brainId, maxBodyBytes });
  const covOpts = { models: o.models, brainId: o.brainId, maxBodyBytes };
  const summary: CampaignSummary = {
    seed, coverage: { planned: 0, sent: 0, probes: 0, splitRequests: 0 }, planned: replay ? 1 : runs, sent: 0, stoppedByTimeCap: false, durationMs: 0, sendMs: 0, byKind: {}, byLabel: {}, byRoute: {},
    streams: 0, bytes: 0, statuses: {}, throttled: 0, overloaded: 0, rawFailures: 0, rawByClause: {}, shrinks: 0, shrinkRequests: 0, unattributed: 0, judged: {}, baseline: [],
  };
  const prefix = o.replayPrefix ?? '';
  const replayCommand = (i: number, path: string) => `${prefix}FUZZ_SEED=${seed} FUZZ_REPLAY=${i}@${path} npm test -- fuzz`;
  const count = (rec: Record<string, number>, k: string) => { rec[k] = (rec[k] ?? 0) + 1; };
  const tally = (c: FuzzCase, ex: Exchange) => {
    summary.sent++;
    count(summary.byKind, c.kind);
    // A shaped case counts under its shape (its label names one of ~50 fields).
    count(summary.byLabel, c.label.startsWith('coverage:') ? 'coverage' : c.shape ?? c.label);
    count(summary.byRoute, c.route === 'brain' ? 'brain route' : '/chat/completions');
    if (wantsStream(c)) summary.streams++;
    summary.bytes += bytesOf(c);
    count(summary.statuses, ex.status === undefined ? 'no response' : String(ex.status));
    if (ex.status === 429) summary.throttled++;
    if (ex.status === 503) summary.overloaded++;
    for (const clause of judgedClauses(c, ex)) {
      // A clause the baseline already breaks is left to the fixed probes: nothing judged here.
      if ((clause === 'ERR-1' && base.errorBodyBroken) || base.stream.has(clause)) continue;
      count(summary.judged, clause);
    }
  };

  // What an ordinary request already gets wrong is the fixed probes' to report, not ours.
  let base: Baseline = NO_BASELINE;
  {
    const frame = { model: o.models[0], messages: [{ role: 'user', content: 'Say hello in one short sentence.' }] };
    const [plain, stream, invalid] = await Promise.all([
      o.send({ method: 'POST', path: '/chat/completions', auth: o.auth, json: frame }),
      o.send({ method: 'POST', path: '/chat/completions', auth: o.auth, json: { ...frame, stream: true }, stream: true }),
      o.send({ method: 'POST', path: '/chat/completions', auth: o.auth, json: { model: o.models[0] } }),
    ]);
    base = measureBaseline(plain, stream, invalid);
    const broken = [plain, stream, invalid].filter((ex) => ex.status === undefined || ex.error);
    if (broken.length >= 2) {
      // A target that does not answer ordinary requests has nothing to teach a fuzzer: the
      // fixed probes report why; generated requests would only multiply the timeouts.
      summary.baseline.push(`ordinary requests failed at the transport level (${broken[0]!.error?.message ?? 'no response'}): no generated request sent`);
      summary.stoppedByTransport = broken.length;
      summary.planned = 0;
      summary.durationMs = Math.round(performance.now() - started);
      return { summary, findings: [] };
    }
    if (base.completion.size) summary.baseline.push(`an ordinary completion already breaks ${[...base.completion].join(', ')}: left to the fixed probes`);
    if (base.stream.size) summary.baseline.push(`an ordinary stream already breaks ${[...base.stream].join(', ')}: left to the fixed probes`);
    if (base.errorBodyBroken) summary.baseline.push('an ordinary 400 already lacks a proper error body: error bodies left to the fixed probes and the run-wide ERR-1');
  }
  const judge = (c: FuzzCase, ex: Exchange) => judgeWith(c, ex, base);

  // Replay: exactly one request, the one a report named, judged by the same oracles.
  if (replay) {
    const isCoverage = replay.path.startsWith('c');
    const s = isCoverage ? 0 : caseSeed(seed, replay.caseIndex);
    const c = isCoverage ? coverageCaseAt(coverageCases(covOpts), replay.caseIndex, replay.path) : caseAt(arb, s, replay.path);
    const ex = await o.send(requestFor(c, o));
    tally(c, ex);
    summary.replay = `${replay.caseIndex}@${replay.path}`;
    const findings = judge(c, ex).map((b) => makeFinding(b, c, ex, replay.caseIndex, s, replay.path, 1, 0, ['replayed (not shrunk again)'], 'replayed'));
    summary.rawFailures = findings.length;
    summary.sendMs = summary.durationMs = Math.round(performance.now() - started);
    return { summary, findings };
  }

  // 0. The coverage phase: the fixed list, every seed the same, before anything random.
  const covList = o.coverage === false ? [] : coverageCases(covOpts);
  summary.coverage.planned = covList.length;
  summary.coverage.probes = covList.reduce((n, c) => n + c.probes.length, 0);
  const covRaws: Array<Raw & { cc: CoverageCase }> = [];
  let transportFailures = 0;
  const sendAll = async (count: number, one: (i: number) => Promise<void>) => {
    let next = 0;
    const worker = async () => {
      for (;;) {
        // A target that hangs, resets or never closes would hold the phase for runs x TIMEOUT_MS:
        // a few such failures are enough to report (the fixed probes say more about them).
        if (transportFailures >= MAX_TRANSPORT_FAILURES) { summary.stoppedByTransport = transportFailures; return; }
        const i = next++;
        if (i >= count) return;
        if (now() > sendDeadline) { summary.stoppedByTimeCap = true; return; }
        await one(i);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(count, 1)) }, worker));
  };
  const sendOne = async (c: FuzzCase): Promise<Exchange> => {
    const ex = await o.send(requestFor(c, o));
    if (ex.status === undefined || ex.error) transportFailures++;
    tally(c, ex);
    return ex;
  };
  await sendAll(covList.length, async (k) => {
    const cc = covList[k]!;
    const ex = await sendOne(cc.case);
    summary.coverage.sent++;
    const breaches = judge(cc.case, ex);
    if (breaches.length) covRaws.push({ i: k, seed: 0, c: cc.case, ex, breaches, feats: new Set(features(cc.case.body)), cc });
  });

  // 1. The random phase: what the coverage phase left of FUZZ_RUNS, never less than a quarter of it.
  const randomRuns = randomBudget(runs, covList.length);
  summary.planned = randomRuns;
  const raws: Raw[] = [];
  await sendAll(randomRuns, async (i) => {
    const s = caseSeed(seed, i);
    const c = caseAt(arb, s, '0');
    const ex = await sendOne(c);
    const breaches = judge(c, ex);
    if (breaches.length) raws.push({ i, seed: s, c, ex, breaches, feats: new Set(features(c.body)) });
  });
  summary.sendMs = Math.round(performance.now() - started);
  raws.sort((a, b) => a.i - b.i);
  covRaws.sort((a, b) => a.i - b.i);
  summary.rawFailures = raws.length + covRaws.length;
  for (const raw of [...raws, ...covRaws]) for (const b of raw.breaches) count(summary.rawByClause, b.clause);
  const maxShrinks = o.maxShrinks ?? MAX_SHRINKS;

  const findings = new Map<string, Finding>();
  const keep = (f: Finding) => { if (!findings.has(f.signature)) findings.set(f.signature, f); };
  // A crash explained by a finding covers the other clauses' breaches of the same bug (a 500
  // on NUL text also "breaks" CHAT-2 for a body without model: downstream). CHAT-8 is the
  // exception: whether the parameters caused it shows only on a valid body.
  const coveredRaw = (raw: Raw, clause: FuzzClause) => [...findings.values()].some((f) => coveredBy(f, raw)
    && (f.clause === clause || clause !== 'CHAT-8' || (f.case.kind === 'valid' && f.case.route === raw.c.route)));
  const budget = o.shrinkBudget ?? 150;
  // Splitting packs and bisecting sizes share the shrink budget's requests, several times over.
  let splitLeft = budget * 2;

  // 2. Coverage failures: a pack is split (each probe alone), a size bisected; what is left
  // is the smallest coverage request that fails. Nothing random to shrink.
  for (const raw of covRaws) {
    const probes = raw.cc.probes;
    // A pack's many features make it look explained by findings that have nothing to do with
    // it: only a probe alone is checked against them (before it is sent: same status assumed).
    const open = probes.length > 1 ? raw.breaches : raw.breaches.filter((b) => !coveredRaw(raw, b.clause));
    if (!open.length) continue;
    const wanted = new Set(open.map((b) => b.clause));
    const resend = async (c: FuzzCase) => {
      if (splitLeft <= 0 || now() > deadline || summary.stoppedByTransport) return undefined;
      splitLeft--;
      summary.coverage.splitRequests++;
      const ex = await o.send(requestFor(c, o));
      const hit = ex.status === raw.ex.status ? judge(c, ex).filter((b) => wanted.has(b.clause)) : [];
      return { ex, hit };
    };
    let stopped = false;
    let explained = false;
    for (let j = 0; j < probes.length && probes.length > 1; j++) {
      const p = probes[j]!;
      const c = packCase([p]);
      const alone = (ex: Exchange, breaches: Breach[]): Raw => ({ i: raw.i, seed: 0, c, ex, breaches, feats: new Set(features(c.body)) });
      if (open.every((b) => coveredRaw(alone(raw.ex, open), b.clause))) { explained = true; continue; }
      const r = await resend(c);
      if (!r) { stopped = true; break; }
      const fresh = r.hit.filter((b) => !coveredRaw(alone(r.ex, r.hit), b.clause));
      if (r.hit.length && !fresh.length) explained = true;
      if (fresh.length) (await bisected(raw, j, c, r.ex, fresh, resend)).forEach(keep);
    }
    const made = probes.length === 1 ? await bisected(raw, 0, raw.c, raw.ex, open, resend, 'c') : [];
    const madeHere = [...findings.values()].some((f) => f.origin === 'coverage' && f.caseIndex === raw.i);
    if (!made.length && !madeHere && !explained) {
      // No probe fails alone (or the budget ran out): the pack as sent is the finding.
      const why = stopped ? 'not split: the shrink budget or the time cap was spent' : 'no probe of this request fails alone: together they do';
      for (const b of open) made.push(makeFinding(b, raw.c, raw.ex, raw.i, 0, 'c', 1, 0, probes.length > 1 ? [why] : [], 'coverage'));
    }
    made.forEach(keep);
  }

  async function bisected(raw: Raw & { cc: CoverageCase }, j: number, c: FuzzCase, ex: Exchange, hit: Breach[], resend: (c: FuzzCase) => Promise<{ ex: Exchange; hit: Breach[] } | undefined>, path = `c:${j}`): Promise<Finding[]> {
    const p = raw.cc.probes[j]!;
    let best = { c, ex, hit, path, requests: 0 };
    if (p.size) {
      // The smallest size that still fails: binary search between the probe's floor and its size.
      let lo = p.size.min, hi = p.size.n;
      while (lo < hi) {
        const mid = Math.floor((lo + hi) / 2);
        const cm = packCase([p], [mid]);
        const r = await resend(cm);
        if (!r) break;
        best.requests++;
        if (r.hit.length) { hi = mid; best = { ...best, c: cm, ex: r.ex, hit: r.hit, path: `c:${j}:${mid}` }; } else lo = mid + 1;
      }
    }
    const all = judge(best.c, best.ex);
    return best.hit.map((b) => makeFinding(all.find((x) => x.clause === b.clause) ?? b, best.c, best.ex, raw.i, 0, best.path, 1, best.requests, [], 'coverage'));
  }

  // 3. Random failures a finding already explains are its; the rest are grouped by
  // (clause, status, kind, route, streaming), the general clauses (ERR-2, ERR-1) first.
  type Member = { raw: Raw; breach: Breach };
  const groups = new Map<string, Member[]>();
  for (const raw of raws) {
    for (const breach of raw.breaches) {
      const key = `${breach.clause}|${statusKey(raw.ex)}|${raw.c.kind}|${raw.c.route}|${wantsStream(raw.c)}|${raw.c.raw !== undefined ? raw.c.label : ''}`;
      const list = groups.get(key) ?? [];
      list.push({ raw, breach });
      groups.set(key, list);
    }
  }
  // Valid bodies first, plain requests before streams, /chat/completions before the brain route:
  // the most ordinary failure is shrunk first and then covers the rest of its bug.
  const rank = (key: string) => {
    const [clause, , kind, route, stream] = key.split('|');
    return CLAUSE_ORDER.get(clause as FuzzClause)! * 1000 + KIND_ORDER.indexOf(kind!) * 10 + (route === 'brain' ? 2 : 0) + (stream === 'true' ? 1 : 0);
  };
  const byClause = new Map<string, Array<[string, Member[]]>>();
  for (const entry of [...groups.entries()].sort(([a], [b]) => rank(a) - rank(b))) {
    const clause = entry[0].split('|')[0]!;
    byClause.set(clause, [...(byClause.get(clause) ?? []), entry]);
  }
  // Per clause first: each clause's first group, then each one's second, ... so one noisy
  // clause cannot spend the shrinks another clause's failure needs.
  const ordered: Array<[string, Member[]]> = [];
  for (let r = 0; [...byClause.values()].some((l) => l.length > r); r++) for (const l of byClause.values()) if (l[r]) ordered.push(l[r]!);

  // 4. Shrink the smallest uncovered member of each group, at most 3 per group and
  // maxShrinks in all. The budget decides what is minimised, never whether a clause fails:
  // a group left uncovered is reported with the request that showed it.
  let shrinks = 0;
  const covered = (m: Member) => coveredRaw(m.raw, m.breach.clause);
  /** The finding standing for a group whose failures were not shrunk. */
  const unshrunkOf = new Map<string, Finding>();
  for (const [, members] of ordered) members.sort((a, b) => bytesOf(a.raw.c) - bytesOf(b.raw.c) || a.raw.i - b.raw.i);
  // Passes: every group's first shrink before any group's second.
  for (let k = 0; k < 3; k++) {
    for (const [key, members] of ordered) {
      const m = members.find((x) => !covered(x));
      if (!m) continue;
      if (summary.stoppedByTransport || shrinks >= maxShrinks || now() > deadline) {
        if (k > 0 || unshrunkOf.has(key)) continue;
        const why = summary.stoppedByTransport
          ? `not shrunk: the target failed ${summary.stoppedByTransport} generated requests at the transport level, so the fuzz phase stopped sending`
          : shrinks >= maxShrinks ? `not shrunk: the shrink budget (${maxShrinks} failures) was spent` : 'not shrunk: the time cap was reached';
        const f = makeFinding(m.breach, m.raw.c, m.raw.ex, m.raw.i, m.raw.seed, '0', 0, 0, [why], 'unshrunk');
        unshrunkOf.set(key, f);
        keep(f);
        continue;
      }
      shrinks++;
      const out = await shrink(arb, m, deadline, budget, o, judge);
      summary.shrinkRequests += out.requests;
      const all = judge(out.c, out.ex);
      // The shrunk request may break further clauses (a 500 on a parameter: ERR-2 and CHAT-8).
      const breaches = all.some((b) => b.clause === m.breach.clause) ? all : [m.breach, ...all];
      for (const b of breaches) {
        if (b.clause !== m.breach.clause && !groups.has(`${b.clause}|${statusKey(out.ex)}|${out.c.kind}|${out.c.route}|${wantsStream(out.c)}|${out.c.raw !== undefined ? out.c.label : ''}`)) continue;
        keep(makeFinding(b, out.c, out.ex, m.raw.i, m.raw.seed, out.path, 0, out.requests, out.notes, 'shrunk'));
      }
    }
  }
  summary.shrinks = shrinks;

  // 5. One bug, one finding: drop a finding another one of its clause and status explains
  // with fewer features (shrinking from two raw failures can stop at two local minima).
  for (const [sig, f] of [...findings]) {
    if (f.origin === 'unshrunk') continue;
    const feats = new Set(features(f.case.body));
    const general = [...findings.values()].find((g) => g !== f && g.clause === f.clause && g.status === f.status && g.origin !== 'unshrunk'
      && g.difference.length > 0 && g.difference.length < f.difference.length && coveredBy(g, { c: f.case, ex: f.exchange, feats } as Raw));
    if (general) findings.delete(sig);
  }

  // 6. Attribute every raw breach to the finding that covers it.
  const attribute = (raw: Raw, clause: string) => {
    const f = [...findings.values()].find((x) => x.clause === clause && (x.caseIndex === raw.i && x.origin !== 'coverage' || coveredBy(x, raw)))
      ?? [...findings.values()].find((x) => coveredBy(x, raw));
    if (f && f.clause === clause) f.rawCount++;
    else if (!f) summary.unattributed++;
  };
  for (const [key, members] of groups) {
    for (const m of members) {
      // A failure no finding explains belongs to its group's unshrunk one, when there is one.
      const standIn = unshrunkOf.get(key);
      if (standIn && findings.has(standIn.signature) && ![...findings.values()].some((x) => coveredBy(x, m.raw))) standIn.rawCount++;
      else attribute(m.raw, key.split('|')[0]!);
    }
  }
  for (const raw of covRaws) for (const b of raw.breaches) {
    const f = [...findings.values()].find((x) => x.clause === b.clause && x.origin === 'coverage' && x.caseIndex === raw.i);
    if (f) continue; // counted when made
    attribute(raw, b.clause);
  }
  summary.durationMs = Math.round(performance.now() - started);
  const list = [...findings.values()].sort((a, b) => CLAUSE_ORDER.get(a.clause)! - CLAUSE_ORDER.get(b.clause)! || a.signature.localeCompare(b.signature));
  return { summary, findings: list };

  function makeFinding(b: Breach, c: FuzzCase, ex: Exchange, i: number, s: number, path: string, rawCount: number, requests: number, notes: string[], origin: Finding['origin']): Finding {
    const diff = difference(c);
    return {
      clause: b.clause, signature: signature(b.clause, ex.status, c, diff), status: ex.status, expected: b.expected, seen: b.seen,
      case: c, caseIndex: i, caseSeed: s, path, replay: replayCommand(i, path), exchange: ex, bytes: bytesOf(c), fields: fieldsOf(c),
      difference: diff, rawCount, shrinkRequests: requests, notes, origin,
    };
  }
}

interface Shrunk { c: FuzzCase; ex: Exchange; path: string; requests: number; notes: string[] }

/**
 * Shrinks one raw failure: fc.check replays its case seed at path "0" and shrinks while
 * the same clause breaks with the same status (same kind, route and streaming). Past the
 * budget or the deadline every candidate counts as passing, so the smallest failure
 * actually seen is kept: a report never shows a request that was not sent.
 */
async function shrink(arb: fc.Arbitrary<FuzzCase>, m: { raw: Raw; breach: Breach }, deadline: number, budget: number, o: CampaignOptions, judge: (c: FuzzCase, ex: Exchange) => Breach[]): Promise<Shrunk> {
  const want = { clause: m.breach.clause, status: m.raw.ex.status, kind: m.raw.c.kind, route: m.raw.c.route, stream: wantsStream(m.raw.c), label: m.raw.c.raw !== undefined ? m.raw.c.label : undefined };
  let requests = 0;
  let stopped: string | undefined;
  let best: { c: FuzzCase; ex: Exchange } = { c: m.raw.c, ex: m.raw.ex };
  const prop = fc.asyncProperty(arb, async (c) => {
    if (c.kind !== want.kind || c.route !== want.route || wantsStream(c) !== want.stream || (want.label !== undefined && c.label !== want.label)) return true;
    if (requests >= budget) { stopped ??= `shrinking stopped after ${budget} requests`; return true; }
    if ((o.clock ?? performance.now.bind(performance))() > deadline) { stopped ??= 'shrinking stopped at the time cap'; return true; }
    requests++;
    const ex = await o.send(requestFor(c, o));
    if (ex.status !== want.status || !judge(c, ex).some((b) => b.clause === want.clause)) return true;
    best = { c, ex };
    return false;
  });
  const r = await fc.check(prop, { seed: m.raw.seed, path: '0', numRuns: 1, endOnFailure: false });
  const notes: string[] = [];
  if (stopped) notes.push(stopped);
  if (!r.failed) {
    notes.push('did not fail again when replayed: reported as first seen, not shrunk');
    return { c: m.raw.c, ex: m.raw.ex, path: '0', requests, notes };
  }
  return { c: best.c, ex: best.ex, path: r.counterexamplePath ?? '0', requests, notes };
}
