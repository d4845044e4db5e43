// The verdict of one fuzz clause test from a campaign's result: the suite's tests and the
// self-tests that loop seeds in process read the same function.
import type { CampaignResult, Finding } from './campaign.ts';
import type { FuzzClause } from './oracles.ts';

export interface ClauseOutcome {
  verdict: 'fail' | 'pass' | 'inconclusive';
  findings: Finding[];
  /** Generated responses this clause's oracle had something to judge in. */
  judged: number;
}

/** Every finding of the clause fails it; no finding passes it only where the oracle judged something. */
export function clauseOutcome(r: CampaignResult, id: FuzzClause): ClauseOutcome {
  const findings = r.findings.filter((f) => f.clause === id);
  const judged = r.summary.judged[id] ?? 0;
  return { verdict: findings.length ? 'fail' : judged ? 'pass' : 'inconclusive', findings, judged };
}
