// What a person reads in the terminal: one line per clause (its worst outcome over
// its tests), the client x operation matrix when tests fill one, then each failure
// h2spec-style (requirement, expected, seen) with a curl line that reproduces it,
// then the totals, what changed since the previous run, and the verdict: a rendering
// of the report model (model.ts).
import { SECTIONS } from '../../lib/spec/clauses.ts';
import { harnessErrorAdvice } from '../../lib/run/verdicts.ts';
import { redact } from '../../lib/run/redact.ts';
import { LABEL, oneLine, outcome, reasonOf, type ClauseOutcome, type ClauseRow } from './outcomes.ts';
import type { ReportModel } from './model.ts';

const COLOR: Record<ClauseOutcome, string> = {
  error: '1;35', fail: '31', 'unexpected-pass': '31', flaky: '33', warn: '33', 'expected-fail': '34', inconclusive: '35',
  skip: '90', info: '36', pass: '32', 'no-test': '90', 'not-selected': '90',
};

export function renderConsole(model: ReportModel, opts: { color?: boolean } = {}): string {
  const { results, rows, matrix } = model;
  const paint = (o: ClauseOutcome, s: string) => (opts.color ? `\x1b[${COLOR[o]}m${s}\x1b[0m` : s);
  const lines: string[] = [`chatgate: ${results.target}`, `mode: ${model.lines.mode}`, ''];
  const selected = rows.filter((r) => r.outcome !== 'not-selected');
  let section = '';
  for (const r of selected) {
    if (r.section !== section) { section = r.section; lines.push(`${section}: ${SECTIONS[section as keyof typeof SECTIONS] ?? ''}`); }
    lines.push(clauseLine(r, paint));
  }
  if (selected.length < rows.length) lines.push(`(${rows.length - selected.length} clauses not selected)`);

  if (matrix) {
    const width = Math.max(6, ...matrix.clients.map((c) => c.length));
    const colW = matrix.operations.map((o) => Math.max(o.length, 15));
    lines.push('', 'Client x operation:', `  ${''.padEnd(width)}  ${matrix.operations.map((o, i) => o.padEnd(colW[i]!)).join('  ')}`);
    for (const c of matrix.clients) {
      const cells = matrix.operations.map((o, i) => {
        const w = matrix.cell(c, o).worst;
        return w ? paint(w, LABEL[w].toUpperCase().padEnd(colW[i]!)) : '-'.padEnd(colW[i]!);
      });
      lines.push(`  ${c.padEnd(width)}  ${cells.join('  ')}`);
    }
  }

  // Harness errors apart from the target's failures: they say nothing about the target.
  const errors = model.harnessErrors;
  if (errors.length) {
    lines.push('', `Harness errors (${errors.length}): the run could not judge these tests; they fail the run`);
    for (const t of errors) {
      lines.push('', `  ${paint('error', `ERROR ${t.title}`)}`, `    ${oneLine(harnessErrorAdvice(oneLine(t.message, 300)), 600)}`);
    }
  }
  const shown = model.failures;
  if (shown.length) {
    lines.push('', `Failures (${shown.length}):`);
    for (const t of shown) {
      lines.push('', `  ${paint(outcome(t), `${LABEL[outcome(t)].toUpperCase()} ${t.title}`)}`, `    requirement: ${t.requirement}`);
      if (t.expected) lines.push(`    expected:    ${t.expected}`, `    seen:        ${t.seen}`);
      else if (t.message) lines.push(`    seen:        ${oneLine(t.message, 400)}`);
      if (t.verdict === 'flaky') lines.push(`    attempts:    ${(t.attempts ?? []).map((a) => a.verdict).join(', ')}`);
      if (t.curl) lines.push(`    reproduce:   ${t.curl}`);
    }
  }
  const unexpected = results.expectations?.unexpectedPass ?? [];
  if (unexpected.length) {
    const action = results.expectations!.updated ? `removed from ${results.expectations!.file} (--update-expectations)` : `remove them from ${results.expectations!.file}, or run with --update-expectations`;
    lines.push('', `Unexpected passes (${unexpected.length}): ${unexpected.join(', ')} - listed as known failures but passed; ${action}`);
  }

  const s = results.summary;
  const expected = results.expectations?.expectedFail ?? 0;
  lines.push('', `${s.pass} passed, ${s.fail} failed${expected ? ` (${expected} expected)` : ''}, ${s.error ?? 0} errors, ${s.flaky ?? 0} flaky, ${s.warn} warnings, ${s.info} info, ${s.inconclusive} inconclusive, ${s.skip} skipped (${results.tests.length} tests, ${(results.durationMs / 1000).toFixed(1)} s, Node ${results.chatgate.node})`);
  if (model.lines.throttle) lines.push(model.lines.throttle);
  if (model.lines.targetDown) lines.push(model.lines.targetDown);
  lines.push(model.lines.comparison);
  lines.push(model.lines.verdict);
  return redact(lines.join('\n'));
}

function clauseLine(r: ClauseRow, paint: (o: ClauseOutcome, s: string) => string): string {
  const label = paint(r.outcome, LABEL[r.outcome].toUpperCase().padEnd(15));
  if (r.tests.length === 0) return `  ${label} ${r.id.padEnd(9)} ${r.requirement}`;
  const o = r.outcome as ReturnType<typeof outcome>;
  const bad = r.counts[o] ?? 0;
  const count = r.tests.length > 1 ? ` (${o === 'pass' ? r.tests.length : `${bad}/${r.tests.length}`} tests)` : '';
  const first = r.tests.find((t) => outcome(t) === o)!;
  const why = o === 'pass' ? '' : ` - ${oneLine(reasonOf(first), 140)}`;
  return `  ${label} ${r.id.padEnd(9)} ${r.level.padEnd(6)} ${r.requirement}${count}${why}`;
}
