// reports/latest/summary.md (the runner also appends it to $GITHUB_STEP_SUMMARY): the verdict, a table of outcomes by spec section, the failing clauses
// with one-line reasons, what changed since the previous run, the client x
// operation matrix when tests fill one, and the coverage of every clause (folded).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { harnessErrorAdvice, isHarnessError, type Results } from '../../lib/run/verdicts.ts';
import { redact } from '../../lib/run/redact.ts';
import { comparisonLine } from './history.ts';
import { throttleLine } from './throttle.ts';
import { targetDownLine } from '../../lib/run/target-down.ts';
import {
  LABEL, OUTCOMES, clauseRows, clientMatrix, failingTests, isFailing, modeLine, oneLine, outcome, outcomeCounts, reasonOf,
  sectionTable, worst, type ClauseOutcome,
} from './outcomes.ts';
import { verdictLine } from './console.ts';

const ICON: Record<ClauseOutcome, string> = {
  error: '💥', fail: '❌', 'unexpected-pass': '❗', flaky: '🔁', warn: '⚠️', 'expected-fail': '☑️', inconclusive: '❔',
  skip: '⏭️', info: 'ℹ️', pass: '✅', 'no-test': '∅', 'not-selected': '·',
};

/** Text from targets and the registry: "<uuid>" must not read as an HTML tag. */
const text = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/** Table cells: no pipes or newlines may break the row. */
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const code = (s: string) => `\`${s.replace(/`/g, 'ˋ')}\``;
const row = (cells: Array<string | number>) => `| ${cells.map((c) => cell(String(c))).join(' | ')} |`;

export function renderMarkdown(results: Results): string {
  const rows = clauseRows(results);
  const counts = outcomeCounts(results.tests);
  const shownOutcomes = OUTCOMES.filter((o) => counts[o] > 0 || ['pass', 'fail'].includes(o));
  const out: string[] = [];
  const passed = results.exitCode === 0;
  out.push(`## chatgate: ${results.incomplete ? '⚠️ INCOMPLETE' : passed ? '✅ PASS' : '❌ FAIL'}`, '');
  out.push(`**Target:** ${text(results.target)}  `, `**Mode:** ${text(modeLine(results))}  `,
    `**Run:** ${results.startedAt}, ${(results.durationMs / 1000).toFixed(1)} s, ${results.tests.length} tests, chatgate ${results.chatgate.version} on Node ${results.chatgate.node}  `,
    `**${verdictLine(results)}**  `, `${capitalise(comparisonLine(results.comparison))}`, '');
  const throttled = throttleLine(results);
  if (throttled) out.splice(out.length - 2, 0, `${capitalise(text(throttled))}  `);

  out.push('### Outcomes by spec section', '');
  out.push(row(['Section', ...shownOutcomes.map((o) => `${ICON[o]} ${LABEL[o]}`), '∅ no test']));
  out.push(row(['---', ...shownOutcomes.map(() => '---:'), '---:']));
  for (const s of sectionTable(rows)) {
    if (s.clauses === 0) continue;
    out.push(row([`${s.section}: ${s.title}`, ...shownOutcomes.map((o) => s.counts[o] ?? 0), s.noTest]));
  }
  out.push(row(['**All**', ...shownOutcomes.map((o) => `**${counts[o]}**`), `**${rows.filter((r) => r.outcome === 'no-test').length}**`]), '');

  if (results.targetDown) out.push(`**${text(targetDownLine(results.targetDown, results.startedAt))}**`, '');
  const errors = results.tests.filter(isHarnessError);
  if (errors.length) {
    out.push(`### Harness errors (${errors.length})`, '', 'Not verdicts on the target: the run could not judge these tests, and they fail the run.', '');
    for (const t of errors) out.push(`- ${ICON.error} **${text(t.title)}**: ${text(oneLine(harnessErrorAdvice(oneLine(t.message, 300)), 500))}`);
    out.push('');
  }
  const failing = failingTests(results).filter((t) => !isHarnessError(t));
  const failingClauses = rows.filter((r) => r.tests.some((t) => failing.includes(t)));
  if (failingClauses.length) {
    out.push(`### Failing clauses (${failingClauses.length})`, '');
    for (const r of failingClauses) {
      const t = r.tests.find((x) => failing.includes(x))!;
      const n = r.tests.filter((x) => failing.includes(x)).length;
      out.push(`- ${ICON[outcome(t)]} **${r.id}** (${r.level}, ${LABEL[outcome(t)]}${n > 1 ? `, ${n} tests` : ''}): ${text(oneLine(reasonOf(t), 200))}`);
    }
    out.push('');
  }
  const others = rows.filter((r) => !failingClauses.includes(r) && r.tests.some((t) => ['expected-fail', 'flaky', 'warn'].includes(outcome(t)) && !isFailing(outcome(t), results)));
  if (others.length) {
    out.push('### Known failures, flaky tests and warnings (not failing the run)', '');
    for (const r of others) {
      const t = r.tests.find((x) => ['expected-fail', 'flaky', 'warn'].includes(outcome(x)))!;
      const why = text(t.expectation?.outcome === 'expected-fail' ? `known: ${t.expectation.reason}` : oneLine(reasonOf(t), 200));
      out.push(`- ${ICON[outcome(t)]} **${r.id}** (${LABEL[outcome(t)]}): ${why}`);
    }
    out.push('');
  }

  const matrix = clientMatrix(results);
  if (matrix) {
    out.push('### Client x operation', '');
    out.push(row(['Client', ...matrix.operations.map(text)]), row(['---', ...matrix.operations.map(() => ':---:')]));
    for (const c of matrix.clients) {
      out.push(row([text(c), ...matrix.operations.map((o) => {
        const w = worst(matrix.cell(c, o));
        return w ? `${ICON[w]} ${LABEL[w]}` : '-';
      })]));
    }
    out.push('');
  }

  out.push('<details><summary>Coverage: every clause of the registry</summary>', '');
  out.push(row(['Clause', 'Level', 'Result', 'Tests', 'Verdicts', 'Requirement']), row(['---', '---', '---', '---:', '---', '---']));
  for (const r of rows) {
    const verdicts = OUTCOMES.filter((o) => r.counts[o]).map((o) => `${r.counts[o]} ${LABEL[o]}`).join(', ') || '-';
    out.push(row([code(r.id), r.level, `${ICON[r.outcome]} ${LABEL[r.outcome]}`, r.tests.length, verdicts, text(r.requirement)]));
  }
  out.push('', '</details>', '');
  return redact(out.join('\n'));
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export function writeMarkdown(dir: string, results: Results): string {
  const file = join(dir, 'summary.md');
  writeFileSync(file, renderMarkdown(results));
  return file;
}
