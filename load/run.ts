// `npm run load`: options and configuration (exit 2 on a bad one, before anything is
// sent), safety checks and the plan, the target (TARGET_URL or the embedded reference
// in a child process), the scenario under a stop token that Ctrl-C fires, then the
// reports, the baseline comparison and the exit code.
import { join, resolve } from 'node:path';
import type { Pool } from 'undici';
import { ConfigError, loadConfig, type Config } from '../lib/run/config.ts';
import { registerSecrets } from '../lib/http/extra-headers.ts';
import { oneLineWarnings } from '../lib/http/header-lines.ts';
import { redact } from '../lib/run/redact.ts';
import { validate } from '../lib/spec/schema-validator.ts';
import { DEFECTS } from '../reference/defects.ts';
import { VARIANTS } from '../reference/variants.ts';
import { helpText, parseArgs, UsageError, OPTION_SPECS, type LoadOptions, type Scenario } from './setup/options.ts';
import { checkCaps, checkRemote, isLoopbackHost, planFor } from './setup/safety.ts';
import { embeddedTarget, referenceOptionsFor, remoteTarget, type LoadTarget } from './setup/load-target.ts';
import { StopToken } from './setup/stop.ts';
import { Progress } from './report/progress.ts';
import { Findings, findingsFail } from './report/findings.ts';
import { CpuMeter } from './engine/driver-cpu.ts';
import { createPool } from './engine/load-driver.ts';
import { buildSummary, writeSummary, type LoadSummary } from './report/summary.ts';
import { writeHtmlReport } from './report/report-html.ts';
import { compareMetrics, formatComparison, loadBaseline, parseThresholds, type BaselineFile, type Threshold } from './report/baseline.ts';
import type { MetricName } from './report/metric-names.ts';
import { evaluateGates, parseLimits } from './report/gates.ts';
import type { ScenarioContext, ScenarioResult } from './scenarios/context.ts';
import { runThroughput } from './scenarios/throughput.ts';
import { runStream, traceSpanS } from './scenarios/stream.ts';
import { runRehearsal } from './scenarios/rehearsal.ts';
import { isRehearsal } from './setup/phases.ts';
import { runSweep } from './scenarios/sweep.ts';
import { runRateLimit } from './scenarios/rate-limit.ts';
import { renderConsoleSummary } from './report/console.ts';
import { rehearsalVerdict } from './report/rehearsal-html.ts';
import { warmUp } from './setup/warmup.ts';
import { preflight } from '../lib/http/preflight.ts';
import { mergeMain } from './report/merge.ts';
import { prepareWorkload, usesWorkload, WORKLOAD_KEYS, type PreparedWorkload } from './setup/workload-setup.ts';
import { WorkloadInputError } from './workload/input-error.ts';
import { RequestLog } from './report/request-log.ts';
import { proxyFor } from '../lib/http/proxy.ts';


/** The target did not answer the warm-up at all: a configuration problem (exit 2), not a finding. */
export class TargetUnreachable extends Error {}

export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;

const SCENARIO_RUNNERS: Record<Scenario, (ctx: ScenarioContext) => Promise<ScenarioResult>> = {
  throughput: runThroughput,
  // A stream run with phases or a change is a rehearsal.
  stream: (ctx) => (isRehearsal(ctx.options) ? runRehearsal(ctx) : runStream(ctx)),
  sweep: runSweep,
  'rate-limit': runRateLimit,
};

export interface RunSpec {
  scenario: Scenario;
  options: LoadOptions;
  config: Config;
  target: LoadTarget;
  stop: StopToken;
  /** Directory for summary.json and report.html; undefined = write nothing. */
  outDir?: string;
  baseline?: BaselineFile;
  thresholds?: Map<MetricName, Threshold>;
  log?: (line: string) => void;
  /** The workload built before the target started (main does it, to exit 2 on bad input); built here when absent. */
  workload?: PreparedWorkload;
}

export interface RunOutcome {
  summary: LoadSummary;
  exitCode: number;
  summaryPath?: string;
  htmlPath?: string;
  requestsPath?: string;
}

/** Runs one scenario against a resolved target and writes its reports (tests call this directly). */
export async function executeRun(spec: RunSpec): Promise<RunOutcome> {
  const { options, target, stop } = spec;
  const log = spec.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const findings = new Findings();
  const progress = new Progress(!options.quiet);
  let pool: Pool | undefined;
  const prepared = spec.workload ?? await prepareWorkload(spec.scenario, options);
  const ctx: ScenarioContext = {
    scenario: spec.scenario,
    options,
    target,
    timeoutMs: options.timeoutMs ?? spec.config.timeoutMs,
    stop,
    progress,
    findings,
    pool: () => (pool ??= createPool(target.origin, options.capConcurrency, options.timeoutMs ?? spec.config.timeoutMs)),
    workload: prepared.workload,
    tokenizer: prepared.tokenizer,
  };
  // ajv compiles the schemas on first use (tens of ms): not in the middle of the run.
  for (const name of ['chat-completion', 'chat-completion-chunk', 'error'] as const) validate(name, {});
  if (options.warmup > 0) {
    const w = await warmUp(ctx, spec.scenario === 'stream' || spec.scenario === 'sweep', options.warmup);
    if (w.answered === 0 && !stop.stopped) {
      await pool?.destroy().catch(() => {});
      throw new TargetUnreachable(`${target.baseUrl} answered none of ${w.sent} warm-up requests (${w.firstFailure ?? 'no answer'})`);
    }
  }
  const startedAt = new Date();
  // requests.jsonl: streamed from the first measured request (warm-up requests are not in it);
  // autocannon (throughput without --rate) sends on its own and has no per-request record.
  if (spec.outDir && (spec.scenario === 'rate-limit' || usesWorkload(spec.scenario, options))) ctx.requestLog = new RequestLog(spec.outDir, performance.now());
  const meter = new CpuMeter();
  const refCpu0 = target.reference ? await target.reference.cpu().catch(() => undefined) : undefined;
  let result: ScenarioResult;
  try {
    result = await SCENARIO_RUNNERS[spec.scenario](ctx);
  } finally {
    progress.stop();
    await pool?.destroy().catch(() => {});
    ctx.requestLog?.close();
  }
  const driver = meter.stop();
  const refCpu1 = target.reference && refCpu0 ? await target.reference.cpu().catch(() => undefined) : undefined;
  const partial = stop.stopped && stop.reason === 'interrupted';
  const summary = buildSummary({
    scenario: spec.scenario,
    options,
    target,
    startedAt,
    finishedAt: new Date(),
    partial,
    result: partial ? { ...result, stopReason: 'interrupted' } : result,
    driver,
    referenceCpuS: refCpu0 && refCpu1 ? Math.round((refCpu1.user_s + refCpu1.system_s - refCpu0.user_s - refCpu0.system_s) * 1000) / 1000 : null,
    findings: findings.list(),
  });
  if (ctx.workload) summary.workload = ctx.workload.describe();
  summary.tokens = result.recorder.tokens();
  // The report's per-request scatter: a bounded, even sample (lean client runs only).
  const points = result.recorder.requestPoints();
  if (points.of > 0) summary.plots.extra.requests = points;
  const phases = result.recorder.phases();
  if (phases.length > 1) summary.plots.extra.phases = phases;
  if (ctx.requestLog) summary.requests_log = { file: 'requests.jsonl', lines: ctx.requestLog.lines };
  let regressions = 0;
  if (spec.baseline) {
    if (partial) log('baseline: not compared (partial run)');
    else {
      summary.baseline = compareMetrics(summary.metrics, spec.baseline, spec.thresholds ?? new Map(), { options: summary.options, workload: summary.workload, target: summary.target }, { scenario: summary.scenario, hdr_us: summary.hdr_us, counts: summary.counts });
      regressions = summary.baseline.regressions;
    }
  }
  // SLOs and absolute limits judge every run but an interrupted one (its figures cover part of it).
  if (!partial) summary.gates = evaluateGates(spec.scenario, options, summary.metrics, summary.details, parseLimits(options.thresholds));
  const unlike = options.requireLikeForLike && summary.baseline !== null && !summary.baseline.like_for_like;
  let summaryPath: string | undefined;
  let htmlPath: string | undefined;
  if (spec.outDir) {
    summaryPath = writeSummary(spec.outDir, summary);
    htmlPath = writeHtmlReport(spec.outDir, summary);
  }
  log(redact(renderConsoleSummary(summary)));
  const rehearsal = rehearsalVerdict(summary);
  if (rehearsal) log(redact(rehearsal));
  if (summary.baseline) log(redact(formatComparison(summary.baseline)));
  if (unlike) log('baseline: --require-like-for-like: the runs differ in settings (listed above); exit 1');
  if (summaryPath) log(`reports: ${summaryPath}\n         ${htmlPath}${ctx.requestLog ? `\n         ${ctx.requestLog.path}` : ''}`);
  const failing = findingsFail(summary.findings, spec.config.strict);
  const exitCode = partial ? EXIT.interrupted : regressions > 0 || failing || (summary.gates?.failed ?? 0) > 0 || unlike ? EXIT.failed : EXIT.ok;
  return { summary, exitCode, summaryPath, htmlPath, requestsPath: ctx.requestLog?.path };
}

/** Everything from argv to exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const fail = (message: string): number => {
    process.stderr.write(`chatgate load: ${redact(message)}\n`);
    return EXIT.usage;
  };
  // `merge <summaries>`: many runners' summaries into one (load/report/merge.ts); sends nothing.
  if (argv[0] === 'merge') return mergeMain(argv.slice(1), env);
  let parsed;
  let config: Config;
  let plan;
  let baseline: BaselineFile | undefined;
  let thresholds: Map<MetricName, Threshold>;
  let workload: PreparedWorkload;
  try {
    parsed = parseArgs(argv, env);
    if (parsed.help) {
      process.stdout.write(`${helpText(parsed.helpFor)}\n`);
      return EXIT.ok;
    }
    config = loadConfig(env);
    registerSecrets(config.extraHeaders); // secret HEADERS values are masked like the keys
    for (const w of oneLineWarnings(config.extraHeaders)) process.stderr.write(`chatgate load: warning: HEADERS: ${w}\n`);
    checkCombinations(parsed.scenario, parsed.options, parsed.given, config);
    workload = await prepareWorkload(parsed.scenario, parsed.options);
    plan = planFor(parsed.scenario, parsed.options, workload.workload?.spec.trace ? traceSpanS(workload.workload.spec.trace.records) : undefined);
    checkCaps(parsed.scenario, parsed.options, plan);
    if (config.targetUrl) checkRemote(config.targetUrl, parsed.options.allowRemote);
    thresholds = parseThresholds(parsed.options.thresholds);
    parseLimits(parsed.options.thresholds);
    if (parsed.options.baseline) baseline = loadBaseline(parsed.options.baseline, parsed.scenario);
  } catch (e) {
    if (e instanceof UsageError || e instanceof ConfigError || e instanceof WorkloadInputError) return fail(e.message);
    throw e;
  }
  const { scenario, options } = parsed;
  const where = config.targetUrl ?? 'the embedded reference server (127.0.0.1, started now)';
  const remote = config.targetUrl !== undefined && !isLoopbackHost(new URL(config.targetUrl).hostname);
  if (remote || options.dryRun || !options.quiet) {
    const out = remote || options.dryRun ? process.stdout : process.stderr;
    const shape = workload.workload ? [`workload: ${Object.entries(workload.workload.describe()).map(([k, v]) => `${k} ${String(v)}`).join(', ')}`] : [];
    out.write(`chatgate load: ${scenario} against ${redact(where)}\n${[...plan.lines, ...shape].map((l) => `  plan: ${l}`).join('\n')}\n`);
  }
  if (options.dryRun) return EXIT.ok;

  // Staging: one request before the run (lib/http/preflight.ts, shared with npm test); no HTTP answer is exit 2.
  if (config.targetUrl) {
    const pre = await preflight({ targetUrl: config.targetUrl, apiKey: config.apiKey!, timeoutMs: options.timeoutMs ?? config.timeoutMs });
    for (const w of pre.warnings) process.stderr.write(`chatgate load: warning: ${redact(w)}\n`);
    if (pre.unreachable) return fail(`${pre.unreachable.variable}: ${pre.unreachable.message}`);
  }
  let target: LoadTarget;
  try {
    // The embedded reference answers as long as the longest reply asked for, unless told otherwise.
    const longest = workload.workload?.maxOutputTokens();
    const refOptions = !parsed.given.has('refReplyWords') && longest !== undefined && longest > options.refReplyWords ? { ...options, refReplyWords: longest } : options;
    target = config.targetUrl ? remoteTarget(config) : await embeddedTarget(referenceOptionsFor(refOptions));
  } catch (e) {
    return fail(`could not start the embedded reference server: ${(e as Error).message}`);
  }
  if (options.brainShare > 0 && !target.brainId) {
    await target.close();
    return fail('BRAIN_ID: --brain-share needs the id of a brain API_KEY may invoke; export BRAIN_ID=<uuid>');
  }
  const stop = new StopToken();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts > 1) {
      process.stderr.write('\nchatgate load: second Ctrl-C, exiting without a report\n');
      process.exit(EXIT.interrupted);
    }
    process.stderr.write(`\nchatgate load: stopping (waiting up to ${options.drain} s for requests in flight; Ctrl-C again to quit at once)\n`);
    stop.trigger('interrupted');
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigint);
  try {
    const outDir = resolve(options.out ?? join(config.reportsDir, 'load', new Date().toISOString().replace(/[:.]/g, '-')));
    const outcome = await executeRun({ scenario, options, config, target, stop, outDir, baseline, thresholds, workload });
    return outcome.exitCode;
  } catch (e) {
    if (e instanceof TargetUnreachable) return fail(`TARGET_URL: ${e.message}; check the address and that the service is up`);
    throw e;
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
    await target.close();
  }
}

/** Option combinations that cannot mean what the user wants: exit 2 with the fix. */
function checkCombinations(scenario: Scenario, o: LoadOptions, given: Set<keyof LoadOptions>, config: Config): void {
  if (config.targetUrl) {
    const embeddedOnly = OPTION_SPECS.filter((s) => s.embeddedOnly && given.has(s.key));
    if (embeddedOnly.length) {
      const s = embeddedOnly[0]!;
      throw new UsageError(`${s.flag} (${s.env}) configures the embedded reference server, but TARGET_URL is set; unset it or drop the option`);
    }
  } else {
    if (o.refDefect && !(o.refDefect in DEFECTS)) throw new UsageError(`REFERENCE_DEFECT / --ref-defect: "${o.refDefect}" is not a defect of the reference server; npm run reference -- --list shows them`);
    for (const v of o.refVariants) if (!(v in VARIANTS)) throw new UsageError(`REFERENCE_VARIANTS / --ref-variant: "${v}" is not a variant of the reference server; npm run reference -- --list shows them`);
  }
  if (scenario === 'stream' && o.rate !== undefined && o.concurrency !== undefined && given.has('rate') && given.has('concurrency')) {
    throw new UsageError('--rate and --concurrency exclude each other: open loop at a rate, or a fixed number of streams');
  }
  if (given.has('maxConcurrency') && ((scenario === 'stream' && given.has('concurrency')) || (scenario === 'sweep' && o.sweepBy === 'concurrency') || (scenario === 'throughput' && (o.rate === undefined || o.rateEngine === 'autocannon')))) {
    throw new UsageError('--max-concurrency caps the requests in flight of an arrival rate (--rate, or a sweep by rate on the open-loop sender); a fixed concurrency is already its own cap');
  }
  if (scenario === 'sweep' && o.sweepBy === 'rate' && given.has('concurrency')) {
    throw new UsageError('--concurrency sets the first sweep step only with --sweep-by concurrency; use --sweep-start for rates');
  }
  if (o.brainShare > 0 && config.targetUrl && !config.brainId) {
    throw new UsageError('BRAIN_ID: --brain-share needs the id of a brain API_KEY may invoke; export BRAIN_ID=<uuid>');
  }
  // Staging: autocannon opens its own sockets and has no proxy support; the lean client (every other path) does.
  const proxy = config.targetUrl ? proxyFor(config.targetUrl) : undefined;
  if (proxy && scenario === 'throughput' && (o.rate === undefined || o.rateEngine === 'autocannon')) {
    throw new UsageError(`${proxy.variable}: throughput ${o.rate === undefined ? 'at fixed connections' : 'with --rate-engine autocannon'} runs on autocannon, which cannot go through a proxy; give --rate <n> (the open-loop sender goes through ${proxy.shown}), or set NO_PROXY=${new URL(config.targetUrl!).hostname} if the target is reachable directly`);
  }
  const shaping = WORKLOAD_KEYS.filter((k) => given.has(k));
  if (scenario === 'throughput' && shaping.length && (o.rate === undefined || o.rateEngine === 'autocannon')) {
    throw new UsageError(`${OPTION_SPECS.find((s) => s.key === shaping[0])!.flag} shapes the requests of the open-loop sender; give --rate <n> (autocannon cycles fixed bodies)`);
  }
  if (scenario === 'throughput' && o.rate !== undefined && o.rate < 1 && o.rateEngine === 'autocannon') {
    throw new UsageError(`--rate ${o.rate}: autocannon sends whole requests per second; use at least 1, or --rate-engine open-loop`);
  }
}
