// SVC-8 (connection reuse) evidence from the run's own traffic. The raw client sends a
// request once more on a new connection when a reused connection failed before any
// response (lib/http/http-client.ts, Exchange.reuseRetry), so the clause under test is judged
// on a real answer; this turns those events into SVC-8 findings for the run-wide checks.
// Only a failure "at once" counts: a connection idle longer than the Keep-Alive timeout
// its previous response advertised, or idle for a second or more, may be closed by the
// server (RFC 9112 §9.3), and a request racing that close is nobody's fault.
import type { ReuseRetry } from '../../http/http-client.ts';

/** How long after a response a request still counts as sent "at once" on its connection. */
export const AT_ONCE_MS = 1000;

export function isReuseBreach(r: ReuseRetry): boolean {
  const idle = r.idleMs ?? 0;
  if (idle >= AT_ONCE_MS) return false;
  if (r.keepAliveTimeoutMs !== undefined && idle >= r.keepAliveTimeoutMs) return false;
  return true;
}

/**
 * SVC-8 evidence from exchange summaries (harness/exchange-log.ts): one line per request
 * that failed on a connection the server had left open (no Connection: close) and that
 * was sent on it at once. Empty: no such event (which is not by itself a pass: the
 * SVC-8 probe in suites/svc.test.ts is the test; this adds what the run met elsewhere).
 */
export function reuseRetryEvidence(summaries: Array<{ method: string; url: string; test?: string; reuseRetry?: ReuseRetry }>): string[] {
  return summaries.filter((s) => s.reuseRetry && isReuseBreach(s.reuseRetry)).map((s) => {
    const r = s.reuseRetry!;
    const idle = r.idleMs === undefined ? '' : ` ${r.idleMs} ms after its previous response`;
    return `${s.method} ${s.url}${s.test ? ` (${s.test})` : ''}: ${r.error} on a connection left open${idle}; sent again on a new connection`;
  });
}
