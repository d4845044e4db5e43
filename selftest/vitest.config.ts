import { defineConfig } from 'vitest/config';

// The project's own tests: unit tests of each module, and end-to-end runs of the
// conformance suite against the reference server, its defects, its legal variants
// and hostile targets. Files run one at a time: the end-to-end files start suite
// runs of their own (two at a time at most), and the load-accuracy tests need the
// 2-core machine to themselves.
export default defineConfig({
  test: {
    include: ['selftest/**/*.test.ts'],
    testTimeout: 60_000,
    // Hooks start servers and suite runs: a hang guard, not a bound on a loaded machine's speed.
    hookTimeout: 20 * 60_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    reporters: ['default', './selftest/closing-line.ts'],
  },
});
