// CLAUSES=AUTH-*,EV-1: run only some clauses. Test titles start with their clause
// id, so the selection becomes vitest's test-name pattern.
import { ConfigError } from './config.ts';
import { CLAUSES } from './clauses.ts';

function parts(raw: string | undefined): string[] {
  return (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

function globToRegex(glob: string): string {
  return glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^ ]*');
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
  return `^(${globs.map(globToRegex).join('|')}) `;
}

export function selectionMatches(raw: string | undefined, clauseId: string): boolean {
  const pattern = selectionPattern(raw);
  return pattern === undefined || new RegExp(pattern).test(`${clauseId} `);
}
