// Which tests a run executes. CLAUSES=AUTH-*,EV-1 selects by clause id: test titles
// start with their clause id, so the selection becomes vitest's test-name pattern.
// vitest matches that pattern against the full name ("<describe> <title>"), so the
// clause id is looked for at the start of any word, followed by the space of the title.
import { ConfigError } from './config-error.ts';
import { CLAUSES } from '../spec/clauses.ts';

function parts(raw: string | undefined): string[] {
  return (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function globToRegex(glob: string): string {
  return glob.split('*').map(escape).join('[^ ]*');
}

/** The vitest testNamePattern for a selection, or undefined for "everything". Throws ConfigError on a glob matching no clause. */
export function selectionPattern(raw: string | undefined): string | undefined {
  const globs = parts(raw);
  if (globs.length === 0) return undefined;
  for (const g of globs) {
    const re = new RegExp(`^${globToRegex(g)}$`);
    if (!Object.keys(CLAUSES).some((id) => re.test(id))) {
      throw new ConfigError('CLAUSES', `"${g}" matches no clause id; use ids or globs such as AUTH-*,EV-1`);
    }
  }
  return `(?:^|\\s)(?:${globs.map(globToRegex).join('|')}) `;
}

export function selectionMatches(raw: string | undefined, clauseId: string): boolean {
  const pattern = selectionPattern(raw);
  return pattern === undefined || new RegExp(pattern).test(`${clauseId} `);
}

/** A pattern matching exactly these test titles (they end the full name): reruns of failed tests. */
export function exactTitlesPattern(titles: string[]): string {
  return `(?:^|\\s)(?:${titles.map(escape).join('|')})$`;
}

/** All patterns must match (vitest takes one regex): each becomes a lookahead from the start. */
export function allOf(...patterns: Array<string | undefined>): string | undefined {
  const given = patterns.filter((p): p is string => p !== undefined);
  if (given.length <= 1) return given[0];
  return `^${given.map((p) => `(?=.*?(?:${p}))`).join('')}`;
}

/** Checks a user's -t pattern compiles, the way vitest will compile it. */
export function checkNamePattern(pattern: string | undefined): void {
  if (pattern === undefined) return;
  try { new RegExp(pattern); } catch (err) {
    throw new ConfigError('-t', `"${pattern}" is not a regular expression (${(err as Error).message})`);
  }
}
