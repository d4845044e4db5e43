import { defineConfig } from 'vitest/config';

// The project's own tests: unit tests of each module, and end-to-end runs of the
// conformance suite against the reference server, its defects, its legal variants
// and hostile targets.
//
// Two lanes. Most files spend their time waiting (a suite run in a child process, a
// hostile target's deadline, a throttled run pacing itself, a daemon starting), so two
// of them run at once: their waits overlap on the 2-core machine, and each is bounded
// by the suite's own deadlines and counts, not by how fast the machine is. The files
// that measure timing against the truth (medians within 5 % of what the reference
// injects) run afterwards, one at a time, with the machine to themselves: vitest puts
// a project whose maxWorkers is 1 in a sequential group that runs after the others.
const ALONE = [
  'selftest/e2e/load-accuracy.test.ts',
  'selftest/e2e/k6-sse-run.test.ts',
  'selftest/e2e/k6-run.test.ts',
  'selftest/e2e/bench-stream.test.ts',
];

export default defineConfig({
  test: {
    // Hooks start servers and suite runs: a hang guard, not a bound on a loaded machine's speed.
    hookTimeout: 20 * 60_000,
    testTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', './selftest/closing-line.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'shared', include: ['selftest/**/*.test.ts'], exclude: ALONE, maxWorkers: 2, fileParallelism: true },
      },
      {
        extends: true,
        test: { name: 'alone', include: ALONE, maxWorkers: 1, fileParallelism: false },
      },
    ],
  },
});
