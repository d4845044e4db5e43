// Runs the conformance suite (npm test's entry point) as a child process, the way a
// user does, and reads back its exit code, console output and results.json.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Results } from '../../lib/run/verdicts.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface SuiteRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  results?: Results;
  reportsDir: string;
  wallMs: number;
  /** Clause ids with at least one test of this verdict. */
  clauses(verdict: Results['tests'][number]['verdict']): string[];
  /** A file of reports/latest/, '' when missing. */
  report(name: string): string;
  /** The test records of a clause. */
  tests(clause: string): Results['tests'];
}

/**
 * Env for a run: only what we pass plus PATH/HOME, so a developer's own TARGET_URL
 * (or GITHUB_STEP_SUMMARY) never leaks in. `args` are npm test's arguments
 * (--update-expectations, -t, file filters).
 */
export async function runSuite(env: Record<string, string | undefined>, opts: { killAfterMs?: number; args?: string[]; /** node binary to run under (default: this one) */ node?: string } = {}): Promise<SuiteRun> {
  const reportsDir = env.REPORTS_DIR ?? mkdtempSync(join(tmpdir(), 'chatgate-selftest-reports-'));
  const started = Date.now();
  const child = spawn(opts.node ?? process.execPath, [join(ROOT, 'bin/chatgate.mjs'), ...(opts.args ?? [])], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env, REPORTS_DIR: reportsDir } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  const killer = opts.killAfterMs ? setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs) : undefined;
  const exitCode: number | null = await new Promise((r) => child.on('close', (code) => r(code)));
  clearTimeout(killer);
  const report = (name: string) => {
    const file = join(reportsDir, 'latest', name);
    return existsSync(file) ? readFileSync(file, 'utf8') : '';
  };
  const json = report('results.json');
  const results = json ? (JSON.parse(json) as Results) : undefined;
  return {
    exitCode, stdout, stderr, results, reportsDir, wallMs: Date.now() - started, report,
    clauses: (verdict) => [...new Set((results?.tests ?? []).filter((t) => t.verdict === verdict).map((t) => t.clause))].sort(),
    tests: (clause) => (results?.tests ?? []).filter((t) => t.clause === clause),
  };
}
