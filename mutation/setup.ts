// Mutation runs only (mutation/vitest.config.ts): each suite file starts its own
// embedded reference server inside the test worker, so StrykerJS sees which test made
// the server run which code (per-test coverage) and a mutant is judged by the few tests
// that reach it, not by a whole run in another process. Everything else is what
// bin/chatgate.ts does for the embedded target, including the run-wide clauses, which
// here judge each test's own exchanges as it ends (a broken one fails that test).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { startReferenceServer } from '../reference/server.ts';
import { bypassProxyFor } from '../lib/proxy.ts';
import { runWideChecks } from '../runner/run-wide-checks.ts';
import type { ExchangeSummary } from '../harness/exchange-log.ts';

const ref = await startReferenceServer({});
bypassProxyFor(new URL(ref.url).hostname);
const runDir = mkdtempSync(join(tmpdir(), 'chatgate-mutation-'));
Object.assign(process.env, {
  CHATGATE_EMBEDDED: '1', CHATGATE_RUN_DIR: runDir,
  TARGET_URL: ref.url, API_KEY: ref.keys.main, LIMITED_API_KEY: ref.keys.limited,
  RATE_LIMIT_API_KEY: ref.keys.rateLimit, BRAIN_ID: ref.brainId,
});

let judged = 0;
afterEach(() => {
  const exchanges: ExchangeSummary[] = [];
  for (const f of readdirSync(runDir).sort()) {
    for (const line of readFileSync(join(runDir, f), 'utf8').split('\n')) if (line) exchanges.push(JSON.parse(line));
  }
  const mine = exchanges.slice(judged);
  judged = exchanges.length;
  const broken = runWideChecks(mine, ref.url).filter((r) => r.verdict === 'fail' || r.verdict === 'warn');
  if (broken.length) throw new Error(`run-wide clause broken by this test's exchanges:\n${broken.map((r) => `  ${r.title}: ${r.message}`).join('\n')}`);
});

afterAll(async () => {
  await ref.close();
  rmSync(runDir, { recursive: true, force: true });
});
