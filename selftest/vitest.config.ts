import { defineConfig } from 'vitest/config';

// The project's own tests: unit tests of each module, and end-to-end runs of the
// conformance suite against the reference server, its defects, its legal variants
// and hostile targets.
export default defineConfig({
  test: {
    include: ['selftest/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
