// The run context: what the runner (bin/chatgate.ts, or mutation/setup.ts for a mutation
// run) tells its test workers, written once as run-context.json in the run directory
// (CHATGATE_RUN_DIR) and read here, the one place workers learn it. The environment
// carries only the run directory's path and the secrets: keys are named by the variable
// that holds them, never written to disk (HEADERS/HEADERS_FILE stay in the environment too,
// read by lib/http/extra-headers.ts, which the load harness shares).
// Reading never throws for want of a context: outside a run (a unit test, vitest run on
// suites/ directly) the knobs are at their defaults and there is no target; only using
// the target then fails, in the test that uses it. The contract: docs/RUNNER.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, type Config, type FuzzConfig } from './config.ts';

export const RUN_CONTEXT_FILE = 'run-context.json';
export const RUN_CONTEXT_VERSION = 1;

export interface RunContext {
  version: typeof RUN_CONTEXT_VERSION;
  /** 'collect': the runner only lists the tests (no target, nothing is sent); 'run': tests run. */
  phase: 'collect' | 'run';
  /** Absent when collecting, or outside a run. */
  target?: TargetRef;
  /** BRAIN_ID, or the embedded reference's brain. */
  brainId?: string;
  models: string[];
  timeoutMs: number;
  rateLimitProbeMax: number;
  mode: {
    strict: boolean;
    /** The selection (CLAUSES, -t, file filters), for what the workers report. */
    clauses?: string;
    testNamePattern?: string;
    files?: string[];
    /** A mutation run (mutation/setup.ts): every test makes its own exchanges, a warning kills the mutant. */
    mutation?: boolean;
  };
  /** The fuzz phase; `seed` is drawn by the runner when FUZZ_SEED is unset, so every worker has the same. */
  fuzz: FuzzConfig;
  /** CHATGATE_SELFTEST_SUITES (self-test seam): a folder whose *.suite.ts files suites/vitest.config.ts adds. */
  selftestSuites?: string;
}

export interface TargetRef {
  /** Base URL ending in /v1. */
  url: string;
  /** Names of the environment variables holding the keys (a key is never written to disk). */
  keys: { main: string; limited?: string; rateLimit?: string };
  /** The embedded reference server: a replay command names its defect and variants, not its URL. */
  embedded?: { defect?: string; variants?: string[] };
}

/**
 * Where the embedded reference server's keys are put in the runner's environment (its
 * workers inherit it) when the runner starts one: apart from API_KEY and the others, which
 * stay what the user set.
 */
export const EMBEDDED_KEY_VARIABLES = {
  main: 'CHATGATE_REFERENCE_API_KEY', limited: 'CHATGATE_REFERENCE_LIMITED_API_KEY', rateLimit: 'CHATGATE_REFERENCE_RATE_LIMIT_API_KEY',
} as const;

/** The names of the key variables of a validated configuration with TARGET_URL set (only those set). */
export function keyVariables(config: Config): TargetRef['keys'] {
  return {
    main: 'API_KEY',
    ...(config.limitedApiKey ? { limited: 'LIMITED_API_KEY' } : {}),
    ...(config.rateLimitApiKey ? { rateLimit: 'RATE_LIMIT_API_KEY' } : {}),
  };
}

/** The context of a validated configuration; `over` gives the target and what the runner decided (phase, seed, mode). */
export function runContextOf(config: Config, over: Partial<RunContext> & Pick<RunContext, 'phase'>): RunContext {
  return {
    version: RUN_CONTEXT_VERSION, models: config.models, timeoutMs: config.timeoutMs,
    rateLimitProbeMax: config.rateLimitProbeMax, ...(config.brainId ? { brainId: config.brainId } : {}),
    mode: { strict: config.strict }, fuzz: config.fuzz,
    ...(config.selftest.suites ? { selftestSuites: config.selftest.suites } : {}), ...over,
  };
}

/** The context of no run: every knob at its default, no target. */
export function defaultRunContext(): RunContext {
  return runContextOf(loadConfig({}), { phase: 'collect' });
}

/** Writes `context` into the run directory (the runner, once, before any worker starts). */
export function writeRunContext(runDir: string, context: RunContext): void {
  writeFileSync(join(runDir, RUN_CONTEXT_FILE), `${JSON.stringify(context, null, 2)}\n`, { mode: 0o600 });
  cached = undefined;
}

let cached: { dir: string | undefined; context: RunContext } | undefined;

/**
 * The run context of this process, read once on first use (again only if CHATGATE_RUN_DIR
 * changes). No run directory or no context file in it: the default context. A context
 * file that cannot be parsed is a defect of the runner: that throws, with its path.
 */
export function runContext(env: NodeJS.ProcessEnv = process.env): RunContext {
  const dir = env.CHATGATE_RUN_DIR || undefined;
  if (cached && cached.dir === dir) return cached.context;
  let context = defaultRunContext();
  if (dir) {
    const file = join(dir, RUN_CONTEXT_FILE);
    let text: string | undefined;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`the run context ${file} cannot be read: ${(err as Error).message}`);
    }
    if (text !== undefined) {
      const parsed = JSON.parse(text) as RunContext;
      if (parsed?.version !== RUN_CONTEXT_VERSION) throw new Error(`the run context ${file} has version ${JSON.stringify(parsed?.version)}, not ${RUN_CONTEXT_VERSION}: the runner and the workers are from different chatgate versions`);
      context = parsed;
    }
  }
  cached = { dir, context };
  return context;
}

/** The key a context names (read from the environment), or undefined when it names none. */
export function keyFrom(name: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (name === undefined) return undefined;
  const v = env[name]?.trim();
  if (!v) throw new Error(`the run context names ${name} for a key, but ${name} is not set in this process's environment`);
  return v;
}
