// The HTML report in real headless Chromium (Debian's /usr/bin/chromium; .ci/run
// installs it). A full run against a reference with a defect and an expectations
// file (a known failure, a known failure that passes) renders without errors or
// any network request, and the page shows the counts results.json holds: totals,
// sections, one row per clause of the registry with its tests, failure details
// with curl, the client x operation matrix; the outcome filter works. A synthetic
// run adds the outcomes a real run cannot be forced into (flaky, strict mode, a
// comparison). Screenshots go to reports/selftest/; UPDATE_DOCS_SCREENSHOT=1 also
// refreshes docs/report.png.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CLAUSES, type ClauseId } from '../../lib/spec/clauses.ts';
import type { Results, TestRecord } from '../../lib/run/verdicts.ts';
import { renderHtml } from '../../runner/report/html.ts';
import { reportModel } from '../../runner/report/model.ts';
import { referenceTarget, type RunningTarget } from '../support/targets.ts';
import { ROOT } from '../support/run-suite.ts';
import { fixtureResults } from '../unit/reports-fixture.ts';
import { runChatgate, type ChatgateRun } from './reports-run.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(ROOT, 'reports/selftest');

let browser: BrowserContext;
let target: RunningTarget;
let run: ChatgateRun;

beforeAll(async () => {
  expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`).toBe(true);
  // A fresh profile each time: playwright takes --user-data-dir as launchPersistentContext's first argument.
  browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'chatgate-chromium-')), {
    executablePath: CHROMIUM, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    viewport: { width: 1400, height: 1500 },
  });
  target = await referenceTarget({ defect: 'auth-401-plain-text' });
  const dir = mkdtempSync(join(tmpdir(), 'chatgate-html-'));
  const known = join(dir, 'known.yaml');
  writeFileSync(known, '# staging\nERR-1: https://tracker.example/API-42 401 answers are text/plain\nLIM-2: https://tracker.example/API-51 no Retry-After yet\n');
  run = await runChatgate({ ...target.env, EXPECTATIONS: known });
}, HANG_GUARD_MS);

afterAll(async () => {
  await browser?.close();
  await target?.close();
});

/** Opens a report, failing on any request that is not the file itself, and on script errors. */
async function open(file: string): Promise<{ page: Page; requests: string[]; errors: string[] }> {
  const page = await browser.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(`file://${file}`, { waitUntil: 'load' });
  return { page, requests, errors };
}

/** What each test should show, worked out here from results.json (not with the writers' code). */
function shown(t: TestRecord): string {
  return t.expectation?.outcome === 'expected-fail' ? 'expected-fail' : t.expectation?.outcome === 'unexpected-pass' ? 'unexpected-pass' : t.verdict;
}
function countBy<T>(xs: T[], key: (x: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[key(x)] = (out[key(x)] ?? 0) + 1;
  return out;
}
async function cards(page: Page): Promise<Record<string, number>> {
  return page.$$eval('.cards .card', (els) => Object.fromEntries(els.map((e) => [(e as HTMLElement).dataset.outcome!, Number(e.querySelector('.n')!.textContent)])));
}

describe('the HTML report of a real run, in Chromium', () => {
  let page: Page;
  let results: Results;

  it('renders offline, without script errors, with the verdict of the run', async () => {
    expect(run.exitCode, run.stderr).toBe(1);
    results = run.results!;
    const o = await open(join(run.reportsDir, 'latest/index.html'));
    page = o.page;
    expect(o.errors).toEqual([]);
    expect(o.requests.filter((u) => !u.startsWith('file://'))).toEqual([]);
    expect(await page.title()).toMatch(/^chatgate FAIL: http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(await page.locator('.banner').textContent()).toBe('FAIL');
    expect(await page.locator('.verdict').textContent()).toMatch(/^verdict: FAIL \(\d+ failing tests, 1 unexpected pass\)$/);
    expect(await page.locator('dd[data-mode]').textContent()).toContain('EXPECTATIONS=');
    const text = await page.locator('body').innerText();
    for (const key of target.keys) expect(text.includes(key)).toBe(false);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, 'report-full.png'), fullPage: true });
    // For people: the summary, then the failures with their details (filtered on "fail").
    await page.click('.filters button[data-filter="fail"]');
    await page.screenshot({ path: join(SHOTS, 'report.png'), fullPage: true, clip: { x: 0, y: 0, width: 1400, height: 2000 } });
    await page.click('.filters button[data-filter="all"]');
    if (process.env.UPDATE_DOCS_SCREENSHOT === '1') copyFileSync(join(SHOTS, 'report.png'), join(ROOT, 'docs/report.png'));
  });

  it('shows the totals results.json holds', async () => {
    const expected = countBy(results.tests, shown);
    const got = await cards(page);
    for (const [outcome, n] of Object.entries(expected)) expect(got[outcome], outcome).toBe(n);
    expect(Object.values(got).reduce((a, b) => a + b, 0)).toBe(results.tests.length);
    expect(got['expected-fail']).toBe(1);
    expect(got['unexpected-pass']).toBe(1);
    expect(got.fail! + got['expected-fail']!).toBe(results.summary.fail);
    for (const v of ['warn', 'info', 'skip', 'inconclusive'] as const) expect(got[v] ?? 0, v).toBe(results.summary[v]);
  });

  it('shows per section the number of tests of its clauses', async () => {
    const rows = await page.$$eval('table.sections tbody tr', (trs) => trs.map((tr) => ({
      section: (tr as HTMLElement).dataset.section!,
      cells: [...tr.querySelectorAll('td.num')].map((td) => Number(td.textContent)),
    })));
    const bySection = countBy(results.tests, (t) => CLAUSES[t.clause as ClauseId]?.section ?? 'other');
    expect(rows.map((r) => r.section)).toEqual([...new Set(Object.values(CLAUSES).map((c) => c.section))]);
    for (const r of rows) {
      const tests = r.cells.slice(1, -1).reduce((a, b) => a + b, 0); // between the clause count and "no test"
      expect(tests, r.section).toBe(bySection[r.section] ?? 0);
      expect(r.cells[0], r.section).toBe(Object.values(CLAUSES).filter((c) => c.section === r.section).length);
    }
  });

  it('has one row per clause of the registry with its tests', async () => {
    const rows = await page.$$eval('details.clause', (ds) => ds.map((d) => ({
      id: (d as HTMLElement).dataset.clause!, tests: Number((d as HTMLElement).dataset.tests), items: d.querySelectorAll('li.test').length,
    })));
    expect(rows.map((r) => r.id)).toEqual(Object.keys(CLAUSES));
    const perClause = countBy(results.tests, (t) => t.clause);
    for (const r of rows) {
      expect(r.tests, r.id).toBe(perClause[r.id] ?? 0);
      expect(r.items, r.id).toBe(perClause[r.id] ?? 0);
    }
    expect(await page.locator('li.test').count()).toBe(results.tests.length);
  });

  it('shows each failure with its requirement, expected vs seen, the response and the curl that reproduces it', async () => {
    const failing = results.tests.filter((t) => t.verdict === 'fail' && !t.expectation);
    expect(failing.length).toBeGreaterThan(0);
    for (const t of failing) {
      const item = page.locator(`li.test[data-test-id="${t.id.replace(/"/g, '\\"')}"]`);
      expect(await item.locator('.detail').isVisible(), `${t.id}: details open`).toBe(true);
      const detail = await item.locator('.detail').innerText();
      expect(detail).toContain(t.requirement);
      if (t.expected) expect(detail).toContain(t.expected);
      if (t.response?.status) expect(detail).toContain(`HTTP ${t.response.status}`);
      expect(await item.locator('.curl pre').textContent()).toBe(t.curl);
    }
    const known = page.locator('details.clause[data-clause="ERR-1"] li.test[data-test-id^="run-wide/"]');
    expect(await known.getAttribute('data-outcome')).toBe('expected-fail');
    expect(await known.innerText()).toContain('https://tracker.example/API-42');
  });

  it('renders the client x operation matrix when tests fill one', async () => {
    const cells = new Set(results.tests.filter((t) => t.matrix).map((t) => `${t.matrix!.client}|${t.matrix!.operation}`));
    expect(await page.locator('#matrix td[data-outcome]').count()).toBe(cells.size);
    if (cells.size === 0) expect(await page.locator('#matrix').count()).toBe(0);
  });

  it('filters by outcome', async () => {
    const expected = countBy(results.tests, shown);
    for (const outcome of ['fail', 'unexpected-pass', 'expected-fail', 'pass']) {
      await page.click(`.filters button[data-filter="${outcome}"]`);
      expect(await page.locator('#shown').getAttribute('data-shown'), outcome).toBe(String(expected[outcome]));
      const visible = await page.$$eval('li.test', (lis) => lis.filter((li) => (li as HTMLElement).offsetParent !== null).map((li) => (li as HTMLElement).dataset.outcome));
      expect(visible.length, outcome).toBe(expected[outcome]);
      expect(new Set(visible), outcome).toEqual(new Set([outcome]));
    }
    await page.click('.filters button[data-filter="all"]');
    expect(await page.locator('#shown').getAttribute('data-shown')).toBe(String(results.tests.length));
    expect(await page.locator('details.clause:not([hidden])').count()).toBe(Object.keys(CLAUSES).length);
  });
});

describe('the HTML report of a synthetic run, in Chromium', () => {
  it('shows flaky tests, strict mode, the comparison and the matrix', async () => {
    const results = fixtureResults({ strict: true });
    const file = join(mkdtempSync(join(tmpdir(), 'chatgate-html-fixture-')), 'index.html');
    writeFileSync(file, renderHtml(reportModel(results)));
    const { page, errors, requests } = await open(file);
    expect(errors).toEqual([]);
    expect(requests).toHaveLength(1);
    const got = await cards(page);
    expect(got).toEqual(countBy(results.tests, shown));
    expect(await page.locator('.card[data-outcome="flaky"]').getAttribute('class')).toContain('failing'); // strict
    expect(await page.locator('dd[data-mode]').textContent()).toMatch(/^strict /);
    expect(await page.locator('.since').innerText()).toBe('Since the previous run against this target (2026-11-20T10:00:00.000Z): newly failing AUTH-1, newly passing AUTH-2');
    expect(await page.locator('#matrix td[data-client="openai@4"][data-operation="stream"]').getAttribute('data-outcome')).toBe('warn');
    expect(await page.locator('#matrix td[data-client="langchain@1"][data-operation="stream"]').count()).toBe(0);
    const flaky = page.locator('li.test[data-outcome="flaky"]');
    expect(await flaky.innerText()).toMatch(/Attempts\s+1:\s*FAIL\s+2:\s*PASS/i);
    expect(await page.locator('details.clause[data-outcome="no-test"]').count()).toBe(Object.keys(CLAUSES).length - new Set(results.tests.map((t) => t.clause)).size);
    await page.close();
  });
});
