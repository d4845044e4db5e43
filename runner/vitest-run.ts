// The runner's vitest runs of suites/ (in the runner's process): the run itself, the
// reruns of RETRY_FAILED, the collection of the tests' ids (no request), and the
// exchanges the workers logged in the run directory.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../lib/run/config.ts';
import { runContextOf, writeRunContext, type RunContext } from '../lib/run/run-context.ts';
import { countsAsPassing, type TestRecord } from '../lib/run/verdicts.ts';
import { exactTitlesPattern } from '../lib/run/selection.ts';
import type { ExchangeSummary } from '../harness/exchange-log.ts';
import { VerdictCollector, legacyTestId } from './verdict-collector.ts';
import { RUN_WIDE_FILE, runWideTests } from './run-wide-checks.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SUITES_CONFIG = join(ROOT, 'suites/vitest.config.ts');

/** One vitest run of suites/ in this process; verdicts come back through the collector. */
export async function runSuites(opts: { pattern?: string; files?: string[]; progress?: (n: number) => void; collector?: VerdictCollector }): Promise<VerdictCollector> {
  const { startVitest } = await import('vitest/node');
  const collector = opts.collector ?? new VerdictCollector(ROOT, opts.progress);
  const vitest = await startVitest('test', opts.files ?? [], {
    root: ROOT, config: SUITES_CONFIG, watch: false, reporters: [collector], testNamePattern: opts.pattern,
  });
  await vitest?.close();
  return collector;
}

/**
 * RETRY_FAILED: reruns the tests `unexpected` picks (exactly their titles, in their
 * files) up to `retries` times. A test that passes on a rerun becomes "flaky" and
 * keeps the details of its first failure; one that never passes keeps its verdict.
 */
export async function retryFailures(records: TestRecord[], retries: number, unexpected: (t: TestRecord) => boolean): Promise<void> {
  if (retries === 0) return;
  let pending = records.filter((t) => unexpected(t) && t.file && t.file !== RUN_WIDE_FILE);
  for (const t of pending) t.attempts = [{ verdict: t.verdict, ...(t.message ? { message: t.message } : {}) }];
  for (let attempt = 2; attempt <= retries + 1 && pending.length; attempt++) {
    process.stderr.write(`chatgate: rerunning ${pending.length} failed test${pending.length === 1 ? '' : 's'} (attempt ${attempt})\n`);
    const rerun = await runSuites({ pattern: exactTitlesPattern(pending.map((t) => t.title)), files: [...new Set(pending.map((t) => t.file!))] });
    const again = new Map(rerun.records.map((r) => [r.id, r]));
    const still: TestRecord[] = [];
    for (const t of pending) {
      const r = again.get(t.id);
      t.attempts!.push(r ? { verdict: r.verdict, ...(r.message ? { message: r.message } : {}) } : { verdict: 'skip', message: 'did not run on the rerun' });
      if (r && countsAsPassing(r)) {
        t.verdict = 'flaky';
        t.notes.push(`flaky: ${t.attempts![0]!.verdict} on attempt 1, passed on attempt ${attempt}`);
      } else still.push(t);
    }
    pending = still;
  }
}

export interface IndexedTest {
  id: string; title: string; file: string;
  /** The title-based id of results.json before resultsVersion 2. */
  legacyId?: string;
  /** Why the probe has no streaming form (clause()'s `stream: { none }`). */
  noStreamForm?: string;
}

/** Every test of the suite with its stable id, collected without running any (imports only, no request). */
export async function collectTests(config: Config): Promise<IndexedTest[]> {
  const out: IndexedTest[] = runWideTests().map(({ id, legacyId }) => ({ id, title: id, file: RUN_WIDE_FILE, legacyId }));
  const { createVitest } = await import('vitest/node');
  // Collecting imports the suite files, which read the run context: one without a
  // target (the models, BRAIN_ID and timeouts the test ids and titles are made of).
  const dir = mkdtempSync(join(tmpdir(), 'chatgate-collect-'));
  const collect: RunContext = runContextOf(config, { phase: 'collect' });
  writeRunContext(dir, collect);
  const before = process.env.CHATGATE_RUN_DIR;
  process.env.CHATGATE_RUN_DIR = dir;
  const vitest = await createVitest('test', { root: ROOT, config: SUITES_CONFIG, watch: false, reporters: [] });
  try {
    const { testModules } = await vitest.collect([]);
    for (const m of testModules) {
      const file = relative(ROOT, m.moduleId);
      // A file that does not load would drop its tests from the list without a word.
      const failed = m.errors()[0];
      if (failed) throw new Error(`${file} does not load while the tests are collected: ${failed.message}`);
      for (const t of m.children.allTests()) {
        const legacyId = legacyTestId(file, t.name);
        const id = t.meta().chatgateId ?? legacyId;
        const noStreamForm = t.meta().chatgateNoStreamForm;
        out.push({ id, title: t.name, file, ...(id !== legacyId ? { legacyId } : {}), ...(noStreamForm ? { noStreamForm } : {}) });
      }
    }
    return out;
  } finally {
    await vitest.close();
    if (before === undefined) delete process.env.CHATGATE_RUN_DIR; else process.env.CHATGATE_RUN_DIR = before;
    rmSync(dir, { recursive: true, force: true });
  }
}

export function readExchanges(dir: string): ExchangeSummary[] {
  const out: ExchangeSummary[] = [];
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.jsonl')) continue;
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) if (line) out.push(JSON.parse(line));
  }
  // One file per worker: in time order across them, so a failure names the exchange that met it first.
  return out.sort((a, b) => (a.at ?? 0) - (b.at ?? 0));
}
