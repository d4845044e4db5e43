// "2xx", as SVC-3 and BRAIN-1 say it: one rule for both, so a brain route answering
// 201 is judged the same by each of them.
import type { ClauseContext } from './clause-test.ts';
import type { Exchange } from '../lib/http/http-client.ts';
import { describe } from '../lib/spec/schema-validator.ts';

export function isSuccess(status: number | undefined): boolean {
  return status !== undefined && status >= 200 && status < 300;
}

/** The exchange got a 2xx answer. */
export function success(t: ClauseContext, ex: Exchange): void {
  t.responded(ex);
  t.check(isSuccess(ex.status), 'HTTP 2xx', () => {
    const text = (ex.text ?? '').trim();
    return `HTTP ${ex.status}${ex.error ? ` (${ex.error.message})` : text ? `: ${describe(text, 160)}` : ' with an empty body'}`;
  }, ex);
}
