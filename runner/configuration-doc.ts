// Writes the settings table of docs/CONFIGURATION.md from lib/run/settings.ts (between
// its markers): `npx tsx runner/configuration-doc.ts`. selftest/unit/settings.test.ts
// fails when the file and the table differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { settingsMarkdown } from '../lib/run/settings.ts';

export const CONFIGURATION_DOC = fileURLToPath(new URL('../docs/CONFIGURATION.md', import.meta.url));
const BEGIN = '<!-- settings: generated from lib/run/settings.ts by runner/configuration-doc.ts; do not edit by hand -->';
const END = '<!-- settings: end -->';

/** The document with its generated block replaced by the table of settings. */
export function withSettingsTable(doc: string): string {
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a === -1 || b < a) throw new Error(`${CONFIGURATION_DOC} has no block between "${BEGIN}" and "${END}"`);
  return `${doc.slice(0, a)}${BEGIN}\n${settingsMarkdown()}\n${doc.slice(b)}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(CONFIGURATION_DOC, withSettingsTable(readFileSync(CONFIGURATION_DOC, 'utf8')));
  console.log(`wrote the settings table of ${CONFIGURATION_DOC}`);
}
