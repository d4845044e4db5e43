// Builds the run's workload from the options before any request: reads --dataset and
// --trace, checks the length distributions, loads the tokenizer. Anything unusable is
// a WorkloadInputError (one line naming the file, the line and the fix; exit 2).
import { readFileSync } from 'node:fs';
import { inputError } from '../workload/input-error.ts';
import { optionalLengthDistribution, type LengthDistribution } from '../workload/distribution.ts';
import { loadTokenizer, type Tokenizer } from '../workload/tokenizer.ts';
import { parseDataset } from '../workload/dataset.ts';
import { parseTrace } from '../workload/trace.ts';
import { Workload } from '../workload/workload.ts';
import type { LoadOptions, Scenario } from './options.ts';

export interface PreparedWorkload {
  workload?: Workload;
  tokenizer?: Tokenizer;
}

/** Options that shape the requests (given any of them, the requests come from load/workload). */
export const WORKLOAD_KEYS = [
  'promptTokens', 'promptTokensStdev', 'promptTokensMin', 'promptTokensMax', 'outputTokens', 'outputTokensStdev', 'outputTokensMin',
  'outputTokensMax', 'data', 'dataset', 'multiTurn', 'turns', 'sharedPrefixTokens', 'trace',
] as const satisfies ReadonlyArray<keyof LoadOptions>;

/** Whether this run sends through the lean client (where the workload applies). */
export function usesWorkload(scenario: Scenario, o: LoadOptions): boolean {
  return scenario === 'stream' || scenario === 'sweep' || (scenario === 'throughput' && o.rate !== undefined && o.rateEngine === 'open-loop');
}

export async function prepareWorkload(scenario: Scenario, o: LoadOptions): Promise<PreparedWorkload> {
  if (!usesWorkload(scenario, o)) return {};
  const lengths = lengthsFrom(o);
  const tokenizer = o.tokenizer === 'none' ? undefined : await loadTokenizer(o.tokenizer);
  const dataset = o.dataset ? { source: o.dataset, conversations: parseDataset(readInput(o.dataset, '--dataset'), o.dataset, o.datasetFormat) } : undefined;
  const trace = o.trace ? { source: o.trace, records: parseTrace(readInput(o.trace, '--trace'), o.trace) } : undefined;
  if (trace) checkTraceCaps(trace.source, trace.records.map((r) => r.offsetMs), o);
  if (!tokenizer && (lengths.prompt || o.sharedPrefixTokens > 0 || trace)) {
    throw inputError('--tokenizer', 0, 'none cannot build prompts of a token count (--prompt-tokens, --shared-prefix-tokens, --trace)', 'name an encoding, e.g. --tokenizer o200k_base');
  }
  if (dataset && (lengths.prompt || trace)) {
    throw inputError('--dataset', 0, 'the prompts come from the dataset, so --prompt-tokens/--trace cannot set their length', 'drop one of them');
  }
  if (o.turns > 1 && dataset) throw inputError('--turns', 0, 'a dataset brings its own turns', 'use --multi-turn with --dataset, --turns with synthetic prompts');
  if (o.turns > 1 && !lengths.prompt) throw inputError('--turns', 0, 'sessions of synthetic turns need a prompt length', 'add --prompt-tokens <n>');
  if (o.multiTurn && !dataset) throw inputError('--multi-turn', 0, 'takes the turns of a dataset', 'add --dataset <file>, or use --turns <n> with --prompt-tokens');
  const workload = new Workload({
    seed: o.seed,
    tokenizer,
    prompt: o.prompt,
    promptTokens: lengths.prompt,
    outputTokens: lengths.output,
    maxTokens: o.maxTokens,
    dataset,
    multiTurn: o.multiTurn,
    turns: o.turns,
    sharedPrefixTokens: o.sharedPrefixTokens,
    unique: o.unique,
    canaries: o.canaries,
    trace,
  });
  return { workload, tokenizer };
}

function readInput(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw inputError(`${flag} ${path}`, 0, code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? (e as Error).message})`, 'give the path of a readable file');
  }
}

/** The prompt and reply length distributions from the flags and --data (a length given both ways is an error). */
function lengthsFrom(o: LoadOptions): { prompt?: LengthDistribution; output?: LengthDistribution } {
  const fromData: Record<string, number> = {};
  if (o.data) {
    for (const part of o.data.split(',').map((p) => p.trim()).filter(Boolean)) {
      const m = /^(prompt_tokens|output_tokens)(?:_(stdev|min|max))?=(\d*\.?\d+)$/.exec(part);
      if (!m) throw inputError('--data', 0, `"${part}" is not a length setting`, 'write prompt_tokens=256,output_tokens=128 (also prompt_tokens_stdev, _min, _max and the same for output_tokens)');
      fromData[`${m[1]}${m[2] ? `_${m[2]}` : ''}`] = Number(m[3]);
    }
  }
  const pick = (flagValue: number | undefined, dataKey: string, flag: string): number | undefined => {
    if (flagValue !== undefined && fromData[dataKey] !== undefined) throw inputError('--data', 0, `${dataKey} is also given as ${flag}`, 'give each length once');
    return flagValue ?? fromData[dataKey];
  };
  const one = (name: 'prompt_tokens' | 'output_tokens', flag: string, mean?: number, stdev?: number, min?: number, max?: number): LengthDistribution | undefined => {
    const m = pick(mean, name, flag);
    const sd = pick(stdev, `${name}_stdev`, `${flag}-stdev`);
    const lo = pick(min, `${name}_min`, `${flag}-min`);
    const hi = pick(max, `${name}_max`, `${flag}-max`);
    return optionalLengthDistribution(flag, { mean: m, stdev: sd, min: lo, max: hi }, `${flag} <n>`);
  };
  return {
    prompt: one('prompt_tokens', '--prompt-tokens', o.promptTokens, o.promptTokensStdev, o.promptTokensMin, o.promptTokensMax),
    output: one('output_tokens', '--output-tokens', o.outputTokens, o.outputTokensStdev, o.outputTokensMin, o.outputTokensMax),
  };
}

/** A trace sets its own rate and length: the safety caps hold for it as for --rate and --duration. */
function checkTraceCaps(source: string, offsets: number[], o: LoadOptions): void {
  const lastS = offsets[offsets.length - 1]! / 1000;
  if (o.duration === undefined && lastS > o.capDuration) {
    throw inputError(`--trace ${source}`, 0, `the trace lasts ${Math.ceil(lastS)} s, above the cap of ${o.capDuration} s`, `raise the cap with --cap-duration ${Math.ceil(lastS) + 1}, or give --duration to replay only its start`);
  }
  // Most requests the trace sends within any one second.
  let peak = 0;
  for (let i = 0, j = 0; i < offsets.length; i++) {
    while (offsets[i]! - offsets[j]! >= 1000) j++;
    peak = Math.max(peak, i - j + 1);
  }
  if (peak > o.capRate) throw inputError(`--trace ${source}`, 0, `the trace sends ${peak} requests within one second, above the rate cap of ${o.capRate} req/s`, `raise the cap with --cap-rate ${peak}`);
}
