// The report writers on a synthetic run with every outcome: Markdown summary (step
// summary), console, JUnit and HTML say the same thing, show every clause of the
// registry (a clause without a test too), the mode, the comparison with the
// previous run, the client x operation matrix only when tests fill it, and no key.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLAUSES } from '../../lib/spec/clauses.ts';
import { addSecret } from '../../lib/run/redact.ts';
import { failsTheRun, VERDICTS, type Results } from '../../lib/run/verdicts.ts';
import { allOf, exactTitlesPattern, selectionMatches, selectionPattern } from '../../lib/run/selection.ts';
import { renderMarkdown } from '../../runner/report/markdown.ts';
import { renderConsole } from '../../runner/report/console.ts';
import { renderJunit } from '../../runner/report/junit.ts';
import { renderHtml } from '../../runner/report/html.ts';
import { reportModel } from '../../runner/report/model.ts';
import { compareRuns, comparisonLine, previousRun, targetKey } from '../../runner/report/history.ts';
import { FIXTURE_KEY, fixtureResults } from './reports-fixture.ts';

beforeAll(() => addSecret(FIXTURE_KEY, 'API_KEY'));

describe('verdicts', () => {
  it('knows flaky, and only strict mode fails the run on it', () => {
    expect(VERDICTS).toContain('flaky');
    const t = fixtureResults().tests.find((x) => x.verdict === 'flaky')!;
    expect(failsTheRun(t, false)).toBe(false);
    expect(failsTheRun(t, true)).toBe(true);
    const known = fixtureResults().tests.find((x) => x.expectation?.outcome === 'expected-fail')!;
    expect(failsTheRun(known, true)).toBe(false);
  });

  it('knows error: it fails the run at any level, strict or not, even when an expectation names it', () => {
    expect(VERDICTS).toContain('error');
    for (const level of ['MUST', 'SHOULD', 'INFO'] as const) {
      const t = { ...fixtureResults().tests[0]!, level, verdict: 'error' as const };
      expect(failsTheRun(t, false)).toBe(true);
      expect(failsTheRun({ ...t, expectation: { entry: 'AUTH-1', reason: 'known', outcome: 'unconfirmed' } }, { strict: false })).toBe(true);
    }
  });
});

describe('the report model', () => {
  it('is what every writer renders: a line changed in the model shows in each format', () => {
    const m = reportModel(fixtureResults());
    expect(m.rows.length).toBeGreaterThanOrEqual(Object.keys(CLAUSES).length);
    expect(m.failingClauses.length).toBeGreaterThan(0);
    m.lines = { ...m.lines, verdict: 'verdict: FROM-THE-MODEL', comparison: 'since the previous run against this target: FROM-THE-MODEL' };
    for (const text of [renderConsole(m), renderMarkdown(m), renderHtml(m)]) expect(text).toContain('verdict: FROM-THE-MODEL');
    // The HTML links the comparison's clauses, from the same results.comparison.
    for (const text of [renderConsole(m), renderMarkdown(m)]) expect(text).toMatch(/[Ss]ince the previous run against this target: FROM-THE-MODEL/);
    const first = m.failingClauses[0]!;
    m.failingClauses = [first];
    expect(renderMarkdown(m)).toContain('### Failing clauses (1)');
  });
});

describe('an error in every report', () => {
  const withError = (): Results => {
    const r = fixtureResults();
    const t = { ...r.tests.find((x) => x.verdict === 'info')!, id: 'fixture/EV-9 broken', title: 'EV-9 broken', clause: 'EV-9', level: 'INFO' as const, verdict: 'error' as const, message: 'harness error: TypeError: x is undefined' };
    r.tests.push(t);
    r.summary.error = 1;
    return r;
  };
  it('is shown apart from fail, with what to do', () => {
    const r = withError();
    const advice = 'a harness or environment error, not a verdict on the target: harness error: TypeError: x is undefined; rerun, or report it with reports/latest/results.json';
    const text = renderConsole(reportModel(r));
    expect(text).toContain('Harness errors (1)');
    expect(text).toContain(advice);
    expect(text).toMatch(/verdict: FAIL \(.*1 harness error/);
    expect(text).toMatch(/1 errors/);
    const junit = renderJunit(reportModel(r));
    expect(junit).toContain('<error type="harness-error"');
    expect(junit).toMatch(/<testsuites [^>]*errors="1"/);
    const md = renderMarkdown(reportModel(r));
    expect(md).toContain('### Harness errors (1)');
    expect(md).toContain('EV-9 broken');
    const html = renderHtml(reportModel(r));
    expect(html).toContain('data-filter="error"');
    expect(html).toContain('--error:');
    expect(html).toContain('class="harness-error"');
  });
});

describe('Markdown summary', () => {
  const md = () => renderMarkdown(reportModel(fixtureResults()));

  it('has a verdict table by section with a row per section and the totals', () => {
    const text = md();
    expect(text).toMatch(/^## chatgate: ❌ FAIL/);
    const table = text.split('### Outcomes by spec section')[1]!.split('###')[0]!;
    for (const s of ['SVC', 'RES', 'AUTH', 'EV', 'ERR', 'LIM', 'VER']) expect(table).toMatch(new RegExp(`^\\| ${s}: `, 'm'));
    expect(table).toMatch(/\| \*\*All\*\* \| \*\*1\*\* \| \*\*1\*\* \| \*\*1\*\* \| \*\*2\*\* \| \*\*1\*\* \|/); // fail, unexpected pass, flaky, warn, expected fail
  });

  it('lists the failing clauses with one-line reasons, and the known failures apart', () => {
    const failing = md().split('### Failing clauses')[1]!.split('###')[0]!;
    expect(failing).toContain('**AUTH-1** (MUST, fail): expected HTTP 401, got HTTP 200 &lt;html&gt;');
    expect(failing).toContain('**LIM-2** (SHOULD, unexpected pass): passed, but LIM-2 is listed as a known failure');
    expect(failing).not.toContain('ERR-1');
    expect(failing).not.toContain('RES-CC-1'); // flaky does not fail a normal run
    const known = md().split('(not failing the run)')[1]!.split('###')[0]!;
    expect(known).toContain('**ERR-1** (expected fail): known: https://tracker.example/API-42');
    expect(known).toContain('**RES-CC-1** (flaky)');
  });

  it('in strict mode, flaky and warn are failing clauses and the mode says so', () => {
    const text = renderMarkdown(reportModel(fixtureResults({ strict: true })));
    expect(text).toContain('**Mode:** strict');
    const failing = text.split('### Failing clauses')[1]!.split('###')[0]!;
    expect(failing).toContain('**RES-CC-1**');
    expect(failing).toContain('**EV-7**');
    expect(md()).toContain('**Mode:** normal');
  });

  it('shows every clause of the registry in the coverage, a clause without a test too', () => {
    const coverage = md().split('Coverage: every clause of the registry')[1]!;
    for (const id of Object.keys(CLAUSES)) expect(coverage).toContain(`| \`${id}\` |`);
    expect(coverage).toMatch(/\| `SVC-1` \| MUST \| ∅ no test \| 0 \| - \|/);
    expect(coverage).toMatch(/\| `SVC-4b` \| SHOULD \| ⚠️ warn \| 3 \| 1 warn, 2 pass \|/);
  });

  it('renders the client x operation matrix only when tests fill it', () => {
    expect(md()).toContain('### Client x operation');
    expect(md()).toMatch(/\| openai@4 \| ✅ pass \| ⚠️ warn \|/);
    expect(md()).toMatch(/\| langchain@1 \| ✅ pass \| - \|/);
    expect(renderMarkdown(reportModel(fixtureResults({ matrix: false })))).not.toContain('Client x operation');
  });

  it('says what changed since the previous run, and never shows a key', () => {
    expect(md()).toContain('Since the previous run against this target (2026-11-20T10:00:00.000Z): newly failing AUTH-1, newly passing AUTH-2');
    expect(md()).not.toContain(FIXTURE_KEY);
  });
});

describe('console', () => {
  it('shows the mode, the outcomes, the matrix, the unexpected pass and the comparison', () => {
    const text = renderConsole(reportModel(fixtureResults()));
    expect(text).toContain('mode: normal (only MUST/COMPAT failures fail the run); RETRY_FAILED=1; EXPECTATIONS=known.yaml');
    expect(text).toMatch(/EXPECTED FAIL\s+ERR-1/);
    expect(text).toMatch(/UNEXPECTED PASS\s+LIM-2/);
    expect(text).toMatch(/FLAKY\s+RES-CC-1/);
    expect(text).toMatch(/NO TEST\s+SVC-1/);
    expect(text).toMatch(/Client x operation:\n\s+completion\s+stream\s*\n\s+openai@4\s+PASS\s+WARN/);
    expect(text).toContain('Unexpected passes (1): LIM-2');
    expect(text).toContain('1 flaky');
    expect(text).toContain('newly failing AUTH-1, newly passing AUTH-2');
    expect(text).toContain('verdict: FAIL (1 failing test, 1 unexpected pass)');
    expect(text).not.toContain(FIXTURE_KEY);
    expect(renderConsole(reportModel(fixtureResults({ strict: true })))).toContain('mode: strict');
  });
});

describe('JUnit', () => {
  it('maps flaky, expected fail and unexpected pass', () => {
    const xml = renderJunit(reportModel(fixtureResults()));
    const tc = (title: string) => xml.split(`name="${title}"`)[1]!.split('</testcase>')[0]!;
    expect(tc('RES-CC-1 id is &quot;chatcmpl-&quot; followed by a suffix')).toContain('<system-out>FLAKY:');
    expect(tc('ERR-1 every response with status &gt;= 400 carries an error body')).toContain('<skipped message="expected fail (https://tracker.example/API-42');
    expect(tc('LIM-2 a 429 says when to retry')).toContain('<failure type="unexpected-pass"');
    expect(renderJunit(reportModel(fixtureResults({ strict: true })))).toMatch(/<failure type="flaky"/);
    expect(xml).not.toContain(FIXTURE_KEY);
  });
});

describe('HTML', () => {
  it('is self-contained, escaped, masked and without keys', () => {
    const html = renderHtml(reportModel(fixtureResults()));
    expect(html).toContain(`content="default-src 'none'`);
    expect(html).not.toMatch(/<(script|img|link|iframe)[^>]+(src|href)=/i);
    expect(html).not.toContain(FIXTURE_KEY);
    expect(html).toContain('HTTP 200 &lt;html&gt;');
    expect(html).toMatch(/<th>authorization<\/th><td>\*\*\*<\/td>/);
    expect(html).toContain('<a href="https://tracker.example/API-42" rel="noreferrer">');
    expect(html.match(/<details class="clause"/g)).toHaveLength(Object.keys(CLAUSES).length);
  });
});

describe('run history', () => {
  it('treats runs of the embedded reference as one target per defect', () => {
    expect(targetKey('embedded reference server http://127.0.0.1:4242/v1 (defect x)')).toBe('embedded reference server (defect x)');
    expect(targetKey('https://staging.example/v1')).toBe('https://staging.example/v1');
  });

  it('finds the previous run against the same target and compares verdicts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatgate-history-'));
    const prev = { ...fixtureResults(), startedAt: '2026-11-20T10:00:00.000Z' };
    prev.tests[0]!.verdict = 'pass'; // AUTH-1 passed before
    prev.tests[3]!.verdict = 'pass'; // EV-7 passed before
    const other: Results = { ...fixtureResults(), target: 'https://other.example/v1', startedAt: '2026-11-21T09:00:00.000Z' };
    for (const [name, r] of [['2026-11-20T10-00-00-000Z', prev], ['2026-11-21T09-00-00-000Z', other]] as const) {
      mkdirSync(join(dir, 'runs', name), { recursive: true });
      writeFileSync(join(dir, 'runs', name, 'results.json'), JSON.stringify(r));
    }
    const found = previousRun(dir, 'https://staging.example/v1')!;
    expect(found.startedAt).toBe(prev.startedAt);
    const cmp = compareRuns(found, fixtureResults());
    expect(cmp.newlyFailing.map((x) => x.clause)).toEqual(['AUTH-1', 'EV-7']);
    expect(cmp.newlyPassing).toEqual([]);
    expect(comparisonLine(cmp)).toBe('since the previous run against this target (2026-11-20T10:00:00.000Z): newly failing AUTH-1, EV-7, newly passing none');
    expect(comparisonLine(undefined)).toBe('since the previous run against this target: no previous run kept');
    expect(previousRun(dir, 'https://never.example/v1')).toBeUndefined();
  });

  it('counts a harness error as failing, a skip or inconclusive as neither (the predicates of lib/run/verdicts.ts)', () => {
    const prev = fixtureResults();
    const cur = fixtureResults();
    const auth2 = cur.tests.findIndex((t) => t.clause === 'AUTH-2');
    const ver2 = cur.tests.findIndex((t) => t.clause === 'VER-2');
    cur.tests[auth2]!.verdict = 'error'; // passed before: newly failing
    cur.tests[ver2]!.verdict = 'inconclusive'; // info before: moves nothing
    prev.tests[cur.tests.findIndex((t) => t.clause === 'EV-7')]!.verdict = 'error'; // warn now: still failing
    const cmp = compareRuns(prev, cur);
    expect(cmp.newlyFailing.map((x) => x.clause)).toEqual(['AUTH-2']);
    expect(cmp.newlyPassing).toEqual([]);
    const back = compareRuns(cur, fixtureResults());
    expect(back.newlyPassing.map((x) => x.clause)).toEqual(['AUTH-2']);
  });
});

describe('selection', () => {
  // vitest matches the pattern against "<describe names> <test title>".
  const full = (describe: string, title: string) => `${describe} ${title}`;

  it('CLAUSES selects by the clause id that starts a title, under any describe', () => {
    const re = new RegExp(selectionPattern('AUTH-*,EV-1')!);
    expect(re.test(full('AUTH: missing keys', 'AUTH-1 no key gets 401'))).toBe(true);
    expect(re.test(full('EV: chunks', 'EV-1 stream: true answers 200'))).toBe(true);
    expect(re.test(full('EV: chunks', 'EV-10 the stream finishes'))).toBe(false);
    expect(re.test(full('SVC-4: the official openai client', 'SVC-4 models.list()'))).toBe(false);
    expect(selectionMatches('AUTH-*', 'AUTH-9')).toBe(true);
    expect(selectionMatches('AUTH-*', 'ERR-1')).toBe(false);
    expect(selectionPattern(undefined)).toBeUndefined();
    expect(() => selectionPattern('NOPE-*')).toThrow(/CLAUSES: "NOPE-\*" matches no clause id/);
  });

  it('reruns match exactly the failed titles, and patterns combine', () => {
    const title = 'RES-CC-1 id is "chatcmpl-" followed by a suffix (1+1) [x]';
    const re = new RegExp(exactTitlesPattern([title, 'AUTH-1 a']));
    expect(re.test(full('RES: chat completion', title))).toBe(true);
    expect(re.test(full('AUTH', 'AUTH-1 a'))).toBe(true);
    expect(re.test(full('AUTH', 'AUTH-1 a b'))).toBe(false);
    expect(re.test(full('AUTH', 'XAUTH-1 a'))).toBe(false);
    const both = new RegExp(allOf(selectionPattern('AUTH-1'), 'Bearer')!);
    expect(both.test(full('AUTH', 'AUTH-1 empty Bearer'))).toBe(true);
    expect(both.test(full('AUTH', 'AUTH-1 no header'))).toBe(false);
    expect(both.test(full('AUTH', 'AUTH-3 empty Bearer'))).toBe(false);
    expect(allOf(undefined, 'x')).toBe('x');
  });
});
