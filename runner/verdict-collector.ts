// A vitest reporter that collects each test's verdict record (set by clause() in
// task meta) in the runner process. A test that ended without a verdict of its own
// (a vitest timeout, a worker crash, a record still "not finished", a test outside
// clause()) is an `error`: the harness failed, whatever the clause's level. A suite
// file that fails to load is an `error` too.
// A test left out by the selection (test-name pattern, file filter) never ran: it
// is no verdict at all, so it is not recorded (a skip would read as "could not run").
import { relative } from 'node:path';
import type { Reporter, TestCase, TestModule } from 'vitest/node';
import { CLAUSES, type ClauseId } from '../lib/spec/clauses.ts';
import { NOT_FINISHED, type TestRecord } from '../lib/run/verdicts.ts';
import { redact } from '../lib/run/redact.ts';
import '../lib/run/verdicts.ts'; // TaskMeta.chatgate

export class VerdictCollector implements Reporter {
  readonly records: TestRecord[] = [];
  readonly moduleErrors: string[] = [];
  constructor(private readonly root: string, private readonly progress?: (done: number) => void) {}

  onTestCaseResult(testCase: TestCase): void {
    const file = relative(this.root, testCase.module.moduleId);
    const result = testCase.result();
    const meta = testCase.meta().chatgate;
    if (!meta && result.state === 'skipped' && testCase.options.mode !== 'run') return;
    const rec: TestRecord = meta
      ? { ...meta, notes: [...(meta.notes ?? [])] }
      : fallbackRecord(testCase.name);
    rec.file = file;
    // The stable id given at the test; a test without one keeps the title-based id (legacyTestId).
    rec.id = testCase.meta().chatgateId ?? legacyTestId(file, rec.title);
    rec.durationMs = Math.round(testCase.diagnostic()?.duration ?? 0);
    if (result.state === 'failed' && rec.verdict !== 'fail' && rec.verdict !== 'error') {
      // Failed in vitest's eyes but clause() did not judge it: a timeout or a crash.
      const error = redact(result.errors?.map((e) => e.message).join('; ') ?? 'test failed');
      rec.verdict = 'error';
      rec.message = `the test did not complete (${error}): it ended without a verdict of its own`;
    } else if (result.state !== 'skipped' && rec.verdict === 'inconclusive' && rec.message === NOT_FINISHED) {
      rec.verdict = 'error';
      rec.message = 'the test ended without a verdict of its own';
    }
    if (result.state === 'skipped' && rec.verdict !== 'skip') {
      rec.verdict = 'skip';
      rec.message = rec.message ?? result.note ?? 'skipped';
    }
    this.records.push(rec);
    this.progress?.(this.records.length);
  }

  onTestModuleEnd(mod: TestModule): void {
    for (const e of mod.errors()) this.moduleErrors.push(`${relative(this.root, mod.moduleId)}: ${redact(e.message)}`);
  }
}

/**
 * The title-based test id of results.json before resultsVersion 2 ("auth/AUTH-1 no key ..."):
 * EXPECTATIONS files may still name tests by it (deprecated), and a test without a stable id gets it.
 */
export function legacyTestId(file: string, title: string): string {
  return `${file.replace(/^suites\//, '').replace(/\.test\.ts$/, '')}/${title}`;
}

function fallbackRecord(title: string): TestRecord {
  const id = title.split(' ')[0] as ClauseId;
  const def = CLAUSES[id];
  return {
    id: '', clause: def ? id : 'unknown', level: def?.level ?? 'MUST', verdict: 'error', title,
    requirement: def?.requirement ?? '', message: 'the test ended without a verdict of its own (not a clause() test)', notes: [],
  };
}
