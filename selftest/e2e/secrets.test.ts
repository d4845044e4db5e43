// No key in any report, log or console output: run the suite against the reference
// and against defects that echo keys, then scan every file under the reports
// directory and everything printed for every key used.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSuite } from '../support/run-suite.ts';
import { referenceTarget } from '../support/targets.ts';
import { nearMissKeys } from '../../lib/run/redact.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

// A secret extra header (HEADERS, e.g. a gateway's own key) is masked like a key.
const HEADER_SECRET = `pk-hdr-${Math.random().toString(36).slice(2, 12)}`;

describe.concurrent('keys never appear in reports or output', () => {
  // auth-key-in-query-accepted / auth-key-prefix-compare: keys sent as ?api_key= and near misses of them (AUTH-1/2) fail, with their curl lines.
  for (const defect of [undefined, 'key-echoed-in-error', 'key-echoed-in-header', 'auth-after-validation', 'auth-401-as-event-stream', 'auth-key-in-query-accepted', 'auth-key-prefix-compare']) {
    it(defect ?? 'conformant reference', async () => {
      const target = await referenceTarget({ defect });
      try {
        const run = await runSuite({ ...target.env, TIMEOUT_MS: '5000', HEADERS: `x-tenant: t1\nx-portkey-api-key: ${HEADER_SECRET}` });
        expect(run.results).toBeDefined();
        if (defect?.startsWith('key-echoed')) expect(run.clauses('fail')).toContain('AUTH-9');
        const files = filesUnder(run.reportsDir);
        expect(files.length).toBeGreaterThanOrEqual(4);
        // Near misses (AUTH-2) are almost the key: they must not show either.
        for (const key of [...target.keys, ...target.keys.flatMap((k) => nearMissKeys(k).map((m) => m.value)), HEADER_SECRET]) {
          expect(run.stdout.includes(key) || run.stderr.includes(key), 'console output').toBe(false);
          for (const f of files) expect(readFileSync(f, 'utf8').includes(key), f).toBe(false);
        }
        // Failures still come with their reproduction, key masked.
        const curls = run.results!.tests.filter((t) => t.curl).map((t) => t.curl!);
        if (run.exitCode === 1) expect(curls.some((c) => c.includes("Bearer ***"))).toBe(true);
        for (const c of curls) expect(c).toContain(`-H 'x-portkey-api-key: ***'`);
      } finally { await target.close(); }
    }, HANG_GUARD_MS);
  }
});
