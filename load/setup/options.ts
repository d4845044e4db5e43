// The options of `npm run load`: one table (flag, environment variable, type, default,
// scenarios, help) from which the parser, --help and the docs check all come, so an
// option cannot exist undocumented. A bad option is a UsageError: one line, exit 2.
//
// Flags win over the environment. An option given as a flag to a scenario it does not
// apply to is an error (it would be silently ignored otherwise); the same variable in
// the environment is ignored, since one environment often serves several scenarios.

import { parseArgs as parseCommandLine } from 'node:util';
import { readFileSync } from 'node:fs';
import { DEFAULT_PROMPT } from '../engine/request-bodies.ts';
import { parseExtraBody } from '../workload/extra-body.ts';

export const SCENARIOS = ['throughput', 'stream', 'sweep', 'rate-limit'] as const;
export type Scenario = (typeof SCENARIOS)[number];

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

type Kind = 'seconds' | 'number' | 'integer' | 'share' | 'bool' | 'string' | 'enum' | 'list';

export interface OptionSpec {
  key: keyof LoadOptions;
  flag: string;
  env: string;
  kind: Kind;
  scenarios: readonly Scenario[] | 'all';
  /** Shown in --help and the docs; undefined = unset unless given. */
  default?: number | string | boolean | string[];
  min?: number;
  max?: number;
  values?: readonly string[];
  /** Placeholder for the value in --help. */
  arg?: string;
  help: string;
  /** Only meaningful for the embedded reference server (no TARGET_URL). */
  embeddedOnly?: boolean;
}

export interface LoadOptions {
  duration?: number;
  requests?: number;
  rate?: number;
  arrival?: 'constant' | 'poisson' | 'gamma' | 'trace';
  burstiness: number;
  trace?: string;
  rateEngine: 'open-loop' | 'autocannon';
  connections: number;
  concurrency?: number;
  maxConcurrency?: number;
  rampUp: number;
  model?: string;
  prompt: string;
  maxTokens?: number;
  /** --extra-body, as canonical JSON text (a file given as @file is read at parse time). */
  extraBody?: string;
  // workload (load/workload)
  promptTokens?: number;
  promptTokensStdev?: number;
  promptTokensMin?: number;
  promptTokensMax?: number;
  outputTokens?: number;
  outputTokensStdev?: number;
  outputTokensMin?: number;
  outputTokensMax?: number;
  data?: string;
  tokenizer: string;
  dataset?: string;
  datasetFormat: 'auto' | 'openai' | 'sharegpt' | 'prompts' | 'text';
  multiTurn: boolean;
  turns: number;
  sharedPrefixTokens: number;
  unique: boolean;
  saveGaps: boolean;
  canaries: boolean;
  cancelShare: number;
  cancelAfter: string;
  brainShare: number;
  sampleEvery: number;
  seed: number;
  coCorrection: boolean;
  warmup: number;
  timeoutMs?: number;
  baseline?: string;
  thresholds: string[];
  out?: string;
  allowRemote: boolean;
  dryRun: boolean;
  quiet: boolean;
  drain: number;
  capDuration: number;
  capRate: number;
  capConcurrency: number;
  // sweep
  sweepBy: 'rate' | 'concurrency';
  sweepStart: number;
  sweepFactor: number;
  sweepStep?: number;
  sweepMax?: number;
  sweepSteps: number;
  stepDuration: number;
  sloTtftP95Ms: number;
  sloItlP95Ms?: number;
  sloE2eP95Ms?: number;
  sloErrorShare: number;
  stepMinRequests: number;
  expectCapacity?: number;
  requireLikeForLike: boolean;
  /** SLOs given as flags or variables (stream, throughput: only these gate the run). */
  slosGiven?: string[];
  // rate-limit
  rampStart: number;
  rampFactor: number;
  rampStepDuration: number;
  rampMax: number;
  burstDuration: number;
  bystanderRate: number;
  recoveryMax: number;
  // embedded reference server
  refTtftMs: number;
  refItlMs: number;
  refJsonMs: number;
  refReplyWords: number;
  refStallEvery: number;
  refStallMs: number;
  refOverloadInFlight?: number;
  refRateLimit: number;
  refMainLimit: number;
  refDefect?: string;
  refVariants: string[];
  // --- the sweep's search for the limit and the reference's engine model
  sloTpotP95Ms?: number;
  sweepTolerance: number;
  sweepRefineSteps: number;
  sweepMaxDriverLagMs: number;
  refEngine: boolean;
  refMaxBatch: number;
  refPrefillTps: number;
  refDecodeStepMs: number;
  refDecodeStepPerSeqMs: number;
  // --- rehearsing a change (load/setup/phases.ts, load/setup/change.ts, load/report/slices.ts)
  phases?: string;
  capacity?: string;
  at?: string;
  run?: string;
  markStdin: boolean;
  slice?: number;
  recoverSlices: number;
}

const LOAD: readonly Scenario[] = ['throughput', 'stream'];
const STREAMING: readonly Scenario[] = ['stream', 'sweep'];
const PACED: readonly Scenario[] = ['throughput', 'stream', 'sweep'];
const SENDERS: readonly Scenario[] = ['throughput', 'stream', 'sweep'];
const WORKLOAD: readonly Scenario[] = ['throughput', 'stream', 'sweep'];

export const OPTION_SPECS: readonly OptionSpec[] = [
  // --- how much load --------------------------------------------------------------
  { key: 'duration', flag: '--duration', env: 'LOAD_DURATION', kind: 'seconds', scenarios: LOAD, min: 0.1, arg: 's', help: 'How long to send (seconds; 500ms, 2m also accepted). Default 10, or until --requests are sent.' },
  { key: 'requests', flag: '--requests', env: 'LOAD_REQUESTS', kind: 'integer', scenarios: 'all', min: 1, max: 10_000_000, arg: 'n', help: 'Stop after sending this many requests (throughput, stream: instead of --duration; sweep, rate-limit: upper bound on the whole run).' },
  { key: 'rate', flag: '--rate', env: 'LOAD_RATE', kind: 'number', scenarios: LOAD, min: 0.01, arg: 'req/s', help: 'Fixed overall request rate. throughput: constant rate (see --rate-engine), latencies free of coordinated omission; stream: open-loop arrival rate (default 10 unless --concurrency).' },
  { key: 'arrival', flag: '--arrival', env: 'LOAD_ARRIVAL', kind: 'enum', values: ['poisson', 'constant', 'gamma', 'trace'], scenarios: PACED, help: 'Open-loop arrivals: Poisson (exponential gaps, like real users), evenly spaced, gamma (gaps shaped by --burstiness) or trace (the offsets of --trace). Default poisson for stream and sweep (a sweep step sends exactly rate x length requests at random times: Poisson conditioned on its count), constant for throughput --rate (as wrk2); trace when --trace is given.' },
  { key: 'burstiness', flag: '--burstiness', env: 'LOAD_BURSTINESS', kind: 'number', scenarios: PACED, default: 1, min: 0.01, max: 1000, arg: 'k', help: 'Gamma arrivals: shape of the gaps (vLLM\'s meaning): 1 = Poisson, below 1 burstier, above 1 more evenly spaced; the mean rate stays --rate. Giving it selects --arrival gamma.' },
  { key: 'trace', flag: '--trace', env: 'LOAD_TRACE', kind: 'string', scenarios: ['stream'], arg: 'file', help: 'Replay a trace: JSONL {"timestamp": ms, "input_length": n, "output_length": n} (or CSV with those columns); each record is sent at its offset from the first with a synthetic prompt of its length, asking its reply length. Sending ends with the trace (or --duration).' },
  { key: 'rateEngine', flag: '--rate-engine', env: 'LOAD_RATE_ENGINE', kind: 'enum', values: ['open-loop', 'autocannon'], scenarios: ['throughput'], default: 'open-loop', help: 'With --rate: who paces the requests. open-loop (wrk2 model): evenly spaced arrivals over --connections, latency from each intended send time; autocannon: its overallRate (each connection sends its per-second quota in a burst) with a post-hoc correction.' },
  { key: 'connections', flag: '--connections', env: 'LOAD_CONNECTIONS', kind: 'integer', scenarios: ['throughput'], default: 10, min: 1, arg: 'n', help: 'Keep-alive connections (autocannon\'s, or those the fixed-rate sender spreads its requests over).' },
  { key: 'concurrency', flag: '--concurrency', env: 'LOAD_CONCURRENCY', kind: 'integer', scenarios: STREAMING, min: 1, arg: 'n', help: 'stream: hold this many streams open (closed loop) instead of an arrival rate. sweep: the first step with --sweep-by concurrency.' },
  { key: 'maxConcurrency', flag: '--max-concurrency', env: 'LOAD_MAX_CONCURRENCY', kind: 'integer', scenarios: PACED, min: 1, arg: 'n', help: 'With an arrival rate: at most this many requests in flight (vLLM\'s --max-concurrency); later arrivals wait in the client\'s queue for a slot. Their latency runs from when they leave the queue; the wait is reported as client_queue_ms.' },
  { key: 'rampUp', flag: '--ramp-up', env: 'LOAD_RAMP_UP', kind: 'seconds', scenarios: STREAMING, default: 1, min: 0, arg: 's', help: 'With --concurrency: start the streams evenly over this time, not all at once.' },
  { key: 'model', flag: '--model', env: 'LOAD_MODEL', kind: 'string', scenarios: 'all', arg: 'id', help: 'Model of plain chat requests (default: the first of MODELS, svc-auto).' },
  { key: 'prompt', flag: '--prompt', env: 'LOAD_PROMPT', kind: 'string', scenarios: 'all', default: DEFAULT_PROMPT, arg: 'text', help: 'User message; " (request N)" is appended so no two requests are identical.' },
  { key: 'maxTokens', flag: '--max-tokens', env: 'LOAD_MAX_TOKENS', kind: 'integer', scenarios: 'all', min: 1, max: 1_000_000, arg: 'n', help: 'Send max_tokens.' },
  { key: 'extraBody', flag: '--extra-body', env: 'LOAD_EXTRA_BODY', kind: 'string', scenarios: 'all', arg: 'json|@file', help: 'Request fields merged into every request body of every engine, e.g. \'{"ignore_eos": true, "min_tokens": 64}\' for exact reply lengths on vLLM; @file.json reads them from a file. Fields the harness sets (messages, model, stream, max_tokens) are refused. k6 scripts: EXTRA_BODY.' },
  { key: 'promptTokens', flag: '--prompt-tokens', env: 'LOAD_PROMPT_TOKENS', kind: 'integer', scenarios: WORKLOAD, min: 1, max: 10_000_000, arg: 'n', help: 'Synthetic prompts of this many tokens (the mean with --prompt-tokens-stdev), built and counted with --tokenizer.' },
  { key: 'promptTokensStdev', flag: '--prompt-tokens-stdev', env: 'LOAD_PROMPT_TOKENS_STDEV', kind: 'number', scenarios: WORKLOAD, min: 0, arg: 'n', help: 'Standard deviation of the prompt length (a normal, rounded, clamped to min..max; default 0 = fixed).' },
  { key: 'promptTokensMin', flag: '--prompt-tokens-min', env: 'LOAD_PROMPT_TOKENS_MIN', kind: 'integer', scenarios: WORKLOAD, min: 0, arg: 'n', help: 'Shortest prompt (default mean - 4 stdev, at least 1).' },
  { key: 'promptTokensMax', flag: '--prompt-tokens-max', env: 'LOAD_PROMPT_TOKENS_MAX', kind: 'integer', scenarios: WORKLOAD, min: 0, arg: 'n', help: 'Longest prompt (default mean + 4 stdev).' },
  { key: 'outputTokens', flag: '--output-tokens', env: 'LOAD_OUTPUT_TOKENS', kind: 'integer', scenarios: WORKLOAD, min: 1, max: 1_000_000, arg: 'n', help: 'Reply length asked for with max_tokens (the mean with --output-tokens-stdev); the actual length is reported per request.' },
  { key: 'outputTokensStdev', flag: '--output-tokens-stdev', env: 'LOAD_OUTPUT_TOKENS_STDEV', kind: 'number', scenarios: WORKLOAD, min: 0, arg: 'n', help: 'Standard deviation of the asked reply length (default 0 = fixed).' },
  { key: 'outputTokensMin', flag: '--output-tokens-min', env: 'LOAD_OUTPUT_TOKENS_MIN', kind: 'integer', scenarios: WORKLOAD, min: 0, arg: 'n', help: 'Shortest asked reply (default mean - 4 stdev, at least 1).' },
  { key: 'outputTokensMax', flag: '--output-tokens-max', env: 'LOAD_OUTPUT_TOKENS_MAX', kind: 'integer', scenarios: WORKLOAD, min: 0, arg: 'n', help: 'Longest asked reply (default mean + 4 stdev).' },
  { key: 'data', flag: '--data', env: 'LOAD_DATA', kind: 'string', scenarios: WORKLOAD, arg: 'k=v,...', help: 'The lengths in one value (GuideLLM form): prompt_tokens=256,output_tokens=128, also prompt_tokens_stdev, _min, _max and the same for output_tokens.' },
  { key: 'tokenizer', flag: '--tokenizer', env: 'LOAD_TOKENIZER', kind: 'enum', values: ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base', 'none'], scenarios: WORKLOAD, default: 'o200k_base', help: 'Encoding that builds synthetic prompts and counts tokens the target did not report in usage (gpt-tokenizer); none = count only from usage.' },
  { key: 'dataset', flag: '--dataset', env: 'LOAD_DATASET', kind: 'string', scenarios: WORKLOAD, arg: 'file', help: 'Prompts from a file: OpenAI chat {"messages": [...]}, ShareGPT {"conversations": [...]} or {"prompt": ..., "output_tokens": n} records, one per line (JSONL) or in one JSON array (vLLM\'s ShareGPT download), or .txt (one prompt per line); records are used in order, round and round.' },
  { key: 'datasetFormat', flag: '--dataset-format', env: 'LOAD_DATASET_FORMAT', kind: 'enum', values: ['auto', 'openai', 'sharegpt', 'prompts', 'text'], scenarios: WORKLOAD, default: 'auto', help: 'Format of --dataset records (auto: by each record\'s fields, .txt as text); JSONL or a JSON array is told by the file\'s first character.' },
  { key: 'multiTurn', flag: '--multi-turn', env: 'LOAD_MULTI_TURN', kind: 'bool', scenarios: WORKLOAD, default: false, help: 'Dataset: send every user turn of a conversation, each carrying the conversation so far with the replies the target gave (default: the first turn only).' },
  { key: 'turns', flag: '--turns', env: 'LOAD_TURNS', kind: 'integer', scenarios: WORKLOAD, default: 1, min: 1, max: 1000, arg: 'n', help: 'Synthetic prompts: turns per session; each turn adds a new prompt to the conversation so far (with the target\'s replies).' },
  { key: 'sharedPrefixTokens', flag: '--shared-prefix-tokens', env: 'LOAD_SHARED_PREFIX_TOKENS', kind: 'integer', scenarios: WORKLOAD, default: 0, min: 0, max: 10_000_000, arg: 'n', help: 'A system prompt of this many tokens, the same in every request (what prefix caching serves).' },
  { key: 'unique', flag: '--unique', env: 'LOAD_UNIQUE', kind: 'bool', scenarios: WORKLOAD, default: true, help: 'Make every request\'s text its own (a request number, or its own synthetic words) so no response cache serves it; --no-unique repeats the same text for the same length.' },
  { key: 'cancelShare', flag: '--cancel-share', env: 'LOAD_CANCEL_SHARE', kind: 'share', scenarios: STREAMING, default: 0, arg: '0-1', help: 'Share of streams the client cancels (AIPerf\'s request cancellation), spread evenly; counted apart from failures (counts.cancelled). When: --cancel-after.' },
  { key: 'cancelAfter', flag: '--cancel-after', env: 'LOAD_CANCEL_AFTER', kind: 'string', scenarios: STREAMING, default: 'first-token', arg: 'first-token|ms', help: 'With --cancel-share: cancel a stream after its first token (default) or this many ms after sending it.' },
  { key: 'canaries', flag: '--canaries', env: 'LOAD_CANARIES', kind: 'bool', scenarios: WORKLOAD, default: true, help: 'With unique text: the request number carries a canary ("code CG...") so a reply carrying another request\'s shows cross-talk (SVC-9); --no-canaries sends the request number alone.' },
  { key: 'saveGaps', flag: '--save-gaps', env: 'LOAD_SAVE_GAPS', kind: 'bool', scenarios: WORKLOAD, default: false, help: 'requests.jsonl: every inter-token gap of each stream, not only its summary.' },
  { key: 'brainShare', flag: '--brain-share', env: 'LOAD_BRAIN_SHARE', kind: 'share', scenarios: SENDERS, default: 0, arg: '0-1', help: 'Share of requests that invoke the brain (BRAIN_ID), half through model "brain:<id>", half through POST /brains/{id}/chat.' },
  { key: 'sampleEvery', flag: '--sample-every', env: 'LOAD_SAMPLE_EVERY', kind: 'integer', scenarios: SENDERS, min: 1, arg: 'n', help: 'Check every Nth success body (and every chunk of every Nth stream) against the schemas; the first 20 are always checked. 1 = all. Default 20; 100 for throughput, where a check costs more than the request.' },
  { key: 'seed', flag: '--seed', env: 'LOAD_SEED', kind: 'integer', scenarios: PACED, default: 1, min: 0, arg: 'n', help: 'Seed of the Poisson and gamma arrivals and of the workload (lengths, synthetic words): same seed, same run.' },
  { key: 'coCorrection', flag: '--co-correction', env: 'LOAD_CO_CORRECTION', kind: 'bool', scenarios: ['throughput'], default: true, help: 'With --rate-engine autocannon: correct its latencies for coordinated omission (HdrHistogram expected-interval correction); --no-co-correction shows them raw.' },
  { key: 'warmup', flag: '--warmup', env: 'LOAD_WARMUP', kind: 'integer', scenarios: 'all', default: 5, min: 0, max: 1000, arg: 'n', help: 'Requests sent (5 at a time) and discarded before the measured run, drawn from the run\'s workload (its lengths and shared prefix, texts of their own); a target that answers none of them stops the run (exit 2).' },
  { key: 'timeoutMs', flag: '--timeout-ms', env: 'TIMEOUT_MS', kind: 'integer', scenarios: 'all', min: 100, max: 3_600_000, arg: 'ms', help: 'Limit for one request including its whole body or stream (default TIMEOUT_MS, 30000).' },

  // --- reports and baselines --------------------------------------------------------
  { key: 'baseline', flag: '--baseline', env: 'LOAD_BASELINE', kind: 'string', scenarios: 'all', arg: 'summary.json', help: 'Compare with an earlier summary.json metric by metric; exit 1 on a regression.' },
  { key: 'thresholds', flag: '--threshold', env: 'LOAD_THRESHOLDS', kind: 'list', scenarios: 'all', default: [], arg: 'metric=limit', help: 'Override a regression threshold: ttft_p95_ms=10% (relative) or ttft_p95_ms=25 (absolute, metric units); or an absolute limit, k6-style, that fails the run (exit 1): ttft_p95_ms<500, output_tokens_per_s>100, error_share<0.01. Repeatable; the variable takes a comma list.' },
  { key: 'requireLikeForLike', flag: '--require-like-for-like', env: 'LOAD_REQUIRE_LIKE_FOR_LIKE', kind: 'bool', scenarios: 'all', default: false, help: 'With --baseline: exit 1 when the two runs differ in settings (workload, options, reference model).' },
  { key: 'out', flag: '--out', env: 'LOAD_OUT', kind: 'string', scenarios: 'all', arg: 'dir', help: 'Report directory (default $REPORTS_DIR/load/<timestamp>, REPORTS_DIR defaulting to reports).' },
  { key: 'quiet', flag: '--quiet', env: 'LOAD_QUIET', kind: 'bool', scenarios: 'all', default: false, help: 'No live progress line.' },

  // --- safety -----------------------------------------------------------------------
  { key: 'allowRemote', flag: '--allow-remote', env: 'LOAD_ALLOW_REMOTE', kind: 'bool', scenarios: 'all', default: false, help: 'Allow a TARGET_URL that is not loopback (the plan is printed first).' },
  { key: 'dryRun', flag: '--dry-run', env: 'LOAD_DRY_RUN', kind: 'bool', scenarios: 'all', default: false, help: 'Print the plan (target, rate x duration, request count) and exit without sending.' },
  { key: 'drain', flag: '--drain', env: 'LOAD_DRAIN', kind: 'seconds', scenarios: 'all', default: 2, min: 0, max: 60, arg: 's', help: 'On Ctrl-C, wait this long for requests in flight before writing the partial report.' },
  { key: 'capDuration', flag: '--cap-duration', env: 'LOAD_CAP_DURATION', kind: 'seconds', scenarios: 'all', default: 300, min: 1, max: 86_400, arg: 's', help: 'Hard cap on the planned run time; raise it explicitly to plan longer runs.' },
  { key: 'capRate', flag: '--cap-rate', env: 'LOAD_CAP_RATE', kind: 'number', scenarios: 'all', default: 1000, min: 0.01, max: 1_000_000, arg: 'req/s', help: 'Hard cap on any planned request rate.' },
  { key: 'capConcurrency', flag: '--cap-concurrency', env: 'LOAD_CAP_CONCURRENCY', kind: 'integer', scenarios: 'all', default: 5000, min: 1, max: 100_000, arg: 'n', help: 'Hard cap on connections / concurrent streams; open-loop arrivals beyond it are not sent and counted as not_sent.' },

  // --- sweep ------------------------------------------------------------------------
  { key: 'sweepBy', flag: '--sweep-by', env: 'LOAD_SWEEP_BY', kind: 'enum', values: ['rate', 'concurrency'], scenarios: ['sweep'], default: 'rate', help: 'Raise the open-loop arrival rate or the number of concurrent streams.' },
  { key: 'sweepStart', flag: '--sweep-start', env: 'LOAD_SWEEP_START', kind: 'number', scenarios: ['sweep'], default: 10, min: 0.01, arg: 'n', help: 'First step (req/s, or streams with --sweep-by concurrency).' },
  { key: 'sweepFactor', flag: '--sweep-factor', env: 'LOAD_SWEEP_FACTOR', kind: 'number', scenarios: ['sweep'], default: 2, min: 1.01, max: 100, arg: 'x', help: 'Each step multiplies the previous one by this.' },
  { key: 'sweepStep', flag: '--sweep-step', env: 'LOAD_SWEEP_STEP', kind: 'number', scenarios: ['sweep'], min: 0.01, arg: 'n', help: 'Add this much per step instead of multiplying.' },
  { key: 'sweepMax', flag: '--sweep-max', env: 'LOAD_SWEEP_MAX', kind: 'number', scenarios: ['sweep'], min: 0.01, arg: 'n', help: 'Highest step (default: the rate or concurrency cap).' },
  { key: 'sweepSteps', flag: '--sweep-steps', env: 'LOAD_SWEEP_STEPS', kind: 'integer', scenarios: ['sweep'], default: 8, min: 1, max: 100, arg: 'n', help: 'Most steps.' },
  { key: 'stepDuration', flag: '--step-duration', env: 'LOAD_STEP_DURATION', kind: 'seconds', scenarios: ['sweep'], default: 4, min: 0.2, arg: 's', help: 'Length of one sweep step.' },
  { key: 'sloTtftP95Ms', flag: '--slo-ttft-p95-ms', env: 'LOAD_SLO_TTFT_P95_MS', kind: 'number', scenarios: ['stream', 'sweep'], default: 1000, min: 1, arg: 'ms', help: 'SLO: p95 time to first token; per request, a TTFT above it is not goodput. stream: when given, a run whose p95 is above it exits 1.' },
  { key: 'sloItlP95Ms', flag: '--slo-itl-p95-ms', env: 'LOAD_SLO_ITL_P95_MS', kind: 'number', scenarios: ['stream', 'sweep'], min: 1, arg: 'ms', help: 'SLO: p95 inter-token latency (per request: its own p95 gap).' },
  { key: 'sloE2eP95Ms', flag: '--slo-e2e-p95-ms', env: 'LOAD_SLO_E2E_P95_MS', kind: 'number', scenarios: PACED, min: 1, arg: 'ms', help: 'SLO: p95 end-to-end stream time (throughput: request latency p95); a run above it exits 1.' },
  { key: 'sloErrorShare', flag: '--slo-error-share', env: 'LOAD_SLO_ERROR_SHARE', kind: 'share', scenarios: PACED, default: 0.01, arg: '0-1', help: 'SLO: most failed requests (any non-2xx or error, 429/503 included) per sweep step, or per time slice of a stream run (--slice); throughput, stream: when given, a run above it exits 1.' },
  { key: 'stepMinRequests', flag: '--step-min-requests', env: 'LOAD_STEP_MIN_REQUESTS', kind: 'integer', scenarios: ['sweep'], default: 40, min: 1, max: 1_000_000, arg: 'n', help: 'Rate sweep: a step lasts long enough to send this many requests after its settle time, so its p95 rests on enough answers.' },
  { key: 'expectCapacity', flag: '--expect-capacity', env: 'LOAD_EXPECT_CAPACITY', kind: 'number', scenarios: ['sweep'], min: 0.01, arg: 'n', help: 'Capacity floor: exit 1 when the highest rate (or concurrency) meeting the SLO is below it.' },

  // --- rate-limit -------------------------------------------------------------------
  { key: 'rampStart', flag: '--ramp-start', env: 'LOAD_RAMP_START', kind: 'number', scenarios: ['rate-limit'], default: 2, min: 0.1, arg: 'req/s', help: 'First rate of the ramp on the throttled key.' },
  { key: 'rampFactor', flag: '--ramp-factor', env: 'LOAD_RAMP_FACTOR', kind: 'number', scenarios: ['rate-limit'], default: 1.5, min: 1.01, max: 10, arg: 'x', help: 'Each ramp step multiplies the rate by this.' },
  { key: 'rampStepDuration', flag: '--ramp-step-duration', env: 'LOAD_RAMP_STEP_DURATION', kind: 'seconds', scenarios: ['rate-limit'], default: 2, min: 0.2, arg: 's', help: 'Length of one ramp step.' },
  { key: 'rampMax', flag: '--ramp-max', env: 'LOAD_RAMP_MAX', kind: 'number', scenarios: ['rate-limit'], default: 200, min: 0.1, arg: 'req/s', help: 'Give up (inconclusive) when no 429 appeared up to this rate.' },
  { key: 'burstDuration', flag: '--burst-duration', env: 'LOAD_BURST_DURATION', kind: 'seconds', scenarios: ['rate-limit'], default: 3, min: 0.2, arg: 's', help: 'After the first 429: hold twice that rate this long to measure the shedding.' },
  { key: 'bystanderRate', flag: '--bystander-rate', env: 'LOAD_BYSTANDER_RATE', kind: 'number', scenarios: ['rate-limit'], default: 2, min: 0, arg: 'req/s', help: 'Rate of the second key during the run (0 = skip the isolation check).' },
  { key: 'recoveryMax', flag: '--recovery-max', env: 'LOAD_RECOVERY_MAX', kind: 'seconds', scenarios: ['rate-limit'], default: 65, min: 0.5, max: 600, arg: 's', help: 'Longest wait for the throttled key to be served again after the burst (LIM-3 allows 60 s).' },

  // --- embedded reference server (no TARGET_URL) --------------------------------------
  { key: 'refTtftMs', flag: '--ref-ttft-ms', env: 'LOAD_REF_TTFT_MS', kind: 'integer', scenarios: 'all', default: 150, min: 0, max: 600_000, arg: 'ms', embeddedOnly: true, help: 'Reference: delay before the first SSE chunk (the role chunk; the first content follows one --ref-itl-ms later).' },
  { key: 'refItlMs', flag: '--ref-itl-ms', env: 'LOAD_REF_ITL_MS', kind: 'integer', scenarios: 'all', default: 25, min: 0, max: 60_000, arg: 'ms', embeddedOnly: true, help: 'Reference: delay between SSE chunks.' },
  { key: 'refJsonMs', flag: '--ref-json-ms', env: 'LOAD_REF_JSON_MS', kind: 'integer', scenarios: 'all', default: 20, min: 0, max: 600_000, arg: 'ms', embeddedOnly: true, help: 'Reference: delay before a non-stream reply.' },
  { key: 'refReplyWords', flag: '--ref-reply-words', env: 'LOAD_REF_REPLY_WORDS', kind: 'integer', scenarios: 'all', default: 32, min: 1, max: 100_000, arg: 'n', embeddedOnly: true, help: 'Reference: words (= tokens) per reply.' },
  { key: 'refStallEvery', flag: '--ref-stall-every', env: 'LOAD_REF_STALL_EVERY', kind: 'integer', scenarios: 'all', default: 0, min: 0, arg: 'n', embeddedOnly: true, help: 'Reference: every Nth stream stalls once mid-stream (0 = never).' },
  { key: 'refStallMs', flag: '--ref-stall-ms', env: 'LOAD_REF_STALL_MS', kind: 'integer', scenarios: 'all', default: 0, min: 0, max: 600_000, arg: 'ms', embeddedOnly: true, help: 'Reference: length of that stall.' },
  { key: 'refOverloadInFlight', flag: '--ref-overload-in-flight', env: 'LOAD_REF_OVERLOAD_IN_FLIGHT', kind: 'integer', scenarios: 'all', min: 1, arg: 'n', embeddedOnly: true, help: 'Reference: answer 503 above this many requests in flight (reference default 512).' },
  { key: 'refRateLimit', flag: '--ref-rate-limit', env: 'LOAD_REF_RATE_LIMIT', kind: 'integer', scenarios: 'all', default: 10, min: 1, arg: 'req/s', embeddedOnly: true, help: 'Reference: requests per second of RATE_LIMIT_API_KEY (the throttled key of rate-limit).' },
  { key: 'refMainLimit', flag: '--ref-main-limit', env: 'LOAD_REF_MAIN_LIMIT', kind: 'integer', scenarios: 'all', default: 2000, min: 1, arg: 'req/s', embeddedOnly: true, help: 'Reference: requests per second of API_KEY and LIMITED_API_KEY.' },
  { key: 'refDefect', flag: '--ref-defect', env: 'REFERENCE_DEFECT', kind: 'string', scenarios: 'all', arg: 'name', embeddedOnly: true, help: 'Reference: switch on one defect (npm run reference -- --list), e.g. overload-500.' },
  { key: 'refVariants', flag: '--ref-variant', env: 'REFERENCE_VARIANTS', kind: 'list', scenarios: 'all', default: [], arg: 'name', embeddedOnly: true, help: 'Reference: legal variants (repeatable; the variable takes a comma list).' },

  // --- the sweep's search for the limit; the reference's engine model (docs/REHEARSAL.md)
  { key: 'sloTpotP95Ms', flag: '--slo-tpot-p95-ms', env: 'LOAD_SLO_TPOT_P95_MS', kind: 'number', scenarios: ['sweep'], min: 0.01, arg: 'ms', help: 'SLO: p95 time per output token after the first (per request: its own; needs usage from the target).' },
  { key: 'sweepTolerance', flag: '--sweep-tolerance', env: 'LOAD_SWEEP_TOLERANCE', kind: 'share', scenarios: ['sweep'], default: 0.05, arg: '0-1', help: 'After the first broken step, bisect between the last step that met the SLO and it until they are this close (share of the lower one).' },
  { key: 'sweepRefineSteps', flag: '--sweep-refine-steps', env: 'LOAD_SWEEP_REFINE_STEPS', kind: 'integer', scenarios: ['sweep'], default: 6, min: 0, max: 50, arg: 'n', help: 'Most extra steps after the first broken one (bisection, and re-runs of steps the driver itself fell behind in); 0 = no bisection.' },
  { key: 'sweepMaxDriverLagMs', flag: '--sweep-max-driver-lag-ms', env: 'LOAD_SWEEP_MAX_DRIVER_LAG_MS', kind: 'number', scenarios: ['sweep'], default: 50, min: 1, arg: 'ms', help: 'A step whose schedule lag p99 or event-loop delay p99 exceeds this is invalid: the driver, not the target, fell behind. It is re-run once, then reported as invalid and ends the sweep.' },
  { key: 'refEngine', flag: '--ref-engine', env: 'LOAD_REF_ENGINE', kind: 'bool', scenarios: 'all', default: false, embeddedOnly: true, help: 'Reference: time replies with a model of an inference server of known capacity (continuous batching, prefill rate, decode steps; usage in o200k_base tokens) instead of --ref-ttft-ms/--ref-itl-ms/--ref-json-ms.' },
  { key: 'refMaxBatch', flag: '--ref-max-batch', env: 'LOAD_REF_MAX_BATCH', kind: 'integer', scenarios: 'all', default: 64, min: 1, max: 100_000, arg: 'n', embeddedOnly: true, help: 'Reference engine model: sequences holding a slot at once (later ones queue).' },
  { key: 'refPrefillTps', flag: '--ref-prefill-tps', env: 'LOAD_REF_PREFILL_TPS', kind: 'number', scenarios: 'all', default: 10_000, min: 1, arg: 'tokens/s', embeddedOnly: true, help: 'Reference engine model: prompt tokens prefilled per second, one prompt at a time (TTFT = queue + prompt / this).' },
  { key: 'refDecodeStepMs', flag: '--ref-decode-step-ms', env: 'LOAD_REF_DECODE_STEP_MS', kind: 'number', scenarios: 'all', default: 12, min: 0, max: 60_000, arg: 'ms', embeddedOnly: true, help: 'Reference engine model: one decode step (one token for every sequence in the batch) with one sequence.' },
  { key: 'refDecodeStepPerSeqMs', flag: '--ref-decode-step-per-seq-ms', env: 'LOAD_REF_DECODE_STEP_PER_SEQ_MS', kind: 'number', scenarios: 'all', default: 0.25, min: 0, max: 60_000, arg: 'ms', embeddedOnly: true, help: 'Reference engine model: added to a decode step per sequence in the batch.' },

  // --- rehearsing a change under load (docs/LOAD.md, "Rehearsing a change") ------------------
  { key: 'phases', flag: '--phases', env: 'LOAD_PHASES', kind: 'string', scenarios: ['stream'], arg: 'plan', help: 'Arrival rate in phases instead of --rate/--duration: "ramp 30s to 70%, hold 300s" (ramp <duration> to <rate>, hold <duration> [at <rate>]; a rate in req/s or a share of --capacity), or @file with one phase a line.' },
  { key: 'capacity', flag: '--capacity', env: 'LOAD_CAPACITY', kind: 'string', scenarios: ['stream'], arg: 'req/s|summary.json', help: 'What a % in --phases is a share of: a rate, or a sweep\'s summary.json (its max_rate_meeting_slo_rps).' },
  { key: 'at', flag: '--at', env: 'LOAD_AT', kind: 'string', scenarios: ['stream'], arg: 'time|phase:N', help: 'When the change happens: seconds from the start (120s, 2m) or the start of phase N (phase:2). With --run the command starts then; without it, a mark.' },
  { key: 'run', flag: '--run', env: 'LOAD_RUN', kind: 'string', scenarios: ['stream'], arg: 'command', help: 'The change: a shell command started at --at (default the middle of the run); its exit status and output (secrets masked) go into the report. The run goes on through it. CHATGATE_REF_CONTROL holds the embedded reference\'s control address.' },
  { key: 'markStdin', flag: '--mark-stdin', env: 'LOAD_MARK_STDIN', kind: 'bool', scenarios: ['stream'], default: false, help: 'Every line typed on stdin marks a change made by hand (its text the label); SIGUSR2 marks one too, always.' },
  { key: 'slice', flag: '--slice', env: 'LOAD_SLICE', kind: 'seconds', scenarios: ['stream'], min: 0.1, max: 3600, arg: 's', help: 'Report every figure per time slice of this length (summary.json, slices.csv, charts), and judge each slice against the SLOs. Default 5 s with --phases, --at or --run.' },
  { key: 'recoverSlices', flag: '--recover-slices', env: 'LOAD_RECOVER_SLICES', kind: 'integer', scenarios: ['stream'], default: 3, min: 1, max: 1000, arg: 'n', help: 'Recovered = this many consecutive slices within the SLOs again; time to recover runs from the change to the first of them.' },
];

const BY_FLAG = new Map(OPTION_SPECS.map((s) => [s.flag, s]));

export interface ParsedArgs {
  scenario: Scenario;
  options: LoadOptions;
  /** Options given as flags or variables (not defaults): embedded-only checks and the plan need them. */
  given: Set<keyof LoadOptions>;
  help: boolean;
  /** `<scenario> --help`: help for that scenario only. */
  helpFor?: Scenario;
}

export function parseArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): ParsedArgs {
  const flagValues = new Map<OptionSpec, string[]>();
  let scenario: string | undefined;
  let help = false;
  // node:util's parser splits the command line (--flag value, --flag=value, --no-flag);
  // non-strict, so that each mistake gets this tool's own one-line message below.
  const { tokens } = parseCommandLine({
    args: argv, strict: false, allowPositionals: true, allowNegative: true, tokens: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      ...Object.fromEntries(OPTION_SPECS.map((s) => [s.flag.slice(2), { type: s.kind === 'bool' ? 'boolean' as const : 'string' as const, multiple: true }])),
    },
  });
  for (const token of tokens) {
    if (token.kind === 'option-terminator') continue;
    if (token.kind === 'positional') {
      if (scenario !== undefined) throw new UsageError(`unexpected argument "${token.value}" (the scenario is already ${scenario})`);
      scenario = token.value;
      continue;
    }
    if (token.name === 'help') { help = true; continue; }
    if (token.inlineValue && token.rawName.startsWith('--no-') && BY_FLAG.get(`--${token.rawName.slice(5)}`)?.kind === 'bool') {
      throw new UsageError(`${token.rawName}=${token.value}: --no-... takes no value`);
    }
    const spec = BY_FLAG.get(`--${token.name}`);
    const negated = token.rawName !== `--${token.name}` && token.rawName.startsWith('--no-') && spec?.kind === 'bool';
    if (!spec || (token.rawName !== spec.flag && !negated)) throw new UsageError(`unknown option "${token.rawName}" (npm run load -- --help lists them)`);
    let value: string;
    if (spec.kind === 'bool') {
      value = negated ? 'false' : token.value ?? 'true';
    } else {
      if (token.value === undefined || (!token.inlineValue && token.value.startsWith('--') && token.value.length > 2)) throw new UsageError(`${spec.flag} needs a value (${spec.arg ?? 'value'})`);
      value = token.value;
    }
    flagValues.set(spec, [...(flagValues.get(spec) ?? []), value]);
  }
  const helpFor = help && scenario !== undefined && (SCENARIOS as readonly string[]).includes(scenario) ? scenario as Scenario : undefined;
  if (help && scenario === undefined) scenario = 'stream';
  if (scenario === undefined) throw new UsageError(`name a scenario: ${SCENARIOS.join(', ')} (npm run load -- --help)`);
  if (!(SCENARIOS as readonly string[]).includes(scenario)) {
    throw new UsageError(`unknown scenario "${scenario}"; use one of ${SCENARIOS.join(', ')}`);
  }
  const sc = scenario as Scenario;

  const options: Record<string, unknown> = {};
  const given = new Set<keyof LoadOptions>();
  for (const spec of OPTION_SPECS) {
    const applies = spec.scenarios === 'all' || spec.scenarios.includes(sc);
    const fromFlags = flagValues.get(spec);
    if (fromFlags && !applies) {
      throw new UsageError(`${spec.flag} does not apply to the ${sc} scenario (it is for ${(spec.scenarios as readonly string[]).join(', ')})`);
    }
    let value: unknown = spec.default;
    const raw = env[spec.env];
    if (fromFlags) {
      value = spec.kind === 'list'
        ? fromFlags.flatMap((v) => convert(spec, v, spec.flag) as string[])
        : convert(spec, fromFlags[fromFlags.length - 1]!, spec.flag);
      given.add(spec.key);
    } else if (applies && raw !== undefined && raw.trim() !== '') {
      value = convert(spec, raw.trim(), spec.env);
      given.add(spec.key);
    }
    if (Array.isArray(value)) value = [...value];
    options[spec.key] = value;
  }
  options.slosGiven = ['sloTtftP95Ms', 'sloItlP95Ms', 'sloE2eP95Ms', 'sloTpotP95Ms', 'sloErrorShare'].filter((k) => given.has(k as keyof LoadOptions));
  // Defaults that depend on the scenario.
  options.sampleEvery ??= sc === 'throughput' ? 100 : 20;
  // Arrivals named by their own options: --trace replays, --burstiness shapes gamma gaps.
  if (given.has('trace')) {
    if (given.has('arrival') && options.arrival !== 'trace') throw new UsageError(`--trace replays the trace's own arrival times; drop --arrival ${String(options.arrival)} (or give --arrival trace)`);
    options.arrival = 'trace';
  } else if (options.arrival === 'trace') throw new UsageError('--arrival trace needs the trace: add --trace <file> (stream only)');
  if (typeof options.extraBody === 'string') options.extraBody = JSON.stringify(extraBodyFrom(options.extraBody, flagValues.has(BY_FLAG.get('--extra-body')!) ? '--extra-body' : 'LOAD_EXTRA_BODY'));
  if (given.has('burstiness')) {
    if (given.has('arrival') && options.arrival !== 'gamma') throw new UsageError(`--burstiness shapes gamma arrivals; drop --arrival ${String(options.arrival)} or give --arrival gamma`);
    options.arrival = 'gamma';
  }
  const after = options.cancelAfter as string | undefined;
  if (after !== undefined && after !== 'first-token' && !(Number.isFinite(Number(after)) && Number(after) >= 0 && after.trim() !== '')) {
    throw new UsageError(`--cancel-after ${after}: give first-token or a number of ms >= 0`);
  }
  return { scenario: sc, options: options as unknown as LoadOptions, given, help, ...(helpFor ? { helpFor } : {}) };
}

/** The extra body's object: the JSON text itself, or @file's. */
function extraBodyFrom(raw: string, source: string): Record<string, unknown> {
  let text = raw;
  if (raw.startsWith('@')) {
    try {
      text = readFileSync(raw.slice(1), 'utf8');
    } catch (e) {
      throw new UsageError(`${source}: cannot read ${raw.slice(1)} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); give @<existing file> or the JSON itself`);
    }
  }
  try {
    return parseExtraBody(text, raw.startsWith('@') ? `${source} ${raw}` : source);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

function convert(spec: OptionSpec, raw: string, source: string): unknown {
  const bad = (what: string): never => { throw new UsageError(`${source}: "${raw}" ${what}`); };
  const bounded = (n: number): number => {
    if (spec.min !== undefined && n < spec.min) bad(`is below the minimum ${spec.min}`);
    if (spec.max !== undefined && n > spec.max) bad(`is above the maximum ${spec.max}`);
    return n;
  };
  switch (spec.kind) {
    case 'seconds': {
      const s = parseSeconds(raw);
      if (s === undefined) bad('is not a duration; give seconds (10), or 500ms, 10s, 2m');
      return bounded(s!);
    }
    case 'number': {
      const n = Number(raw);
      if (!/^\d*\.?\d+$/.test(raw) || !Number.isFinite(n)) bad('is not a positive number');
      return bounded(n);
    }
    case 'integer': {
      if (!/^\d+$/.test(raw)) bad('is not a whole number');
      return bounded(Number(raw));
    }
    case 'share': {
      const n = Number(raw);
      if (!/^\d*\.?\d+$/.test(raw) || n > 1) bad('is not a share between 0 and 1 (e.g. 0.2)');
      return n;
    }
    case 'bool': {
      const v = raw.toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(v)) return true;
      if (['0', 'false', 'no', 'off'].includes(v)) return false;
      return bad('is not a boolean; use 1 or 0');
    }
    case 'enum':
      if (!spec.values!.includes(raw)) bad(`is not one of ${spec.values!.join(', ')}`);
      return raw;
    case 'list':
      return raw.split(',').map((s) => s.trim()).filter(Boolean);
    case 'string':
      return raw;
  }
}

/** "10" and "10s" are seconds; "500ms", "2m", "1h" too. */
/** Sending time of throughput and stream: --duration, else 10 s, else (with --requests only) up to the cap. */
export function runSeconds(o: LoadOptions): number {
  return o.duration ?? (o.requests !== undefined ? o.capDuration : 10);
}

export function parseSeconds(raw: string): number | undefined {
  const m = /^(\d*\.?\d+)(ms|s|m|h)?$/.exec(raw.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  return unit === 'ms' ? n / 1000 : unit === 'm' ? n * 60 : unit === 'h' ? n * 3600 : n;
}

type HelpGroup = 'all' | 'workload' | 'pacing' | Scenario | 'reference';

const GROUPS: Array<{ id: HelpGroup; title: string; example: string }> = [
  { id: 'all', title: 'Every scenario', example: 'npm run load -- stream --duration 30 --out reports/load/today --baseline reports/load/last/summary.json' },
  { id: 'pacing', title: 'Sending: how long, how fast (throughput, stream, sweep)', example: 'npm run load -- stream --rate 20 --arrival gamma --burstiness 0.5 --max-concurrency 32' },
  { id: 'workload', title: 'Workload: what each request says (throughput --rate, stream, sweep)', example: 'npm run load -- stream --prompt-tokens 1024 --output-tokens 256 --shared-prefix-tokens 512 --rate 5' },
  { id: 'throughput', title: 'throughput', example: 'npm run load -- throughput --rate 200 --connections 20 --duration 30' },
  { id: 'stream', title: 'stream', example: 'npm run load -- stream --rate 10 --duration 60 --slo-ttft-p95-ms 500' },
  { id: 'sweep', title: 'sweep', example: 'npm run load -- sweep --sweep-start 2 --slo-ttft-p95-ms 500' },
  { id: 'rate-limit', title: 'rate-limit', example: 'npm run load -- rate-limit --ramp-start 2 --bystander-rate 2' },
  { id: 'reference', title: 'Embedded reference server (no TARGET_URL)', example: 'npm run load -- sweep --ref-engine --prompt-tokens 1000 --output-tokens 64 --sweep-start 2' },
];

const WORKLOAD_SPECS = new Set<keyof LoadOptions>(['promptTokens', 'promptTokensStdev', 'promptTokensMin', 'promptTokensMax', 'outputTokens', 'outputTokensStdev', 'outputTokensMin', 'outputTokensMax', 'data', 'tokenizer', 'dataset', 'datasetFormat', 'multiTurn', 'turns', 'sharedPrefixTokens', 'unique', 'saveGaps']);

function groupOf(s: OptionSpec): HelpGroup {
  if (s.embeddedOnly) return 'reference';
  if (s.scenarios === 'all') return 'all';
  if (WORKLOAD_SPECS.has(s.key)) return 'workload';
  if (s.scenarios.length === 1) return s.scenarios[0]!;
  return 'pacing';
}

/** --help: every option, grouped by scenario with an example each; `<scenario> --help`: only what that scenario takes. */
export function helpText(only?: Scenario): string {
  const lines = only ? [
    `Usage: npm run load -- ${only} [options]      (options also from the environment; npm run load -- --help lists every scenario)`,
  ] : [
    'Usage: npm run load -- <scenario> [options]      (options also from the environment)',
    '       npm run load -- <scenario> --help         (only the options of that scenario)',
    '',
    'Scenarios:',
    '  throughput   non-streaming chat completions, autocannon at full speed or a fixed rate (open loop): req/s, latency percentiles, status codes',
    '  stream       streaming chat completions: TTFT, inter-token latency, E2E, input/output tokens/s, goodput',
    '  sweep        raise the stream rate (or concurrency) step by step until the SLO breaks, then bisect to the limit; goodput, the SLO that bound it, the curve',
    '  rate-limit   ramp one key until 429s; shedding, error bodies, Retry-After, recovery, a second key',
    '  merge        one summary.json + report.html from many runners\' summaries (k6 runners or runs of this tool): npm run load -- merge --help',
  ];
  lines.push('',
    'Target: TARGET_URL, API_KEY, RATE_LIMIT_API_KEY, LIMITED_API_KEY, BRAIN_ID, MODELS, TIMEOUT_MS as for npm test;',
    'without TARGET_URL the embedded reference server is started (with latency injection). docs/LOAD.md has the details.');
  for (const g of GROUPS) {
    if (only && g.id !== only && ['throughput', 'stream', 'sweep', 'rate-limit'].includes(g.id)) continue;
    const specs = OPTION_SPECS.filter((s) => groupOf(s) === g.id && (!only || s.scenarios === 'all' || s.scenarios.includes(only)));
    if (specs.length === 0) continue;
    lines.push('', `${g.title}:`, `  e.g. ${only ? g.example.replace(/^npm run load -- \S+/, `npm run load -- ${only}`) : g.example}`);
    for (const s of specs) {
      const flag = s.kind === 'bool' ? s.flag : `${s.flag} <${s.arg ?? s.values?.join('|') ?? 'value'}>`;
      const def = s.default === undefined || (Array.isArray(s.default) && s.default.length === 0) ? '' : ` (default ${String(s.default)})`;
      const where = only || s.scenarios === 'all' || g.id === s.scenarios[0] && s.scenarios.length === 1 ? '' : ` [${s.scenarios.join(', ')}]`;
      lines.push(`  ${flag.padEnd(34)} ${s.env}${def}${where}`);
      lines.push(`  ${''.padEnd(34)} ${s.help}`);
    }
  }
  lines.push('', 'Exit codes: 0 ok; 1 regression against --baseline, a broken SLO or --threshold limit, a sweep below --expect-capacity,',
    'a MUST-level finding (wrong bodies, 5xx other than 503, 429/503 without an error body, dropped connections), or settings that',
    'differ with --require-like-for-like; 2 bad option or configuration; 130 interrupted (partial report written).');
  return lines.join('\n');
}
