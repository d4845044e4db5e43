import { defineConfig, mergeConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import suites from '../suites/vitest.config.ts';

// The conformance suite as StrykerJS runs it (npm run mutation, stryker.config.mjs):
// suites/ (their mutation-run forms, mode.mutation in the run context: clause tests one at a time, one fuzz campaign),
// with the reference server started in the test worker by mutation/setup.ts instead of
// by the runner. Stryker runs one worker (it overrides the concurrency settings).
// Quick files first: a mutant stops at its first failing test (bail), so the files whose
// tests wait (the auth matrix, client libraries, the fuzz campaign, the rate-limit probe)
// run only when the quick ones did not catch it. vitest's own order runs the longest first.
const LATER = ['suites/auth.test.ts', 'suites/clients/', 'suites/fuzz.test.ts', 'suites/limits.test.ts'];
class QuickFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => LATER.findIndex((p) => f.moduleId.replace(/\\/g, '/').includes(p));
    return [...files].sort((a, b) => rank(a) - rank(b) || a.moduleId.localeCompare(b.moduleId));
  }
}

export default mergeConfig(suites, defineConfig({
  test: {
    setupFiles: ['mutation/setup.ts'],
    // One test at a time: Stryker attributes the code that runs to the test between its
    // beforeEach and afterEach, which concurrent tests of a file would interleave.
    sequence: { concurrent: false, sequencer: QuickFirst },
    // Suite files share the worker's module cache and one reference server
    // (mutation/setup.ts), so a mutant pays one worker start and import, not one per file.
    // Each run (each mutant) still gets a fresh worker, so module-level (static) mutants
    // load with the mutant on. MUTATION_ISOLATE=1: a worker per file, as npm test.
    isolate: process.env.MUTATION_ISOLATE === '1',
    // Read by mutation/setup.ts, which writes them into the run context (a mutation run, like every run, has one).
    env: {
      // Fixed, so every mutant meets the same generated requests (the fuzz phase is part of the suite).
      FUZZ_SEED: process.env.FUZZ_SEED ?? '20261123',
      FUZZ_RUNS: process.env.FUZZ_RUNS ?? '200',
      // A mutant that stalls the server costs this per request; in-process loopback answers in milliseconds.
      TIMEOUT_MS: process.env.TIMEOUT_MS ?? '5000',
    },
  },
}));
