// Verdicts that do not depend on the seed, in process (the suite's own
// runCampaign and verdict function, without the vitest wrapper and the other suites):
// 1. every fuzz-only seeded defect gets the same verdict on every fuzz clause for 10 seeds
//    at the default FUZZ_RUNS, coverage phase on, and each of its declared clauses fails;
// 2. a clause broken on more generated requests than the shrink budget, beside two
//    noisier ones, fails with the other two: shrinks go per clause first, and a failure
//    past the budget is reported as generated, with its request and curl;
// 3. the coverage phase is the same list for every seed and replays by its id.
import { afterAll, describe, expect, it } from 'vitest';
import { DEFECTS } from '../../reference/defects.ts';
import { startReferenceServer } from '../../reference/server.ts';
import { HttpClient } from '../../lib/http/http-client.ts';
import { FUZZ_DEFAULT_RUNS } from '../../lib/run/config.ts';
import { MAX_SHRINKS, runCampaign, type CampaignResult } from '../../fuzz/campaign.ts';
import { FUZZ_CLAUSES } from '../../fuzz/oracles.ts';
import { clauseOutcome } from '../../fuzz/verdict.ts';
import { fullCurl } from '../../fuzz/report.ts';
import { HANG_GUARD_MS, limiter } from '../support/limit.ts';
import { publishTable } from '../support/table.ts';

const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const FUZZ_ONLY = Object.entries(DEFECTS).filter(([, d]) => d.foundBy === 'fuzz');
const rows: string[][] = [];
/** Campaigns in process are CPU-bound: two defects at a time on the 2-core machine. */
const slot = limiter(2);

async function campaign(defect: string | undefined, seed: number, extra: { runs?: number; coverage?: boolean; maxShrinks?: number; replay?: { caseIndex: number; path: string } } = {}): Promise<CampaignResult> {
  const ref = await startReferenceServer({ defect: defect as never });
  const http = new HttpClient({ baseUrl: ref.url, timeoutMs: 10_000 });
  try {
    return await runCampaign({
      send: (spec) => http.send(spec), auth: { key: ref.keys.main }, models: ['svc-auto', 'svc'], brainId: ref.brainId,
      coverage: extra.coverage, maxShrinks: extra.maxShrinks,
      fuzz: { runs: extra.runs ?? FUZZ_DEFAULT_RUNS, seed, timeMs: 120_000, concurrency: 4, maxBodyBytes: 64 * 1024, replay: extra.replay },
    });
  } finally {
    await http.close();
    await ref.close();
  }
}

const verdicts = (r: CampaignResult) => FUZZ_CLAUSES.map((c) => `${c}:${clauseOutcome(r, c).verdict}`).join(' ');

describe.concurrent('the same verdicts for every seed', () => {
  for (const [name, defect] of FUZZ_ONLY) {
    it(`${name}: ${defect.clauses.join(', ')} fail for ${SEEDS.length} seeds, every clause the same`, () => slot(async () => {
      const started = performance.now();
      const seen = new Map<string, number[]>();
      for (const seed of SEEDS) {
        const r = await campaign(name, seed);
        expect(r.summary.coverage.sent, 'the whole coverage phase').toBe(r.summary.coverage.planned);
        for (const c of defect.clauses) expect(clauseOutcome(r, c as never).verdict, `${c} with seed ${seed}`).toBe('fail');
        const v = verdicts(r);
        seen.set(v, [...(seen.get(v) ?? []), seed]);
      }
      rows.push([name, defect.clauses.join(', '), String(seen.size), `${((performance.now() - started) / 1000).toFixed(1)} s`]);
      expect([...seen].map(([v, s]) => `seeds ${s.join(',')}: ${v.split(' ').filter((x) => !x.endsWith(':pass')).join(' ')}`)).toHaveLength(1);
    }), HANG_GUARD_MS);
  }
});

describe('every finding fails its clause', () => {
  it('a clause broken past the shrink budget beside two noisier ones fails, reported as generated', async () => {
    // The random phase alone (the coverage phase would find all three at once), with
    // enough requests that CHAT-6 breaks on more of them than the shrink budget.
    const r = await campaign('fuzz-noisy-three-clauses', 3, { runs: 1200, coverage: false, maxShrinks: 2 });
    const raw = r.summary.rawByClause;
    expect(raw['CHAT-6'], JSON.stringify(raw)).toBeGreaterThan(MAX_SHRINKS);
    expect(raw['ERR-2']!).toBeGreaterThan(raw['CHAT-6']!);
    expect(raw['ERR-1']!).toBeGreaterThan(raw['CHAT-6']!);
    for (const c of ['ERR-2', 'ERR-1', 'CHAT-6'] as const) expect(clauseOutcome(r, c).verdict, c).toBe('fail');
    expect(r.summary.shrinks).toBe(2);
    const unshrunk = r.findings.filter((f) => f.origin === 'unshrunk');
    expect(unshrunk.length).toBeGreaterThan(0);
    for (const f of unshrunk) {
      expect(f.notes.join(' ')).toContain('shrink budget');
      expect(fullCurl(f)).toMatch(/^curl .*--data-raw '/);
    }
    // Per clause first: with two shrinks, two different clauses got one each.
    expect(new Set(r.findings.filter((f) => f.origin === 'shrunk').map((f) => f.clause)).size).toBe(2);
  }, HANG_GUARD_MS);

  it('with the coverage phase on, all three fail at the default budget', async () => {
    const r = await campaign('fuzz-noisy-three-clauses', 1);
    for (const c of ['ERR-2', 'ERR-1', 'CHAT-6'] as const) expect(clauseOutcome(r, c).verdict, c).toBe('fail');
  }, HANG_GUARD_MS);
});

describe('the coverage phase', () => {
  it('is the same list for two seeds; a coverage finding replays by its id', async () => {
    const a = await campaign('fuzz-top-p-max-500', 11);
    const b = await campaign('fuzz-top-p-max-500', 12);
    expect(a.summary.coverage.planned).toBe(b.summary.coverage.planned);
    const mine = a.findings.filter((f) => f.origin === 'coverage' && f.clause === 'ERR-2');
    expect(mine.map((f) => `${f.caseIndex}@${f.path}`)).toEqual(b.findings.filter((f) => f.origin === "coverage" && f.clause === "ERR-2").map((f) => `${f.caseIndex}@${f.path}`));
    const f = mine[0]!;
    expect(f.case.body).toMatchObject({ top_p: 1 });
    expect(f.path).toMatch(/^c(:\d+){0,2}$/);
    const again = await campaign('fuzz-top-p-max-500', 99, { replay: { caseIndex: f.caseIndex, path: f.path } });
    expect(again.summary.sent).toBe(1);
    expect(again.findings.map((x) => x.signature)).toContain(f.signature);
  }, HANG_GUARD_MS);
});

afterAll(() => {
  if (!rows.length) return;
  publishTable('fuzz-seeds', 'Fuzz-only defects over 10 seeds (coverage phase on)', ['defect', 'declared clauses', 'distinct verdict sets', 'time (10 campaigns)'], rows,
    `${rows.filter((r) => r[2] === '1').length} of ${rows.length} defects got the same verdicts for seeds ${SEEDS.join(', ')} at FUZZ_RUNS=${FUZZ_DEFAULT_RUNS}.`);
});
