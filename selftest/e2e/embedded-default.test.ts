// `npm ci && npm test` on a fresh machine: the suite against the embedded reference
// server passes, with no skip, and covers every MUST/COMPAT clause of the registry.
import { describe, expect, it } from 'vitest';
import { CLAUSES } from '../../lib/spec/clauses.ts';
import { runSuite, type SuiteRun } from '../support/run-suite.ts';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HANG_GUARD_MS } from '../support/limit.ts';

let run: SuiteRun;
/** openai 7 needs Node >= 22: on Node 20 its cells are skipped with that reason, as issue 4 asks. */
const nodeTooOld = (t: { verdict: string; message?: string }) => t.verdict === 'skip' && /^openai 7 requires Node >= 22/.test(t.message ?? '');

describe('npm test against the embedded reference server', () => {
  it('exits 0 with no fail, no warn and no skip (but a client major this Node cannot run)', async () => {
    run = await runSuite({});
    const bad = run.results?.tests
      .filter((t) => ['fail', 'warn', 'skip'].includes(t.verdict) && !nodeTooOld(t))
      .map((t) => `${t.verdict} ${t.title}: ${t.message}`);
    expect(bad, run.stderr).toEqual([]);
    expect(run.exitCode).toBe(0);
  }, HANG_GUARD_MS);

  it('has a test for every clause of the registry, MUST and COMPAT ones judged pass', () => {
    const byClause = new Map<string, string[]>();
    for (const t of run.results!.tests) byClause.set(t.clause, [...(byClause.get(t.clause) ?? []), t.verdict]);
    for (const [id, def] of Object.entries(CLAUSES)) {
      expect(byClause.has(id), `no test for ${id}`).toBe(true);
      if (def.level === 'MUST' || def.level === 'COMPAT') {
        // ERR-4 can only be judged when a 503 was seen; the reference does not shed load in a normal run.
        const allowed = id === 'ERR-4' ? ['pass', 'inconclusive'] : ['pass'];
        expect(byClause.get(id)!.every((v) => allowed.includes(v)), `${id}: ${byClause.get(id)}`).toBe(true);
      }
    }
  });

  it('writes results.json in the documented shape, and junit.xml', () => {
    const r = run.results!;
    expect(r.target).toMatch(/^embedded reference server http:\/\/127\.0\.0\.1:\d+\/v1/);
    expect(Object.keys(r.summary).sort()).toEqual(['error', 'fail', 'flaky', 'inconclusive', 'info', 'pass', 'skip', 'warn']);
    // No harness error on the embedded default: every test reached a verdict of its own.
    expect(r.tests.filter((t) => t.verdict === 'error').map((t) => `${t.title}: ${t.message}`)).toEqual([]);
    expect(r.summary.pass + r.summary.info + r.summary.inconclusive + r.tests.filter(nodeTooOld).length).toBe(r.tests.length);
    for (const t of r.tests) {
      expect(t.title.startsWith(`${t.clause} `), t.title).toBe(true);
      expect(t).toHaveProperty('id');
      expect(t).toHaveProperty('level');
    }
    expect(new Set(r.tests.map((t) => t.id)).size).toBe(r.tests.length);
    const junit = readFileSync(join(run.reportsDir, 'latest/junit.xml'), 'utf8');
    expect(junit).toContain('<testsuites');
    expect(junit).not.toContain('<failure');
    expect(existsSync(join(run.reportsDir, 'runs'))).toBe(true);
  });

  it('prints one line per clause and the totals', () => {
    for (const id of Object.keys(CLAUSES)) expect(run.stdout).toMatch(new RegExp(`\\b${id}\\s`));
    expect(run.stdout).toMatch(/\d+ passed, 0 failed/);
    expect(run.stdout).toContain('verdict: PASS');
  });
});
