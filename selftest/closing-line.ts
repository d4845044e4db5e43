// Ends the self-test output with the plain closing line CI reads
// ("N passed, N failed, N skipped"), after vitest's own summary.
import type { Reporter, TestModule } from 'vitest/node';

export default class ClosingLine implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0; let failed = 0; let skipped = 0;
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const s = t.result().state;
        if (s === 'passed') passed++; else if (s === 'failed') failed++; else skipped++;
      }
    }
    process.stdout.write(`\nselftest: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
