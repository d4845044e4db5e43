import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The project's own tests: unit tests of each module, and end-to-end runs of the
// conformance suite against the reference server, its defects, its legal variants
// and hostile targets.
//
// Two lanes. Most files spend their time waiting (a suite run in a child process, a
// hostile target's deadline, a throttled run pacing itself, a daemon starting), so three
// of them run at once: their waits overlap on the 2-core machine (two at once left a
// third of its CPU idle), and each is bounded by the suite's own deadlines and counts,
// not by how fast the machine is. The files
// that measure timing against the truth (medians within 5 % of what the reference
// injects) run afterwards, one at a time, with the machine to themselves: vitest puts
// a project whose maxWorkers is 1 in a sequential group that runs after the others.
const ALONE = [
  'selftest/e2e/load-accuracy.test.ts',
  'selftest/e2e/k6-sse-run.test.ts',
  'selftest/e2e/k6-run.test.ts',
  'selftest/e2e/bench-stream.test.ts',
];

// The longest files start first, so the run does not end on one long file with the other
// slots idle. vitest orders by the durations it cached last time, which a clean clone (CI)
// does not have; without them it goes by file size, and these files are short.
const LONGEST_FIRST = [
  'selftest/e2e/seeded-defects.test.ts',
  'selftest/e2e/legal-variants.test.ts',
  'selftest/e2e/fuzz-defects.test.ts',
  'selftest/e2e/fuzz-seeds.test.ts',
  'selftest/e2e/throttled-variants.test.ts',
  'selftest/e2e/hostile-targets.test.ts',
  'selftest/e2e/client-matrix.test.ts',
];
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.findIndex((p) => f.moduleId.replace(/\\/g, '/').endsWith(p));
      return i < 0 ? LONGEST_FIRST.length : i;
    };
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map((x) => x.f);
  }
}

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
        test: { name: 'shared', include: ['selftest/**/*.test.ts'], exclude: ALONE, maxWorkers: 3, fileParallelism: true, sequence: { sequencer: LongestFirst } },
      },
      {
        extends: true,
        test: { name: 'alone', include: ALONE, maxWorkers: 1, fileParallelism: false },
      },
    ],
  },
});
