// What a person reads in the terminal: one line per clause (its worst verdict over
// its tests), then each failure h2spec-style (requirement, expected, seen) with a
// curl line that reproduces it, then the totals.
import { CLAUSES, SECTIONS, type ClauseId } from '../../lib/clauses.ts';
import type { Results, TestRecord, Verdict } from '../../lib/verdicts.ts';
import { redact } from '../../lib/redact.ts';

/** Worst first: a clause shows the worst verdict among its tests. */
export const SEVERITY: Verdict[] = ['fail', 'warn', 'inconclusive', 'skip', 'info', 'pass'];

export function clauseVerdict(tests: TestRecord[]): Verdict {
  return SEVERITY.find((v) => tests.some((t) => t.verdict === v)) ?? 'skip';
}

export function byClause(results: Results): Map<string, TestRecord[]> {
  const map = new Map<string, TestRecord[]>();
  for (const id of Object.keys(CLAUSES)) map.set(id, []);
  for (const t of results.tests) map.set(t.clause, [...(map.get(t.clause) ?? []), t]);
  return map;
}

const COLOR: Record<Verdict, string> = { fail: '31', warn: '33', inconclusive: '35', skip: '90', info: '36', pass: '32' };

export function renderConsole(results: Results, opts: { color?: boolean } = {}): string {
  const paint = (v: Verdict, s: string) => (opts.color ? `\x1b[${COLOR[v]}m${s}\x1b[0m` : s);
  const lines: string[] = [`chatgate: ${results.target}${results.strict ? ' (strict: SHOULD warnings fail the run)' : ''}`, ''];
  let section = '';
  for (const [id, tests] of byClause(results)) {
    const def = CLAUSES[id as ClauseId];
    if (def && def.section !== section) { section = def.section; lines.push(`${section}: ${SECTIONS[def.section]}`); }
    if (tests.length === 0) { lines.push(`  ${paint('skip', 'NO TEST'.padEnd(12))} ${id.padEnd(9)} ${def?.requirement ?? ''}`); continue; }
    const v = clauseVerdict(tests);
    const bad = tests.filter((t) => t.verdict === v).length;
    const count = tests.length > 1 ? ` (${v === 'pass' ? tests.length : `${bad}/${tests.length}`} tests)` : '';
    const why = v === 'pass' ? '' : ` - ${tests.find((t) => t.verdict === v)?.message?.split('\n')[0]?.slice(0, 140) ?? ''}`;
    lines.push(`  ${paint(v, v.toUpperCase().padEnd(12))} ${id.padEnd(9)} ${(def?.level ?? '').padEnd(6)} ${def?.requirement ?? ''}${count}${why}`);
  }
  const failing = results.tests.filter((t) => t.verdict === 'fail' || (results.strict && t.verdict === 'warn'));
  if (failing.length) {
    lines.push('', `Failures (${failing.length}):`);
    for (const t of failing) {
      lines.push('', `  ${paint('fail', `${t.verdict.toUpperCase()} ${t.title}`)}`, `    requirement: ${t.requirement}`);
      if (t.expected) lines.push(`    expected:    ${t.expected}`, `    seen:        ${t.seen}`);
      else if (t.message) lines.push(`    seen:        ${t.message.split('\n')[0]}`);
      if (t.curl) lines.push(`    reproduce:   ${t.curl}`);
    }
  }
  const s = results.summary;
  lines.push('', `${s.pass} passed, ${s.fail} failed, ${s.warn} warnings, ${s.info} info, ${s.inconclusive} inconclusive, ${s.skip} skipped (${results.tests.length} tests, ${(results.durationMs / 1000).toFixed(1)} s)`);
  lines.push(results.exitCode === 0 ? 'verdict: PASS' : `verdict: FAIL (${failing.length} failing test${failing.length === 1 ? '' : 's'})`);
  return redact(lines.join('\n'));
}
