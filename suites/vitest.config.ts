import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { runContext } from '../lib/run/run-context.ts';

// The conformance run. Started by bin/chatgate.ts (npm test), which validates the
// configuration, starts the embedded reference server when TARGET_URL is unset, and
// turns the tests' verdicts into reports; running vitest on this config directly
// skips all of that.
// The settings come from the run context the runner wrote (validated by loadConfig).
const context = runContext();
const timeoutMs = context.timeoutMs;
// Self-test seam (docs/RUNNER.md), not for users: CHATGATE_SELFTEST_SUITES=<folder>
// adds that folder's *.suite.ts files (deliberately broken tests, a client that does
// not load) to the run, so the self-tests can prove harness errors show as `error`.
const selftestSuites = context.selftestSuites;

export default defineConfig({
  test: {
    include: ['suites/**/*.test.ts', ...(selftestSuites ? [`${selftestSuites}/**/*.suite.ts`] : [])],
    // Tests are independent requests: run them concurrently within and across files,
    // so a remote target's latency is not paid serially.
    sequence: { concurrent: true },
    maxConcurrency: 8,
    fileParallelism: true,
    // A worker per core, at most 4: each worker loads the harness once (isolate: false), and
    // tests run concurrently inside each file, so more workers than cores only add loading.
    // On 2 cores a full run costs a quarter less CPU with 2 workers than with 4.
    maxWorkers: Math.max(1, Math.min(4, availableParallelism())),
    pool: 'threads',
    // Files share their worker's module cache: each file still runs its own module (its
    // tests, its state), but ajv's compiled schemas, undici and the harness load once per
    // worker instead of once per file. Measured on the embedded default: 13 CPU-s instead
    // of 22, the same verdict for every test. The shared modules hold per-run state only
    // (the run's secrets, the exchange sequence, the governor, loaded client drivers).
    isolate: false,
    testTimeout: timeoutMs * 2 + 35_000,
    hookTimeout: timeoutMs + 10_000,
    // Verdicts go to our reporter; vitest's retry would blur the clause verdicts.
    retry: 0,
    // The suite files and the harness, transformed once and kept in node_modules/.experimental-vitest-cache
    // (keyed by each file's content): a run otherwise spends half a CPU-second transforming them again.
    experimental: { fsModuleCache: true },
  },
});
