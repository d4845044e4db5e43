// reports/latest/results.json: the machine-readable contract other tools read (lib/run/verdicts.ts).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Results } from '../../lib/run/verdicts.ts';
import { redactDeep } from '../../lib/run/redact.ts';

export function writeResultsJson(dir: string, results: Results): string {
  const file = join(dir, 'results.json');
  writeFileSync(file, JSON.stringify(redactDeep(results), null, 2) + '\n');
  return file;
}
