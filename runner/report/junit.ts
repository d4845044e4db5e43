// reports/latest/junit.xml for CI dashboards: one testsuite per suite file.
// error (a harness or environment error, never a verdict on the target) -> <error>, apart
// from failures; fail -> <failure>; warn and flaky -> <failure> in
// strict mode, otherwise a pass with the warning in <system-out>; skip and
// inconclusive -> <skipped> (never counted as a pass); info -> a pass with the
// observation. A known failure (EXPECTATIONS) -> <skipped> "expected fail"; a known
// failure that passed -> <failure type="unexpected-pass"> (unless the file was updated).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { harnessErrorAdvice, type Results, type TestRecord } from '../../lib/run/verdicts.ts';
import { redact } from '../../lib/run/redact.ts';
import { isFailing, outcome } from './outcomes.ts';
import type { ReportModel } from './model.ts';

const esc = (s: string) => redact(s)
  .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
  .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function details(t: TestRecord): string {
  return [
    `requirement: ${t.requirement}`,
    t.expected ? `expected: ${t.expected}` : '', t.seen ? `seen: ${t.seen}` : '',
    t.message ? `message: ${t.message}` : '', t.curl ? `reproduce: ${t.curl}` : '',
    ...t.notes.map((n) => `note: ${n}`),
  ].filter(Boolean).join('\n');
}

function testcase(t: TestRecord, results: Results): string {
  const head = `    <testcase classname="${esc(t.clause)}" name="${esc(t.title)}" time="${((t.durationMs ?? 0) / 1000).toFixed(3)}">`;
  const o = outcome(t);
  let inner = '';
  if (o === 'error') inner = `\n      <error type="harness-error" message="${esc(harnessErrorAdvice(t.message))}">${esc(details(t))}</error>`;
  else if (o === 'unexpected-pass' && isFailing(o, results)) inner = `\n      <failure type="unexpected-pass" message="${esc(`passed, but ${t.expectation!.entry} is listed as a known failure: ${t.expectation!.reason}`)}"/>`;
  else if (isFailing(o, results)) inner = `\n      <failure type="${t.verdict}" message="${esc(t.message ?? t.verdict)}">${esc(details(t))}</failure>`;
  else if (o === 'expected-fail') inner = `\n      <skipped message="${esc(`expected fail (${t.expectation!.reason}): ${t.message ?? ''}`)}"/>`;
  else if (t.verdict === 'skip' || t.verdict === 'inconclusive') inner = `\n      <skipped message="${esc(`${t.verdict}: ${t.message ?? ''}`)}"/>`;
  else if (t.verdict === 'warn' || t.verdict === 'info' || t.verdict === 'flaky') inner = `\n      <system-out>${esc(`${t.verdict.toUpperCase()}: ${t.message ?? ''}${t.verdict === 'flaky' ? ` (passed on attempt ${t.attempts?.length ?? 2})` : ''}`)}</system-out>`;
  return `${head}${inner}${inner ? '\n    ' : ''}</testcase>`;
}

export function renderJunit(model: ReportModel): string {
  const { results } = model;
  const byFile = new Map<string, TestRecord[]>();
  for (const t of results.tests) {
    const key = t.file ?? 'chatgate';
    byFile.set(key, [...(byFile.get(key) ?? []), t]);
  }
  const suites = [...byFile].map(([file, tests]) => {
    const errors = tests.filter((t) => outcome(t) === 'error').length;
    const failures = tests.filter((t) => outcome(t) !== 'error' && isFailing(outcome(t), results)).length;
    const skipped = tests.filter((t) => !isFailing(outcome(t), results) && ['skip', 'inconclusive', 'expected-fail'].includes(outcome(t))).length;
    return `  <testsuite name="${esc(file)}" tests="${tests.length}" failures="${failures}" errors="${errors}" skipped="${skipped}">\n    <properties><property name="chatgate.version" value="${esc(results.chatgate.version)}"/><property name="node" value="${esc(results.chatgate.node)}"/></properties>\n${tests.map((t) => testcase(t, results)).join('\n')}\n  </testsuite>`;
  });
  const errors = results.tests.filter((t) => outcome(t) === 'error').length;
  const failures = results.tests.filter((t) => outcome(t) !== 'error' && isFailing(outcome(t), results)).length;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="chatgate ${esc(results.target)}" tests="${results.tests.length}" failures="${failures}" errors="${errors}" time="${(results.durationMs / 1000).toFixed(3)}">\n${suites.join('\n')}\n</testsuites>\n`;
}

export function writeJunit(dir: string, model: ReportModel): string {
  const file = join(dir, 'junit.xml');
  writeFileSync(file, renderJunit(model));
  return file;
}
