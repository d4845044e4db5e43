// What a load run found wrong (or worth saying) about the target's behaviour under
// load, attributed to the catalog's clauses (ERR-*, LIM-*, EV-*, RES-*), counted, with
// the first example. The level comes from the clause registry, so a load run fails on
// exactly what `npm test` would fail on (MUST/COMPAT; SHOULD only with STRICT=1).
import { CLAUSES, failsRun, isClauseId, type Level } from '../../lib/spec/clauses.ts';
import { redact } from '../../lib/run/redact.ts';

export interface Finding {
  clause: string;
  level: Level;
  count: number;
  message: string;
  example?: string;
  /** Curl lines (keys masked) that reproduce the example's requests, where it names some (SVC-9: the request and the one whose reply it got). */
  reproduce?: string[];
}

const MAX_EXAMPLE = 600;

export class Findings {
  private readonly byKey = new Map<string, Finding>();

  /** Counts one occurrence; findings with the same clause and message are one entry. */
  add(clause: string, message: string, example?: string, level?: Level, reproduce?: string[]): void {
    const key = `${clause}\u0000${message}`;
    const f = this.byKey.get(key);
    if (f) {
      f.count++;
      return;
    }
    this.byKey.set(key, {
      clause,
      level: level ?? (isClauseId(clause) ? CLAUSES[clause].level : 'INFO'),
      count: 1,
      message,
      example: example === undefined ? undefined : redact(example).slice(0, MAX_EXAMPLE),
      ...(reproduce?.length ? { reproduce: reproduce.map(redact) } : {}),
    });
  }

  list(): Finding[] {
    const order: Record<Level, number> = { MUST: 0, COMPAT: 1, SHOULD: 2, INFO: 3 };
    return [...this.byKey.values()].sort((a, b) => order[a.level] - order[b.level] || a.clause.localeCompare(b.clause));
  }
}

/** Whether these findings fail the run (exit 1). */
export function findingsFail(findings: Finding[], strict: boolean): boolean {
  return findings.some((f) => failsRun(f.level, strict) && f.level !== 'INFO');
}
