// Servers that differ from our reference in ways the spec allows must pass: the spec
// is the judge, not our reference's habits. Each reference variant, and an
// independently written server with its own legal choices, gets no `fail` verdict.
// The fuzz phase is off here: selftest/e2e/fuzz-defects.test.ts runs it against every
// variant and the independent server (in process, cheaper than a suite run each).
// Test by test, each variant's verdicts are compared with a run against the plain
// reference: a test that passes there may not be `error`, `inconclusive` or `skip` (or
// missing) on a variant unless the variant's declaration (reference/variants.ts,
// lessEvidence) names it and says why.
import { afterAll, describe, expect, it } from 'vitest';
import { VARIANTS } from '../../reference/variants.ts';
import { countsAsPassing, type Results } from '../../lib/run/verdicts.ts';
import { runSuite, type SuiteRun } from '../support/run-suite.ts';
import { referenceTarget, THROTTLED_COMBINATIONS, THROTTLING_VARIANTS } from '../support/targets.ts';
import { startIndependentServer, type IndependentServerOptions } from '../fixtures/independent-server.ts';
import { limiter, HANG_GUARD_MS } from '../support/limit.ts';
import { publishTable } from '../support/table.ts';
import { SECTION_FILES } from '../support/suite-files.ts';

const rows = new Map<string, string[]>();
const slot = limiter(2);

const ENV = { TIMEOUT_MS: '10000', FUZZ_RUNS: '0' };
// The reference and its variants run every suite file but the client suites: client-matrix.test.ts
// runs every legal variant with every client (SVC-4, SVC-4b) already, and here they only repeated
// it; the tight rate limits it leaves to whole-suite runs keep them here.
const WITHOUT_CLIENTS = [...SECTION_FILES, 'fuzz'];
const filesFor = (variant: string) => (THROTTLING_VARIANTS.includes(variant) ? [] : WITHOUT_CLIENTS);

/** The plain reference's run: the baseline every variant is compared with, test by test (run once, on first need). */
let baseline: Promise<Results> | undefined;
function referenceRun(): Promise<Results> {
  baseline ??= slot(async () => {
    const target = await referenceTarget({});
    try {
      const run = await runSuite({ ...target.env, ...ENV }, { args: WITHOUT_CLIENTS });
      if (!run.results) throw new Error(`the reference run wrote no results.json: ${run.stderr.slice(0, 500)}`);
      return run.results;
    } finally { await target.close(); }
  });
  return baseline;
}

/** Passes of the reference run this variant turned into error, inconclusive, skip or no test at all, without declaring why. */
function lostPasses(name: string, reference: Results, run: SuiteRun): string[] {
  const declared = Object.keys(VARIANTS[name]?.lessEvidence ?? {});
  const excused = (id: string) => declared.some((d) => (d.endsWith('/') ? id.startsWith(d) : id === d));
  const now = new Map((run.results?.tests ?? []).map((t) => [t.id, t]));
  const lost: string[] = [];
  for (const t of reference.tests) {
    if (!countsAsPassing(t) || excused(t.id)) continue;
    const v = now.get(t.id);
    if (!v) lost.push(`${t.id}: ${t.verdict} on the reference, not run on ${name}`);
    else if (v.verdict === 'error' || v.verdict === 'inconclusive' || v.verdict === 'skip') lost.push(`${t.id}: ${t.verdict} on the reference, ${v.verdict} on ${name}: ${v.message ?? ''}`.slice(0, 400));
  }
  return lost;
}

function judge(name: string, run: SuiteRun): void {
  const fails = run.results?.tests.filter((t) => t.verdict === 'fail').map((t) => `${t.title}: ${t.message}`) ?? ['no results.json'];
  const warns = run.clauses('warn');
  rows.set(name, [name, fails.length ? `${fails.length} FAIL` : 'clean', warns.join(', ') || '-', `${(run.wallMs / 1000).toFixed(1)} s`]);
  expect(fails, run.stderr.slice(0, 500)).toEqual([]);
  expect(run.exitCode).toBe(0);
}

// Variants that carry a legal shape a probe's rule must not mistake: there the probe's
// tests must pass (judged, not merely "not failed").
const MUST_PASS: Record<string, string[]> = {
  // EV-12 judges snapshots, not repetition: repeated words, one-character deltas of a
  // repetitive run, empty deltas, a role-only first chunk (repetitive-deltas), a single
  // chunk (one-chunk), a usage-only last chunk (the include_usage stream of every run).
  'repetitive-deltas': ['EV-12'],
  'one-chunk': ['EV-12'],
  'char-per-chunk': ['EV-12'],
  'role-chunk-null-content': ['EV-12'],
  // AUTH-9 judges keys sent as credentials: errors naming the request URL echo the
  // key-in-query probes' own key, which is no leak.
  'error-echoes-url': ['AUTH-9'],
  // UNAV-3 probes a route's path with an unknown segment after it, not one with a trailing slash;
  // the scope probes' spelled forms meet the route with its scope (AUTH-6's 403) or a 404.
  'route-trailing-slash': ['UNAV-3', 'AUTH-6', 'AUTH-7'],
  // AUTH-3's XBearer probe refuses another scheme, not the Bearer scheme in another case or spacing.
  'auth-lenient-bearer': ['AUTH-3'],
  // RES-CH-1's n: 2 probe judges the choices it gets: one choice (n ignored) is legal.
  'n-ignored': ['RES-CH-1'],
  // A reply in the request's non-ASCII text arrives whole.
  'reply-in-kind': ['CHAT-1'],
  // SVC-9 judges whose reply is whose by what the target gives: no echo, a count of its own.
  'never-echoes': ['SVC-9'],
  'usage-own-count': ['SVC-9'],
  'no-usage-chunk': ['SVC-9'],
  // Content judged on every reply: under a cap, content "" with finish_reason "length" is a string (and a
  // stream's "" delta); the run-wide RES-MSG-1 and EV-4 records appear only on a breach, which no `fail` rules out.
  'capped-empty-reply': ['RES-MSG-1'],
  // CHAT-3 rules a missing or non-array messages, not an empty array (the coverage phase sends one: FUZZ_ON).
  'empty-messages-accepted': ['CHAT-3'],
  // Near misses refused another legal way: a BOM read past, a case-variant key named in the 400.
  'json-bom-tolerated': ['CHAT-6'],
  'case-variant-keys-refused': ['CHAT-2', 'CHAT-3', 'CHAT-4'],
};

/** Variants whose legal shape the fuzz phase's coverage requests meet (its tests of their MUST_PASS clauses too): run with it on (default budget, fixed seed). */
const FUZZ = { FUZZ_RUNS: '200', FUZZ_SEED: '1' };
const FUZZ_ON: Record<string, Record<string, string>> = {
  'empty-messages-accepted': FUZZ,
  'json-bom-tolerated': FUZZ,
  'case-variant-keys-refused': FUZZ,
};

describe.concurrent('legal variants of the reference server pass', () => {
  // The tight limits of THROTTLED_COMBINATIONS meet a stricter test in throttled-variants.test.ts.
  const throttledElsewhere = new Set(THROTTLED_COMBINATIONS.map(([, v]) => v[0]!));
  for (const name of Object.keys(VARIANTS).filter((v) => !throttledElsewhere.has(v))) {
    it(name, async () => {
      await slot(async () => {
        const target = await referenceTarget({ variants: [name] });
        try { return await runSuite({ ...target.env, ...ENV, ...FUZZ_ON[name] }, { args: filesFor(name) }); } finally { await target.close(); }
      }).then(async (run) => {
        judge(name, run);
        const lost = lostPasses(name, await referenceRun(), run);
        if (lost.length) rows.set(name, [name, `${lost.length} passes lost`, ...rows.get(name)!.slice(2)]);
        expect(lost, 'passes of the reference run lost without a declaration (reference/variants.ts lessEvidence)').toEqual([]);
        for (const clause of MUST_PASS[name] ?? []) {
          const tests = run.results!.tests.filter((t) => t.clause === clause);
          expect(tests.length, `tests of ${clause}`).toBeGreaterThan(0);
          for (const t of tests) expect(`${t.title}: ${t.verdict} ${t.message ?? ''}`).toMatch(/: pass /);
        }
      });
    }, HANG_GUARD_MS);
  }
});

describe.concurrent('an independently written conformant server passes', () => {
  const keys = { main: 'sk-indep-main-5f0c2a9e7d1b4c3a', limited: 'sk-indep-limited-8e2d4f6a1c3b', rateLimit: 'sk-indep-rate-3a7c9e1f5b2d' };
  const brainId = '6a0f3c2e-8b1d-4e5f-9a7c-2d4b6e8f0a1c';
  const choices: Array<[string, IndependentServerOptions['choices']]> = [
    ['independent: CRLF, comments, id:/retry: fields', {}],
    ['independent: CR line ends, one chunk, gzip', { lineEnd: '\r', oneChunk: true, gzip: true }],
    ['independent: LF, gzip', { lineEnd: '\n', gzip: true }],
  ];
  for (const [name, c] of choices) {
    it(name, async () => {
      await slot(async () => {
        const srv = await startIndependentServer({ keys, brainId, choices: c });
        try {
          judge(name, await runSuite({ TARGET_URL: srv.url, API_KEY: keys.main, LIMITED_API_KEY: keys.limited, RATE_LIMIT_API_KEY: keys.rateLimit, BRAIN_ID: brainId, TIMEOUT_MS: '10000', FUZZ_RUNS: '0' }));
        } finally { await srv.close(); }
      });
    }, HANG_GUARD_MS);
  }
});

afterAll(() => {
  const all = [...rows.values()].sort((a, b) => a[0]!.localeCompare(b[0]!));
  publishTable('variants', 'Legal variants', ['variant', 'verdict', 'SHOULD warnings', 'run time'], all,
    `${all.filter((r) => r[1] === 'clean').length} of ${all.length} legal variants clean (no fail).`);
});
