// A pass needs evidence, test by test. The whole suite (client libraries included, fuzz
// phase off) runs against servers that leave tests less to judge than the reference
// does, and each run is compared with the plain reference's, test by test:
// - legal sparse servers (variants): no rate limit within reach, capped requests that
//   get no text, every connection closed as announced. Nothing fails, the run exits 0,
//   and exactly the passes the variant declares (reference/variants.ts lessEvidence) turn
//   `inconclusive`, each with a reason naming what was missing; a declared test that
//   still passed would be a pass on no evidence.
// - sparse servers the spec does not allow (defects): an empty model list while the
//   configured models answer (RES-MOD-1), streams without a content delta (EV-4). Only
//   the broken clause fails; the tests that lost their evidence through it (MOD-1's entry
//   object, the client cells that carried what they got, EV-12) are `inconclusive` naming
//   it, neither pass nor fail.
// Everywhere: no `error`, and every pass made at least one judged check (`checks` in
// results.json; reaching the server counts none). The run-wide records are the runner's,
// judged per exchange under their own evidence rule (runner/run-wide-checks.ts).
// Cost: six suite runs, two at a time.
import { describe, expect, it } from 'vitest';
import { VARIANTS } from '../../reference/variants.ts';
import type { ReferenceOptions } from '../../reference/options.ts';
import { countsAsPassing, type Results } from '../../lib/run/verdicts.ts';
import { runSuite, type SuiteRun } from '../support/run-suite.ts';
import { referenceTarget } from '../support/targets.ts';
import { limiter, HANG_GUARD_MS } from '../support/limit.ts';

const slot = limiter(2);
const ENV = { TIMEOUT_MS: '10000', FUZZ_RUNS: '0' };

function run(server: ReferenceOptions): Promise<SuiteRun> {
  return slot(async () => {
    const target = await referenceTarget(server);
    try { return await runSuite({ ...target.env, ...ENV }); } finally { await target.close(); }
  });
}

let baseline: Promise<Results> | undefined;
function referenceRun(): Promise<Results> {
  baseline ??= run({}).then((r) => {
    if (!r.results) throw new Error(`the reference run wrote no results.json: ${r.stderr.slice(0, 500)}`);
    return r.results;
  });
  return baseline;
}

interface Sparse {
  name: string;
  server: ReferenceOptions;
  /** Clauses the server breaks: they, and only they, fail. */
  fails: string[];
  /** SHOULD clauses that judge the same breach on another request of their own, and why. */
  warns?: Record<string, string>;
  /** The passes of the reference run this server leaves without evidence: [test id, the reason the verdict gives]. */
  lost: Array<[RegExp, RegExp]>;
}

const exact = (id: string) => new RegExp(`^${id.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`);
const declared = (variant: string, reason: RegExp): Array<[RegExp, RegExp]> =>
  Object.keys(VARIANTS[variant]!.lessEvidence ?? {}).map((id) => [exact(id), reason]);

const CASES: Sparse[] = [
  { name: 'variant no-rate-limit', server: { variants: ['no-rate-limit'] }, fails: [], lost: declared('no-rate-limit', /no 429/) },
  { name: 'variant capped-empty-reply', server: { variants: ['capped-empty-reply'] }, fails: [], lost: [] },
  { name: 'variant connection-close', server: { variants: ['connection-close'] }, fails: [], lost: declared('connection-close', /announced Connection: close, so no connection was left open/) },
  {
    name: 'defect models-empty-list', server: { defect: 'models-empty-list' }, fails: ['RES-MOD-1'],
    lost: [
      [exact('models/entry-object'), /the model list has no entries, so no entry's object to judge/],
      [/^clients\/[^/]+\/models$/, /the server's GET \/models does not list "svc-auto", "svc" \(0 entries\): see RES-MOD-1/],
    ],
  },
  {
    name: 'defect stream-empty-content', server: { defect: 'stream-empty-content' }, fails: ['EV-4'],
    warns: { 'BRAIN-5': 'the brain stream carries no content either, and BRAIN-5 judges that stream itself' },
    lost: [
      [exact('events/snapshot-deltas'), /no content delta to judge \(see EV-4\)/],
      [/^clients\/[^/]+\/stream$/, /the server's stream carried no content delta: see EV-4/],
    ],
  },
];

describe.concurrent('sparse servers: no pass without evidence', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const [reference, sparse] = await Promise.all([referenceRun(), run(c.server)]);
      const tests = sparse.results?.tests ?? [];
      expect(tests.length, sparse.stderr.slice(0, 500)).toBeGreaterThan(150);
      expect(tests.filter((t) => t.verdict === 'error').map((t) => `${t.id}: ${t.message}`)).toEqual([]);
      expect(sparse.clauses('fail'), 'the clauses that fail: the server\'s own breach, nothing downstream').toEqual([...c.fails].sort());
      expect(sparse.clauses('warn')).toEqual(Object.keys(c.warns ?? {}).sort());
      expect(sparse.exitCode).toBe(c.fails.length ? 1 : 0);

      // Every pass judged something.
      const unjudged = tests.filter((t) => countsAsPassing(t) && !t.id.startsWith('run-wide/') && !((t.checks ?? 0) > 0));
      expect(unjudged.map((t) => `${t.id}: ${t.verdict} with ${t.checks ?? 'no'} checks`)).toEqual([]);

      // The passes this server took away: exactly the declared ones, inconclusive with their reason.
      const now = new Map(tests.map((t) => [t.id, t]));
      const broken = new Set([...c.fails, ...Object.keys(c.warns ?? {})]);
      const lost = reference.tests.filter((t) => countsAsPassing(t) && !broken.has(t.clause) && !countsAsPassing(now.get(t.id) ?? { verdict: 'skip' }));
      for (const t of lost) {
        const v = now.get(t.id);
        const entry = c.lost.find(([id]) => id.test(t.id));
        expect(entry, `${t.id}: ${t.verdict} on the reference, ${v?.verdict ?? 'not run'} here (${v?.message ?? ''}), and not declared`).toBeDefined();
        expect(`${t.id}: ${v?.verdict} ${v?.message ?? ''}`).toMatch(new RegExp(`^[^:]+: inconclusive .*${entry![1].source}`));
      }
      // Each declaration was met: a declared test that still passed here would be a pass on no evidence.
      for (const [id] of c.lost) {
        const passedOnReference = reference.tests.filter((t) => id.test(t.id) && countsAsPassing(t));
        for (const t of passedOnReference) expect(lost.map((l) => l.id), `${t.id} still ${now.get(t.id)?.verdict} here`).toContain(t.id);
      }
      if (c.lost.length) expect(lost.length, 'tests that lost their evidence').toBeGreaterThan(0);
    }, HANG_GUARD_MS);
  }
});
