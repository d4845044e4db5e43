// npm run mutation: StrykerJS mutates the reference server and runs the conformance
// suite against every mutant (docs/MUTATION.md). The suite runs in
// one vitest worker with the reference started inside it (mutation/vitest.config.ts,
// mutation/setup.ts), so per-test coverage picks the few tests that reach a mutant.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'mutation/vitest.config.ts', related: false },
  coverageAnalysis: 'perTest',
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  plugins: ['@stryker-mutator/vitest-runner', '@stryker-mutator/typescript-checker', './mutation/defect-gates.mjs'],
  ignorers: ['defect-gates'],
  // The server's code. Not mutated: the defect and variant catalogues (names and
  // descriptions the self-tests and --list read; the gates they name are handled by
  // mutation/defect-gates.mjs).
  mutate: ['reference/**/*.ts', '!reference/defects.ts', '!reference/variants.ts'],
  reporters: ['html', 'json', 'clear-text', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  // --incremental reuses the results of unchanged code and tests; kept with the reports.
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  // Two test workers: the machine has two cores.
  concurrency: Number(process.env.MUTATION_CONCURRENCY || 2),
  // A mutant that stalls a response fails on the suite's own request limit (TIMEOUT_MS=5000 in
  // mutation/vitest.config.ts), well before this; a generous limit keeps a loaded machine's
  // slowness from passing for a detected mutant (a "timeout").
  timeoutMS: 30000,
  timeoutFactor: 2,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  ignorePatterns: ['reports/latest', 'reports/runs', 'reports/load', 'reports/selftest', 'reports/bench', 'reports/mutation', '.cache', 'load/k6/dist'],
};
