// npm run mutation [-- stryker options]: runs StrykerJS (stryker.config.mjs) over the
// reference server with the conformance suite, then writes reports/mutation/summary.json
// and prints the score over the mutants that are not disabled with a reason.
//   npm run mutation                      every mutant (the full run; not for CI), writing the
//                                         incremental baseline too (Stryker --incremental --force)
//   npm run mutation -- --incremental     only mutants whose code or tests changed since
//                                         reports/mutation/stryker-incremental.json
//   npm run mutation -- --summary-only    summary.json from the last report, without running
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'reports/mutation');
const summaryOnly = process.argv.includes('--summary-only');
const userArgs = process.argv.slice(2).filter((a) => a !== '--summary-only');
const incremental = userArgs.includes('--incremental');
// The full run tests every mutant (--force) and still writes the incremental file, so it
// leaves the baseline that later --incremental runs (and CI) start from.
const args = incremental ? userArgs : [...userArgs, '--incremental', '--force'];

interface Mutant { id: string; mutatorName: string; status: string; statusReason?: string; location: { start: { line: number } } }
interface Report { files: Record<string, { mutants: Mutant[] }> }

const startedAt = new Date();
const loadBefore = loadavg();
const t0 = performance.now();
const run = summaryOnly ? { status: 0, signal: null } : spawnSync(process.execPath, [join(ROOT, 'node_modules/@stryker-mutator/core/bin/stryker.js'), 'run', ...args], { cwd: ROOT, stdio: 'inherit' });
// Not measured when only summarising an earlier run.
const durationS = summaryOnly ? null : Math.round((performance.now() - t0) / 1000);
const loadAfter = loadavg();
if (run.status !== 0) {
  process.stderr.write(`mutation: stryker exited with ${run.status ?? run.signal}; no summary written\n`);
  process.exit(run.status || 2);
}
const reportFile = join(OUT, 'mutation.json');
if (!existsSync(reportFile)) {
  process.stderr.write(`mutation: ${reportFile} is missing; no summary written\n`);
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
// An incremental run (or a summary only) keeps the figures of the last full run, the
// time that npm run mutation takes; a full run is its own.
const summaryFile = join(OUT, 'summary.json');
type FullRun = { date: string; durationS: number; secondsPerTestedMutant: number | null; score: number | null; mutants: number; killed: number; survived: number; timeout: number; noCoverage: number; machine: unknown };
const previous = existsSync(summaryFile) ? (JSON.parse(readFileSync(summaryFile, 'utf8')) as Partial<FullRun> & { incremental?: boolean; lastFullRun?: FullRun }) : undefined;
const lastFullRun: FullRun | undefined = previous?.incremental === false && typeof previous.durationS === 'number'
  ? { date: previous.date!, durationS: previous.durationS, secondsPerTestedMutant: previous.secondsPerTestedMutant ?? null, score: previous.score ?? null, mutants: previous.mutants!, killed: previous.killed!, survived: previous.survived!, timeout: previous.timeout!, noCoverage: previous.noCoverage!, machine: previous.machine }
  : previous?.lastFullRun;
const counts: Record<string, number> = {};
const disabled: Record<string, number> = {};
const survivors: string[] = [];
let total = 0;
for (const [file, { mutants }] of Object.entries(report.files)) {
  for (const m of mutants) {
    total++;
    counts[m.status] = (counts[m.status] ?? 0) + 1;
    if (m.status === 'Ignored') {
      const reason = (m.statusReason ?? 'no reason').replace(/^Ignored because of excluded mutation "[^"]*"$/, 'excluded mutator');
      disabled[reason] = (disabled[reason] ?? 0) + 1;
    }
    if (m.status === 'Survived' || m.status === 'NoCoverage') survivors.push(`${file}:${m.location.start.line} ${m.mutatorName} (${m.status})`);
  }
}
const n = (s: string) => counts[s] ?? 0;
const detected = n('Killed') + n('Timeout');
const valid = detected + n('Survived') + n('NoCoverage');
const score = valid ? Math.round((detected / valid) * 10000) / 100 : null;
const summary = {
  date: startedAt.toISOString(),
  incremental: incremental || summaryOnly,
  mutate: args.includes('--mutate') ? args[args.indexOf('--mutate') + 1] : 'stryker.config.mjs',
  // Killed and timed out over killed + timed out + survived + no coverage; disabled and invalid mutants are not in it.
  score,
  mutants: total,
  killed: n('Killed'), survived: n('Survived'), timeout: n('Timeout'), noCoverage: n('NoCoverage'),
  compileErrors: n('CompileError'), runtimeErrors: n('RuntimeError'),
  disabled: n('Ignored'), disabledByReason: disabled,
  durationS,
  // Not for an incremental run: its reused results cost no time, and the report does not say which they are.
  secondsPerTestedMutant: valid && durationS !== null && !incremental ? Math.round((durationS / valid) * 100) / 100 : null,
  machine: { cpus: cpus().length, loadAverageAtStart: loadBefore.map((x) => Math.round(x * 100) / 100), loadAverageAtEnd: loadAfter.map((x) => Math.round(x * 100) / 100) },
  untriaged: survivors,
  ...(incremental || summaryOnly ? { lastFullRun: lastFullRun ?? null } : {}),
};
mkdirSync(OUT, { recursive: true });
writeFileSync(summaryFile, `${JSON.stringify(summary, null, 2)}\n`);
console.log(`mutation score ${score ?? 'n/a'} % (${detected} of ${valid} detected; ${n('Survived')} survived, ${n('NoCoverage')} no coverage, ${n('Ignored')} disabled with a reason) in ${durationS ?? '(not measured)'} s, load average ${summary.machine.loadAverageAtStart.join(' ')}`);
console.log(`reports: ${join(OUT, 'index.html')}, mutation.json, summary.json`);
