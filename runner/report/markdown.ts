// reports/latest/summary.md (the runner also appends it to $GITHUB_STEP_SUMMARY): the verdict, a table of outcomes by spec section, the failing clauses
// with one-line reasons, what changed since the previous run, the client x
// operation matrix when tests fill one, and the coverage of every clause (folded).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { harnessErrorAdvice } from '../../lib/run/verdicts.ts';
import { redact } from '../../lib/run/redact.ts';
import { LABEL, OUTCOMES, oneLine, outcome, reasonOf, type ClauseOutcome } from './outcomes.ts';
import type { ReportModel } from './model.ts';

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

export function renderMarkdown(model: ReportModel): string {
  const { results, rows, counts, matrix } = model;
  const shownOutcomes = model.totalsShown;
  const out: string[] = [];
  const passed = results.exitCode === 0;
  out.push(`## chatgate: ${results.incomplete ? '⚠️ INCOMPLETE' : passed ? '✅ PASS' : '❌ FAIL'}`, '');
  out.push(`**Target:** ${text(results.target)}  `, `**Mode:** ${text(model.lines.mode)}  `,
    `**Run:** ${results.startedAt}, ${(results.durationMs / 1000).toFixed(1)} s, ${results.tests.length} tests, chatgate ${results.chatgate.version} on Node ${results.chatgate.node}  `,
    `**${model.lines.verdict}**  `, `${capitalise(model.lines.comparison)}`, '');
  const throttled = model.lines.throttle;
  if (throttled) out.splice(out.length - 2, 0, `${capitalise(text(throttled))}  `);

  out.push('### Outcomes by spec section', '');
  out.push(row(['Section', ...shownOutcomes.map((o) => `${ICON[o]} ${LABEL[o]}`), '∅ no test']));
  out.push(row(['---', ...shownOutcomes.map(() => '---:'), '---:']));
  for (const s of model.sections) {
    if (s.clauses === 0) continue;
    out.push(row([`${s.section}: ${s.title}`, ...shownOutcomes.map((o) => s.counts[o] ?? 0), s.noTest]));
  }
  out.push(row(['**All**', ...shownOutcomes.map((o) => `**${counts[o]}**`), `**${model.noTest}**`]), '');

  if (model.lines.targetDown) out.push(`**${text(model.lines.targetDown)}**`, '');
  const errors = model.harnessErrors;
  if (errors.length) {
    out.push(`### Harness errors (${errors.length})`, '', 'Not verdicts on the target: the run could not judge these tests, and they fail the run.', '');
    for (const t of errors) out.push(`- ${ICON.error} **${text(t.title)}**: ${text(oneLine(harnessErrorAdvice(oneLine(t.message, 300)), 500))}`);
    out.push('');
  }
  const failingClauses = model.failingClauses;
  if (failingClauses.length) {
    out.push(`### Failing clauses (${failingClauses.length})`, '');
    for (const { row: r, first: t, count: n } of failingClauses) {
      out.push(`- ${ICON[outcome(t)]} **${r.id}** (${r.level}, ${LABEL[outcome(t)]}${n > 1 ? `, ${n} tests` : ''}): ${text(oneLine(reasonOf(t), 200))}`);
    }
    out.push('');
  }
  const others = model.notFailing;
  if (others.length) {
    out.push('### Known failures, flaky tests and warnings (not failing the run)', '');
    for (const { row: r, first: t } of others) {
      const why = text(t.expectation?.outcome === 'expected-fail' ? `known: ${t.expectation.reason}` : oneLine(reasonOf(t), 200));
      out.push(`- ${ICON[outcome(t)]} **${r.id}** (${LABEL[outcome(t)]}): ${why}`);
    }
    out.push('');
  }

  if (matrix) {
    out.push('### Client x operation', '');
    out.push(row(['Client', ...matrix.operations.map(text)]), row(['---', ...matrix.operations.map(() => ':---:')]));
    for (const c of matrix.clients) {
      out.push(row([text(c), ...matrix.operations.map((o) => {
        const w = matrix.cell(c, o).worst;
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

export function writeMarkdown(dir: string, model: ReportModel): string {
  const file = join(dir, 'summary.md');
  writeFileSync(file, renderMarkdown(model));
  return file;
}
