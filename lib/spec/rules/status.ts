// Rules on a response's status alone, for every sender: the suite's table, the client
// cells, the rate-limit probes, the load driver, the k6 scripts and the load report.
// No imports: the k6 bundles take it whole.

/** ERR-2: a 5xx other than 503 (503 is the spec's answer for an overloaded service). */
export function isServerError(status: number): boolean {
  return status >= 500 && status !== 503;
}

/** LIM-1: what a request past the limit must never get: no answer at all (undefined, or k6's 0) or a 5xx other than 503. */
export function isDroppedOrServerError(status: number | undefined): boolean {
  return status === undefined || status === 0 || isServerError(status);
}

/** The clause an error body on this failing status answers to: LIM-1 for 429, ERR-4 for 503, ERR-1 otherwise. */
export function errorBodyClause(status: number): 'LIM-1' | 'ERR-4' | 'ERR-1' {
  return status === 429 ? 'LIM-1' : status === 503 ? 'ERR-4' : 'ERR-1';
}
