// The suite's files by spec section (suites/*.test.ts but the fuzz phase), read from the
// folder so a new section file is in every self-test that runs "every section" at once.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './run-suite.ts';

export const SECTION_FILES: string[] = readdirSync(join(ROOT, 'suites'))
  .filter((f) => f.endsWith('.test.ts') && f !== 'fuzz.test.ts')
  .map((f) => f.replace(/\.test\.ts$/, ''))
  .sort();
