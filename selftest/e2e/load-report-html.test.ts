// The load report in real headless Chromium (Debian's /usr/bin/chromium): short runs
// of stream, sweep and throughput against one embedded reference with its engine model
// (so the sweep's SLO breaks) write report.html; the page opens without script errors or network
// requests, every chart is drawn with data (each chart's data-points), the page is no
// wider than its viewport at 1400 px and at 1024 px, and the plots come before the
// tables. Screenshots go to reports/selftest/; UPDATE_DOCS_SCREENSHOT=1 also refreshes
// docs/load-report-stream.png and docs/load-report-sweep.png.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type BrowserContext } from 'playwright-core';
import { executeRun } from '../../load/run.ts';
import { parseArgs } from '../../load/setup/options.ts';
import { embeddedTarget, referenceOptionsFor, type LoadTarget } from '../../load/setup/load-target.ts';
import { StopToken } from '../../load/setup/stop.ts';
import { loadConfig } from '../../lib/run/config.ts';
import { ROOT } from '../support/run-suite.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(ROOT, 'reports/selftest');
let browser: BrowserContext;
let dir: string;
const reports: Record<string, string> = {};

// One embedded reference with the engine model serves all three (a server of known capacity, so the sweep's SLO breaks).
const REFERENCE = ['--ref-engine'];
const RUNS: Record<string, string[]> = {
  stream: ['stream', '--rate', '20', '--duration', '1.5', '--prompt-tokens', '200', '--output-tokens', '24', '--slo-ttft-p95-ms', '400'],
  // A loaded machine's timers run late: a generous driver-lag bound keeps both steps judged; the first step far
  // below the model's capacity, so a loaded machine does not end the sweep after it (the page marks two steps).
  sweep: ['sweep', '--prompt-tokens', '1000', '--output-tokens', '32', '--sweep-start', '3', '--step-duration', '1', '--sweep-steps', '3', '--sweep-refine-steps', '0', '--slo-ttft-p95-ms', '300', '--sweep-max-driver-lag-ms', '1000'],
  throughput: ['throughput', '--connections', '2', '--duration', '1'],
};

async function run(name: string, target: LoadTarget): Promise<string> {
  const parsed = parseArgs([...RUNS[name]!, ...REFERENCE, '--warmup', '2', '--quiet'], {});
  const out = await executeRun({ scenario: parsed.scenario, options: parsed.options, config: loadConfig({}), target, stop: new StopToken(), outDir: join(dir, name), log: () => {} });
  return out.htmlPath!;
}

beforeAll(async () => {
  expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`).toBe(true);
  dir = mkdtempSync(join(tmpdir(), 'chatgate-load-html-'));
  const target = await embeddedTarget(referenceOptionsFor(parseArgs(['stream', ...REFERENCE], {}).options));
  try {
    for (const name of Object.keys(RUNS)) reports[name] = await run(name, target);
  } finally {
    await target.close();
  }
  browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'chatgate-chromium-')), {
    executablePath: CHROMIUM, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    viewport: { width: 1400, height: 900 },
  });
  mkdirSync(SHOTS, { recursive: true });
}, HANG_GUARD_MS);

afterAll(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface PageFacts { charts: Array<{ title: string; points: number; canvas: boolean }>; scrollWidth: number; clientWidth: number; firstChartY: number; firstTableY: number }

async function open(name: string, width: number) {
  const page = await browser.newPage();
  await page.setViewportSize({ width, height: 900 });
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(`file://${reports[name]}`, { waitUntil: 'load' });
  const facts = await page.evaluate((): PageFacts => ({
    charts: [...document.querySelectorAll('.chart')].map((c) => ({ title: c.getAttribute('data-title') ?? '', points: Number(c.getAttribute('data-points')), canvas: (!!c.querySelector('canvas') && (c.querySelector('canvas') as HTMLCanvasElement).width > 0) || !!c.querySelector('svg') })),
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
    firstChartY: document.querySelector('.chart')!.getBoundingClientRect().top,
    firstTableY: document.querySelector('table')!.getBoundingClientRect().top,
  }));
  return { page, facts, requests, errors };
}

const EXPECTED: Record<string, RegExp[]> = {
  stream: [/TTFT and E2E of each request/, /Answers per second by status, and requests in flight/, /TTFT by send second/, /Output tokens per second/, /ttft_ms .* by percentile/, /e2e_ms histogram/],
  sweep: [/Offered vs sent vs completed/, /TTFT vs offered/, /TTFT and E2E of each request/, /requests in flight/, /TTFT by send second/, /ttft_ms histogram/],
  throughput: [/Answers per second by status/, /Latency by send second/, /latency_ms by percentile/, /latency_ms histogram/],
};

describe('load report.html in Chromium', () => {
  for (const name of Object.keys(RUNS)) {
    it(`${name}: every chart drawn with data, plots before tables, no wider than the viewport`, async () => {
      for (const width of [1400, 1024]) {
        const { page, facts, requests, errors } = await open(name, width);
        try {
          expect(errors, name).toEqual([]);
          expect(requests.filter((u) => !u.startsWith('file://')), name).toEqual([]);
          expect(facts.charts.length, name).toBeGreaterThanOrEqual(EXPECTED[name]!.length);
          for (const c of facts.charts) {
            expect(c.canvas, `${name}: ${c.title} has no canvas or svg`).toBe(true);
            expect(c.points, `${name}: ${c.title} drew no data`).toBeGreaterThan(0);
          }
          for (const re of EXPECTED[name]!) expect(facts.charts.some((c) => re.test(c.title)), `${name}: no chart ${re}`).toBe(true);
          expect(facts.scrollWidth, `${name} at ${width} px`).toBeLessThanOrEqual(facts.clientWidth);
          expect(facts.firstChartY, `${name}: a table comes before the first chart`).toBeLessThan(facts.firstTableY);
          if (width === 1400 && name !== 'throughput') {
            const shot = join(SHOTS, `load-report-${name}.png`);
            await page.screenshot({ path: shot, fullPage: true, clip: { x: 0, y: 0, width: 1400, height: name === 'sweep' ? 1650 : 1450 } });
            if (process.env.UPDATE_DOCS_SCREENSHOT === '1') copyFileSync(shot, join(ROOT, `docs/load-report-${name}.png`));
          }
        } finally {
          await page.close();
        }
      }
    }, HANG_GUARD_MS);
  }

  it('the sweep report names its SLO with its value and marks each step', async () => {
    const { page } = await open('sweep', 1400);
    try {
      const text = await page.evaluate(() => document.body.innerText);
      expect(text).toMatch(/Answer: (the limit lies in|at least|no rate met)/);
      const phases = await page.evaluate(() => (window as unknown as { chatgateReport: { phases: unknown[] } }).chatgateReport.phases.length);
      expect(phases).toBeGreaterThanOrEqual(2);
      const slo = await page.evaluate(() => JSON.parse(document.getElementById('data')!.textContent!).slo);
      expect(slo).toContainEqual({ metric: 'ttft', value: 300, label: 'SLO p95 TTFT ≤ 300 ms' });
    } finally {
      await page.close();
    }
  }, HANG_GUARD_MS);
});
