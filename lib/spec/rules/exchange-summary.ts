// One exchange as the per-response rules see it: the summary the exchange log
// (harness/exchange-log.ts) writes for every request of the run, whoever sent it.
// Types only, so the rules and the k6 bundles can take it without the harness.
import type { ReuseRetry } from '../../http/http-client.ts';
import type { SnapshotFinding } from '../cumulative-deltas.ts';
import type { SuccessJudgement } from './success-body.ts';
import type { ContentJudgement } from './reply-content.ts';

/** Who sent an exchange: absent, our raw client in a fixed probe. */
export type ExchangeSource = 'client' | 'fuzz' | 'preflight';

export interface ExchangeSummary {
  seq: number;
  /** When it was logged (ms since the epoch): the runner orders the run's exchanges by it, so "the first" offender is the first in time. */
  at?: number;
  test?: string;
  /**
   * 'client': a client library through the Wire (harness/clients/fetch.ts); 'fuzz': a
   * generated request of the fuzz phase; 'preflight': the runner's request before the
   * tests (lib/http/preflight.ts); absent: our raw client in a fixed probe.
   */
  source?: ExchangeSource;
  method: string;
  url: string;
  /** When the request was sent (ms since the epoch), where the sender knows it. */
  sentAt?: number;
  /** The request asked for a stream. */
  requestedStream?: true;
  status?: number;
  transportError?: string;
  /** For status >= 400: what is wrong with the error body (empty = fine). */
  errorBodyProblems?: string[];
  /** For status >= 400: the body is JSON with an `error` object (ERR-3 judges its members whatever ERR-1 says). */
  hasErrorObject?: boolean;
  errorType?: unknown;
  errorCode?: unknown;
  errorMessage?: unknown;
  errorHasParam?: boolean;
  keyEchoes: string[];
  curl: string;
  bodyExcerpt?: string;
  /** Sent again on a new connection after the reused one failed before any response (SVC-8 evidence, lib/spec/rules/connection-reuse.ts). */
  reuseRetry?: ReuseRetry;
  /** An event stream: how many non-empty content deltas it carried (EV-12's evidence). */
  contentDeltas?: number;
  /** The stream's deltas were cumulative snapshots (EV-12, lib/spec/cumulative-deltas.ts). */
  snapshots?: SnapshotFinding;
  /** A 2xx to a chat, brain or models request: the clauses its body or stream was judged on (./success-body.ts). */
  success?: SuccessJudgement[];
  /** A 2xx to POST /chat/completions: its text judged on RES-MSG-1 (a completion) or EV-4 (a stream) (./reply-content.ts). */
  content?: ContentJudgement;
}
