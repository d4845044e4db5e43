// Mutation runs only (mutation/vitest.config.ts): the embedded reference server runs
// inside the test worker, so StrykerJS sees which test made
// the server run which code (per-test coverage) and a mutant is judged by the few tests
// that reach it, not by a whole run in another process. Everything else is what
// bin/chatgate.ts does for the embedded target, including the run-wide clauses, which
// here judge each test's own exchanges as it ends (a broken one fails that test).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, inject } from 'vitest';
import type { ReferenceServer } from '../reference/server.ts';
import { bypassProxyFor } from '../lib/http/proxy.ts';
import { loadConfig } from '../lib/run/config.ts';
import { EMBEDDED_KEY_VARIABLES, runContextOf, writeRunContext } from '../lib/run/run-context.ts';
import { runWideChecks } from '../runner/run-wide-checks.ts';
import type { ExchangeSummary } from '../harness/exchange-log.ts';

// Stryker's own set-up file (@stryker-mutator/vitest-runner 9.5, the last for Node 20)
// hands the coverage and hit counts over in `afterAll(({ meta }) => ...)`, which
// vitest 4.1 refuses (a hook's first argument is now its fixtures; the file is the
// second): without this, Stryker gets no per-test coverage and runs every test
// against every mutant. Registered after Stryker's hook, so it runs before it.
declare module 'vitest' { interface ProvidedContext { globalNamespace: string; mode: 'dry-run' | 'mutant' } }
// eslint-disable-next-line no-empty-pattern -- vitest reads the fixtures a hook asks for from this pattern
afterAll(({}, file) => {
  const meta = file.meta as { mutantCoverage?: unknown; hitCount?: number };
  const stryker = (globalThis as unknown as Record<string, { mutantCoverage?: unknown; hitCount?: number } | undefined>)[inject('globalNamespace') ?? '__stryker__'];
  if (inject('mode') === 'mutant') meta.hitCount = stryker?.hitCount;
  else meta.mutantCoverage = stryker?.mutantCoverage;
});

// One server per worker, as the runner starts one per run: with isolate: false
// (mutation/vitest.config.ts) suite files share the worker and its module cache, so the
// harness reads the target once; this file runs again before each of them.
// A mutant that breaks the server's start (a module that throws as it loads, an option
// check that refuses the defaults, an empty url) must fail every test, as a server that
// does not start fails a real run. Thrown here, it would be a set-up error: vitest then
// runs no test and Stryker counts a run without a failing test as "survived". So the
// reference is imported and started inside the catch, and the error fails each test.
const shared = globalThis as { chatgateMutationTarget?: { ref: ReferenceServer; runDir: string; judged: number } | { startError: string } };
const started = (shared.chatgateMutationTarget ??= await (async () => {
  const { startReferenceServer } = await import('../reference/server.ts');
  const { DEFAULT_RATE_LIMIT_KEY_LIMIT } = await import('../reference/options.ts');
  // The rate-limit key's window is 3 s here, not 1 s: LIM-3 honours up to two further
  // advised waits, and a mutant that advertises 1 ms must still be throttled when the
  // third ends, even on a loaded machine (in 1 s windows it was not: a survivor).
  const ref = await startReferenceServer({ rateLimit: { rateLimit: { ...DEFAULT_RATE_LIMIT_KEY_LIMIT, windowMs: 3_000 } } });
  bypassProxyFor(new URL(ref.url).hostname);
  const runDir = mkdtempSync(join(tmpdir(), 'chatgate-mutation-'));
  // The same run context the runner writes (lib/run/run-context.ts), knobs from this
  // worker's environment (mutation/vitest.config.ts), keys in the environment by name.
  Object.assign(process.env, {
    [EMBEDDED_KEY_VARIABLES.main]: ref.keys.main, [EMBEDDED_KEY_VARIABLES.limited]: ref.keys.limited,
    [EMBEDDED_KEY_VARIABLES.rateLimit]: ref.keys.rateLimit,
  });
  const config = loadConfig({ ...process.env, TARGET_URL: undefined });
  writeRunContext(runDir, runContextOf(config, {
    phase: 'run', target: { url: ref.url, keys: { ...EMBEDDED_KEY_VARIABLES }, embedded: {} }, brainId: ref.brainId,
    mode: { strict: config.strict, mutation: true },
  }));
  process.env.CHATGATE_RUN_DIR = runDir;
  // The worker ends with the run; its server must not keep it alive.
  process.once('exit', () => rmSync(runDir, { recursive: true, force: true }));
  return { ref, runDir, judged: 0 };
})().catch((err: unknown) => ({ startError: err instanceof Error ? err.stack ?? err.message : String(err) })));

beforeEach(() => {
  if ('startError' in started) throw new Error(`the reference server did not start, so no test can judge it:\n${started.startError}`);
});

afterEach(() => {
  if ('startError' in started) return;
  const target = started;
  const exchanges: ExchangeSummary[] = [];
  for (const f of readdirSync(target.runDir).sort()) {
    if (!f.endsWith('.jsonl')) continue; // the exchange logs, not the run context
    for (const line of readFileSync(join(target.runDir, f), 'utf8').split('\n')) if (line) exchanges.push(JSON.parse(line));
  }
  const mine = exchanges.slice(target.judged);
  target.judged = exchanges.length;
  const broken = runWideChecks(mine, target.ref.url).filter((r) => r.verdict === 'fail' || r.verdict === 'warn');
  if (broken.length) throw new Error(`run-wide clause broken by this test's exchanges:\n${broken.map((r) => `  ${r.title}: ${r.message}`).join('\n')}`);
});
