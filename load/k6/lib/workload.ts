// The workload of the k6 chat scripts, from __ENV: the Node harness's load/workload
// modules (length distributions, synthetic prompts, shared prefix, unique texts) with
// the words of synthetic-words.ts, which need no tokenizer in the bundle. Read at init,
// so a bad value stops the run (one ConfigError line) before any request.
import exec from 'k6/execution';
import { ConfigError, env, flag, integer } from './config.ts';
import { optionalLengthDistribution, type LengthDistribution } from '../../workload/distribution.ts';
import { WorkloadInputError } from '../../workload/input-error.ts';
import { parseExtraBody } from '../../workload/extra-body.ts';
import { wordTextSource } from '../../workload/synthetic-words.ts';
import { Workload, type ChatMessage, type WorkloadSpec } from '../../workload/workload.ts';

const DEFAULT_PROMPT = 'Say hello to the load test in one short sentence.';

/** What the Node harness does and k6's executors cannot: refused with the way to get it. */
const NODE_ONLY: Record<string, string> = {
  BURSTINESS: 'k6\'s arrival-rate executors start iterations evenly spaced, they cannot draw gamma gaps',
  ARRIVAL: 'k6\'s arrival-rate executors start iterations evenly spaced (constant or ramping), not Poisson, gamma or trace arrivals',
  TRACE: 'k6\'s executors cannot start requests at a trace\'s offsets',
  DATASET: 'the k6 scripts build synthetic prompts only',
  TURNS: 'the k6 scripts send single requests, not sessions',
};

function optionalInt(name: string, min: number, max: number): number | undefined {
  return env(name) === undefined ? undefined : integer(name, 0, min, max);
}

function optionalNumber(name: string): number | undefined {
  const raw = env(name);
  if (raw === undefined) return undefined;
  if (!/^\d*\.?\d+$/.test(raw)) throw new ConfigError(name, `"${raw}" is not a number of 0 or more; e.g. ${name}=32`);
  return Number(raw);
}

/** A length's distribution by the rules of load/workload/distribution.ts, its errors as one ConfigError line. */
function lengthFromEnv(name: 'PROMPT_TOKENS' | 'OUTPUT_TOKENS', meanMax: number): LengthDistribution | undefined {
  const parts = {
    mean: optionalInt(name, 1, meanMax),
    stdev: optionalNumber(`${name}_STDEV`),
    min: optionalInt(`${name}_MIN`, 0, meanMax),
    max: optionalInt(`${name}_MAX`, 0, meanMax),
  };
  try {
    return optionalLengthDistribution(name, parts, `${name}=<n>`);
  } catch (e) {
    // "NAME: problem; fix" from inputError: the same line, as a ConfigError (no stack trace in k6).
    if (e instanceof WorkloadInputError) throw new ConfigError(name, e.message.slice(name.length + 2));
    throw e;
  }
}

/** The spec every VU builds its Workload from (the lengths' seed is set per VU). */
export function workloadSpec(): WorkloadSpec {
  for (const name of Object.keys(NODE_ONLY)) {
    if (env(name) !== undefined) throw new ConfigError(name, `${NODE_ONLY[name]}; use the Node harness for it (npm run load -- stream ..., docs/LOAD.md "Workload")`);
  }
  const maxTokens = optionalInt('MAX_TOKENS', 1, 1000000);
  return {
    seed: integer('SEED', 1, 0, 4294967295),
    text: wordTextSource(),
    prompt: env('PROMPT') ?? DEFAULT_PROMPT,
    promptTokens: lengthFromEnv('PROMPT_TOKENS', 10000000),
    outputTokens: lengthFromEnv('OUTPUT_TOKENS', 1000000),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    multiTurn: false,
    turns: 1,
    sharedPrefixTokens: integer('SHARED_PREFIX_TOKENS', 0, 0, 10000000),
    unique: flag('UNIQUE', true),
  };
}

/** EXTRA_BODY: request fields merged into every body (the Node harness's --extra-body, same rules). */
export function extraBodyFromEnv(): Record<string, unknown> | undefined {
  const raw = env('EXTRA_BODY');
  if (raw === undefined) return undefined;
  try {
    return parseExtraBody(raw, 'EXTRA_BODY');
  } catch (e) {
    if (e instanceof WorkloadInputError) throw new ConfigError('EXTRA_BODY', e.message.slice('EXTRA_BODY: '.length));
    throw e;
  }
}

/** The workload's settings for the summary's identity: runners of one test must agree on them. */
export function workloadSettings(spec: WorkloadSpec): Record<string, unknown> {
  const d = new Workload(spec).describe();
  delete d.tokenizer; // k6 counts nothing: its prompts are word counts (exact in every encoding chatgate knows)
  return d;
}

// Request numbers unique across VUs and runners (exec.vu.idInTest is unique in a split test).
const PER_VU = 1048576;

let vuWorkload: Workload | undefined;

/** The messages and max_tokens of this VU's next request. */
export function nextRequest(spec: WorkloadSpec): { messages: ChatMessage[]; maxTokens?: number } {
  const vu = exec.vu.idInTest;
  // Built on the first request (exec.vu is unknown in init code); the lengths get the VU's own stream.
  vuWorkload ??= new Workload({ ...spec, lengthSeed: (spec.seed + Math.imul(vu, 0x9e3779b1)) >>> 0 });
  const item = vuWorkload.next(vu * PER_VU + exec.vu.iterationInScenario);
  return { messages: item.messages, ...(item.maxTokens !== undefined ? { maxTokens: item.maxTokens } : {}) };
}
