// The verdict vocabulary and the results contract (reports/latest/results.json).
// Other tools read this shape: add fields, never rename or remove one.
import type { Level } from './clauses.ts';

export const VERDICTS = ['pass', 'fail', 'warn', 'info', 'skip', 'inconclusive'] as const;
export type Verdict = (typeof VERDICTS)[number];

export interface TestRecord {
  /** Stable id: "<suite file>/<title>". */
  id: string;
  clause: string;
  level: Level;
  verdict: Verdict;
  title: string;
  requirement: string;
  message?: string;
  expected?: string;
  seen?: string;
  /** Reproduces the request that failed, key shown as ***. */
  curl?: string;
  response?: { status?: number; headers?: Record<string, string>; transportError?: string; bodyExcerpt?: string };
  notes: string[];
  observations?: string[];
  durationMs?: number;
  file?: string;
  /** Client-compatibility tests: the cell of the client x operation matrix this test fills. */
  matrix?: { client: string; operation: string };
}

export interface Results {
  target: string;
  startedAt: string;
  durationMs: number;
  strict: boolean;
  summary: Record<Verdict, number>;
  /** 0 pass, 1 conformance failure (as the runner exits). */
  exitCode: number;
  tests: TestRecord[];
  chatgate: { version: string; node: string; /** Peak resident memory of the runner process (tests run in its threads). */ maxRssMiB?: number };
}

export function summarise(tests: TestRecord[]): Record<Verdict, number> {
  const s = Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<Verdict, number>;
  for (const t of tests) s[t.verdict]++;
  return s;
}

declare module '@vitest/runner' {
  interface TaskMeta {
    chatgate?: TestRecord;
  }
}
