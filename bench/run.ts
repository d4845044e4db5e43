// `npm run bench`: the load harness's own speed, measured on this machine, printed
// (never asserted: the figures depend on the machine) and written to
// reports/bench/summary.json (snake_case, units in the names) so that a later run can
// be compared with this one; the previous summary's figures are shown beside the new.
//
// Sections (each one function, listed in SECTIONS; --only picks some):
// 1. throughput: req/s of the `throughput` scenario (closed loop, 10 connections)
//    against a minimal loopback responder, as a ratio to the autocannon CLI and to
//    wrk (one thread) on the same responder, same connections, same time. The tools
//    take turns for 5 rounds; the ratio is the median of the rounds' ratios (a shared
//    machine's speed drifts between rounds more than between neighbouring runs).
// 2. cpu: the throughput scenario and plain autocannon (the CLI's engine, no hooks)
//    in this one process, interleaved, CPU time per answered request. Much steadier
//    than req/s on a shared machine: other processes take wall time away, not CPU time.
// 3. floor: the stream driver's CPU per SSE event against the floor's
//    (bench/stream-floor.ts: the same pool, requests and closed loop, and nothing but
//    finding event boundaries in the bytes and timestamping them), same streams, same
//    responder, taking turns; CPU time of each process (user + system) / events read.
// 4. streams: the `stream` scenario holds N concurrent streams (closed loop) against a
//    responder that paces exactly (first token at 200 ms, then one every 200 ms, 10);
//    N climbs (500 ... 10,000 and on while steps hold, up to the open-files limit;
//    it stops at a step where anything failed); a step holds when the TTFT and ITL
//    medians are within 5% and nothing failed. The largest N held is run again until
//    it has held in --runs runs (5), else the next held step below (up to 4).
//    Reported: the largest N held in every run, the driver's CPU per 1,000 streams
//    where they flowed at pace, its cores at the top step, memory per 1,000 streams.
//    A full `npm run bench` took 4 to 6 minutes here.
//
// 6. workload: the stream driver's CPU per event and memory with 4,096-token prompts beside
//    short ones, and the RSS of a steady long run (bench/workload.ts).
//
// Options: --only throughput,cpu,floor,streams,fuzz,workload,rehearsal  --seconds N (per measurement)  --pin
// (responder on CPU 0, the tool under test on CPU 1, with taskset)  --runs N (5)
// --max-streams N  --floor-streams N (1000)  --long-seconds N (workload's long run, 60; 600 = ten minutes)
// --long-rate N (req/s of the workload's and rehearsal's long runs, 50; lower barely loads the machine).
// fuzz: the fuzz phase's req/s and its share of a default run (bench/fuzz.ts).
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs as parseCommandLine } from 'node:util';
import { forkTs, TSX_LOADER } from '../load/setup/ts-child.ts';
import { measureDriverWork } from './driver-work.ts';
import { profileBreakdown } from './profile-breakdown.ts';
import { measureRequestWork } from './request-work.ts';
import { benchWorkload } from './workload.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const AUTOCANNON = join(ROOT, 'node_modules/.bin/autocannon');
const CONNECTIONS = 10;
const ROUNDS = 5;
const KEY = 'sk-bench-0000000000000000';
const BODY = JSON.stringify({ model: 'svc-auto', messages: [{ role: 'user', content: 'Write one short sentence about load testing. (request 0)' }] });
const STREAM_STEPS = [500, 1000, 2500, 5000, 7500, 10_000, 12_500, 15_000, 17_500, 20_000, 25_000, 30_000];
/**
 * Section 4's pace: first token at 200 ms, then one every 200 ms, 10 tokens (2 s
 * streams, so each of the N workers runs several streams in a run and the first one,
 * which also opens its connection, is a minority of the TTFT samples).
 */
const HOLD = { ttftMs: 200, itlMs: 200, tokens: 10 };
/** Section 3's pace: more events per second per stream, so CPU per event is measured on many events. */
const FLOOR = { ttftMs: 200, itlMs: 50, tokens: 40 };
/** Section 3's realistic shape, one round: 4,096-token prompts, 256-token replies. */
const FLOOR_LONG = { ttftMs: 200, itlMs: 50, tokens: 256, promptTokens: 4096 };
const FLOOR_ROUNDS = 3;

const args = benchArgs(process.argv.slice(2));
const only = args['only']?.split(',');
const seconds = args['seconds'] === undefined ? undefined : Number(args['seconds']);
const runs = Number(args['runs'] ?? 5);
const maxStreams = Number(args['max-streams'] ?? Infinity);
const floorStreams = Number(args['floor-streams'] ?? 1000);
const longSeconds = Number(args['long-seconds'] ?? 60);
const longRate = Number(args['long-rate'] ?? 50);
const work = mkdtempSync(join(tmpdir(), 'chatgate-bench-'));
const OUT_DIR = join(process.env.REPORTS_DIR ?? join(ROOT, 'reports'), 'bench');

/** What the run measured, as written to reports/bench/summary.json (null: not measured this run). */
const figures: Record<string, unknown> = {};
const loadAverage = () => loadavg().map((l) => Math.round(l * 100) / 100);

/** The command line (node:util parseArgs); a bad option is one line and exit 2. */
function benchArgs(argv: string[]): { only?: string; seconds?: string; runs?: string; 'max-streams'?: string; 'floor-streams'?: string; 'long-seconds'?: string; 'long-rate'?: string; pin?: boolean } {
  try {
    const { values } = parseCommandLine({
      args: argv, strict: true, allowPositionals: false,
      options: { only: { type: 'string' }, seconds: { type: 'string' }, runs: { type: 'string' }, 'max-streams': { type: 'string' }, 'floor-streams': { type: 'string' }, 'long-seconds': { type: 'string' }, 'long-rate': { type: 'string' }, pin: { type: 'boolean' } },
    });
    for (const k of ['seconds', 'runs', 'max-streams', 'floor-streams', 'long-seconds', 'long-rate'] as const) {
      const v = values[k];
      if (v !== undefined && !(Number(v) > 0)) throw new Error(`--${k} must be a positive number (got "${v}")`);
    }
    return values;
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message.split('\n')[0]}; options: --only throughput,cpu,floor,streams,fuzz,workload,rehearsal --seconds N --runs N --max-streams N --floor-streams N --long-seconds N --long-rate N --pin\n`);
    process.exit(2);
  }
}

function run(cmd: string, argv: string[], env: NodeJS.ProcessEnv = process.env, timeoutMs = 120_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, argv, { env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

function have(cmd: string, argv: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const p = spawn(cmd, argv, { stdio: 'ignore' });
    p.on('error', () => resolve(false));
    p.on('exit', () => resolve(true));
  });
}

// --pin (two or more cores and taskset): the responder gets core 0 and the tool under
// test core 1, so every tool has exactly one core. Off by default: on a shared machine
// other processes' load then lands on a pinned core and cannot move away.
let pinning = false;
async function setUpPinning(): Promise<void> {
  pinning = !!args.pin && cpus().length >= 2 && (await have('taskset', ['-V']));
}
function pinned(cmd: string, argv: string[]): [string, string[]] {
  return pinning ? ['taskset', ['-c', '1', cmd, ...argv]] : [cmd, argv];
}
/** Runs with the open-files limit raised to the hard limit (one socket per stream). */
function withFiles(cmd: string, argv: string[]): [string, string[]] {
  return ['sh', ['-c', 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"', 'sh', cmd, ...argv]];
}
function fileLimit(): Promise<number> {
  return run('sh', ['-c', 'ulimit -Hn']).then((r) => (r.stdout.trim() === 'unlimited' ? Infinity : Number(r.stdout.trim()) || 1024));
}
async function pinResponder(pid: number): Promise<void> {
  if (pinning) await run('taskset', ['-a', '-p', '-c', '0', String(pid)]);
}

/** The load harness itself, as `npm run load` runs it, in a fresh process. */
async function chatgateLoad(argv: string[], baseUrl: string, out: string, timeoutMs = 300_000, nodeArgs: string[] = []): Promise<Record<string, any>> {
  const r = await run(...pinned(...withFiles(process.execPath, [...nodeArgs, '--import', TSX_LOADER, join(ROOT, 'bin/load.ts'), ...argv, '--quiet', '--out', out])),
    { ...process.env, TARGET_URL: baseUrl, API_KEY: KEY }, timeoutMs);
  if (!existsSync(join(out, 'summary.json'))) throw new Error(`npm run load ${argv.join(' ')} wrote no summary (exit ${r.code}): ${r.stderr.slice(0, 500)}`);
  return JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
}

async function benchThroughput(): Promise<void> {
  const secs = seconds ?? 4;
  const responder = await forkTs<{ port: number; pid: number }>(join(ROOT, 'bench/json-responder.ts'));
  const base = `http://127.0.0.1:${responder.ready.port}`;
  const url = `${base}/v1/chat/completions`;
  await pinResponder(responder.ready.pid);
  const wrk = await have('wrk', ['--version']);
  const lua = join(work, 'post.lua');
  writeFileSync(lua, `wrk.method = "POST"\nwrk.body = [[${BODY}]]\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["Authorization"] = "Bearer ${KEY}"\n`);
  const acArgs = (d: number) => ['-c', String(CONNECTIONS), '-d', String(d), '-m', 'POST', '-H', 'content-type=application/json', '-H', `authorization=Bearer ${KEY}`, '-b', BODY, '-j', url];
  const tools: Record<string, () => Promise<number>> = {
    'chatgate throughput': async () => {
      const s = await chatgateLoad(['throughput', '--connections', String(CONNECTIONS), '--duration', String(secs), '--warmup', '0'], `${base}/v1`, join(work, `tp-${Date.now()}`));
      return s.metrics.responses_rps;
    },
    'autocannon CLI': async () => {
      const r = await run(...pinned(AUTOCANNON, acArgs(secs)));
      const j = JSON.parse(r.stdout);
      return j.requests.total / j.duration;
    },
  };
  if (wrk) {
    tools['wrk (1 thread)'] = async () => {
      const r = await run(...pinned('wrk', ['-t1', '-c', String(CONNECTIONS), '-d', `${secs}s`, '-s', lua, url]));
      const m = /Requests\/sec:\s+([\d.]+)/.exec(r.stdout);
      if (!m) throw new Error(`wrk printed no Requests/sec: ${r.stdout}${r.stderr}`);
      return Number(m[1]);
    };
  }
  console.log(`\n1. Throughput: ${CONNECTIONS} connections, ${secs} s per run; the tools take turns, ${ROUNDS} rounds`);
  console.log(`   responder: minimal node:http server in its own process (${url})`);
  await run(AUTOCANNON, acArgs(2)); // warm the responder's JIT
  const rounds: Array<Record<string, number>> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const r: Record<string, number> = {};
    for (const [name, measure] of Object.entries(tools)) r[name] = await measure();
    rounds.push(r);
    console.log(`   round ${round + 1}  ${Object.entries(r).map(([k, v]) => `${k} ${v.toFixed(0)} req/s`).join('  |  ')}` +
      `  ->  ${(r['chatgate throughput']! / r['autocannon CLI']!).toFixed(3)}x autocannon${wrk ? `, ${(r['chatgate throughput']! / r['wrk (1 thread)']!).toFixed(3)}x wrk` : ''}`);
  }
  await responder.close();
  // Each round's tools ran back to back, under the same conditions: compare within rounds.
  const ratio = (other: string) => median(rounds.map((r) => r['chatgate throughput']! / r[other]!));
  const best = (name: string) => Math.max(...rounds.map((r) => r[name]!));
  console.log(`   result: chatgate throughput = ${ratio('autocannon CLI').toFixed(3)}x the autocannon CLI` +
    (wrk ? `, ${ratio('wrk (1 thread)').toFixed(3)}x wrk (one thread)` : '') +
    ` (median of the rounds' ratios); best runs: chatgate ${best('chatgate throughput').toFixed(0)}, autocannon ${best('autocannon CLI').toFixed(0)}` +
    (wrk ? `, wrk ${best('wrk (1 thread)').toFixed(0)}` : '') + ' req/s');
  if (!wrk) console.log('   wrk: NOT MEASURED, wrk is not installed (Debian: apt-get install -y wrk)');
  figures.throughput_ratio_autocannon = round3(ratio('autocannon CLI'));
  figures.throughput_ratio_wrk = wrk ? round3(ratio('wrk (1 thread)')) : null;
  figures.throughput_best_rps = { chatgate: Math.round(best('chatgate throughput')), autocannon: Math.round(best('autocannon CLI')), wrk: wrk ? Math.round(best('wrk (1 thread)')) : null };
  console.log('   note: on a small machine the responder may be the limit for all tools alike; the ratio then says "no slower", not "as fast".');
}

async function benchCpu(): Promise<void> {
  const secs = seconds ?? 3;
  const responder = await forkTs<{ port: number; pid: number }>(join(ROOT, 'bench/json-responder.ts'));
  const base = `http://127.0.0.1:${responder.ready.port}`;
  const { default: autocannon } = await import('autocannon');
  const { executeRun } = await import('../load/run.ts');
  const { parseArgs } = await import('../load/setup/options.ts');
  const { loadConfig } = await import('../lib/run/config.ts');
  const { remoteTarget } = await import('../load/setup/load-target.ts');
  const { StopToken } = await import('../load/setup/stop.ts');
  const config = loadConfig({ TARGET_URL: `${base}/v1`, API_KEY: KEY });
  const plain = () => new Promise<number>((resolve, reject) => {
    autocannon({ url: `${base}/v1/chat/completions`, connections: CONNECTIONS, duration: secs, method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body: BODY } as never,
      (err, r) => (err ? reject(err) : resolve(r.requests.total!)));
  });
  const ours = async () => {
    const { options } = parseArgs(['throughput', '--quiet', '--warmup', '0', '--connections', String(CONNECTIONS), '--duration', String(secs)], {});
    const o = await executeRun({ scenario: 'throughput', options, config, target: remoteTarget(config), stop: new StopToken(), log: () => {} });
    return o.summary.counts.responses;
  };
  const measure = async (f: () => Promise<number>) => {
    const c0 = process.cpuUsage();
    const n = await f();
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / n; // µs per answered request
  };
  console.log(`\n2. CPU per request (this process, ${secs} s runs, ${ROUNDS} rounds): the throughput scenario vs plain autocannon`);
  await plain(); // JIT warm-up of both the engine and the responder
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const a = await measure(plain);
    const b = await measure(ours);
    ratios.push(a / b);
    console.log(`   round ${round + 1}  autocannon ${a.toFixed(1)} µs/request  |  chatgate throughput ${b.toFixed(1)} µs/request  ->  ${(a / b).toFixed(3)}x autocannon's efficiency`);
  }
  await responder.close();
  console.log(`   result: the throughput scenario does ${median(ratios).toFixed(3)}x the requests per CPU second that autocannon alone does (median of rounds)`);
  figures.throughput_cpu_efficiency_ratio_autocannon = round3(median(ratios));
}

type Summary = Record<string, any>;

/** Starts bench/stream-responder.ts at a pace, pinned to CPU 0 with --pin. */
async function streamResponder(pace: { ttftMs: number; itlMs: number; tokens: number }) {
  const responder = await forkTs<{ port: number; pid: number }>(join(ROOT, 'bench/stream-responder.ts'),
    { ...process.env, TTFT_MS: String(pace.ttftMs), ITL_MS: String(pace.itlMs), TOKENS: String(pace.tokens) });
  await pinResponder(responder.ready.pid);
  return responder;
}

/** The floor (bench/stream-floor.ts, on undici or on plain sockets) in its own process, as the driver runs: pinned, same streams. */
async function floorRun(base: string, n: number, secs: number, rampS: number, kind: 'undici' | 'socket', promptTokens?: number): Promise<{ events: number; cpu_user_s: number; cpu_system_s: number; failed: number; max_rss_mib: number }> {
  const r = await run(...pinned(...withFiles(process.execPath, ['--import', TSX_LOADER, join(ROOT, 'bench/stream-floor.ts'), base, String(n), String(secs), String(rampS), kind, ...(promptTokens ? [String(promptTokens)] : [])])),
    { ...process.env, API_KEY: KEY }, 300_000);
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (!line.startsWith('{')) throw new Error(`stream floor printed no result (exit ${r.code}): ${r.stderr.slice(0, 500)}`);
  return JSON.parse(line);
}

async function benchFloor(): Promise<void> {
  const secs = seconds ?? 8;
  const n = floorStreams;
  const rampS = 2;
  const responder = await streamResponder(FLOOR);
  const base = `http://127.0.0.1:${responder.ready.port}/v1`;
  console.log(`\n3. Stream driver vs the floor: ${n} concurrent streams (closed loop, ramp-up ${rampS} s) for ${secs} s each, first token at ${FLOOR.ttftMs} ms, then one every ${FLOOR.itlMs} ms, ${FLOOR.tokens} tokens;`);
  console.log(`   the floor (bench/stream-floor.ts: same pool and requests, only finds event boundaries and timestamps them) and the driver (\`npm run load -- stream\`) take turns, ${FLOOR_ROUNDS} rounds; CPU = user + system of each process;`);
  console.log('   for reference, the socket floor below undici (the same loop on plain node:net sockets, no HTTP parsing): what the kernel and Node\'s socket reads cost per event here');
  const own = measureDriverWork();
  console.log(`   the driver's own work, in this process without sockets (${own.events} events of the same bytes through load/engine/lean-client.ts and the recorder): ${own.driver_us_per_event.toFixed(2)} µs per event;`);
  console.log(`   the same with its caches turned over (20,000 random cache lines of a 256 MiB buffer read before each event, as undici, Node and the kernel run between two events of a stream live; only the driver's calls timed; the walk's size is a choice, so read this as how much the figure above grows when nothing is in cache, not as a live figure): ${own.driver_evicted_us_per_event.toFixed(2)} µs per event;`);
  console.log(`   of it reading SSE and parsing every payload: ${own.fast_path_chunk_parser_us_per_event.toFixed(2)} µs as the driver reads (load/engine/sse-scan.ts, load/engine/chunk-parser.ts); with JSON.parse of every payload ${own.fast_path_us_per_event.toFixed(2)} µs on the fast path, ${own.strict_reader_us_per_event.toFixed(2)} µs through the strict reader alone (lib/http/sse-reader.ts)`);
  const perRequest = await measureRequestWork();
  const pr = perRequest.us_per_request;
  console.log(`   the driver's per-request work, same way (least of 3 rounds), µs per request: building it ${pr.build.toFixed(1)} (workload, canary, prompt token count), token counts ${pr.tokens.toFixed(1)}, ` +
    `recorder ${pr.recorder.toFixed(1)}, requests.jsonl ${pr.request_log.toFixed(1)}, SVC-9/EV-13 watch ${pr.cross_talk_watch.toFixed(1)}: ${perRequest.us_per_event.toFixed(2)} µs per event over ${perRequest.events_per_request} events`);
  console.log('   round   floor µs/event (user, system)   driver µs/event (user, system)   driver/floor   socket floor µs/event (user, system)   events (floor / driver / socket)   load average');
  const rows: Array<{ floor: number; driver: number; floorUser: number; driverUser: number; floorSystem: number; driverSystem: number; socket: number; socketUser: number; socketSystem: number }> = [];
  let profile: string | undefined;
  const us = (cpuS: number, events: number) => (cpuS / events) * 1e6;
  try {
    for (let round = 0; round < FLOOR_ROUNDS; round++) {
      const f = await floorRun(base, n, secs, rampS, 'undici');
      const k = await floorRun(base, n, secs, rampS, 'socket');
      const s = await chatgateLoad(['stream', '--concurrency', String(n), '--duration', String(secs), '--ramp-up', String(rampS), '--warmup', '5', '--cap-concurrency', String(Math.max(n, 5000))], base, join(work, `fl-${round}`));
      const events = s.details.sse_events as number;
      if (f.failed > 0 || k.failed > 0 || s.counts.failed > 0 || !events || !f.events || !k.events) throw new Error(`floor round ${round + 1}: failures (floor ${f.failed}, socket floor ${k.failed}, driver ${s.counts.failed}) or no events`);
      const row = {
        floor: us(f.cpu_user_s + f.cpu_system_s, f.events), floorUser: us(f.cpu_user_s, f.events), floorSystem: us(f.cpu_system_s, f.events),
        driver: us(s.driver.cpu_user_s + s.driver.cpu_system_s, events), driverUser: us(s.driver.cpu_user_s, events), driverSystem: us(s.driver.cpu_system_s, events),
        socket: us(k.cpu_user_s + k.cpu_system_s, k.events), socketUser: us(k.cpu_user_s, k.events), socketSystem: us(k.cpu_system_s, k.events),
      };
      rows.push(row);
      const split = (all: number, user: number, system: number, width: number) => `${fmt(all, width)} (${user.toFixed(1)}, ${system.toFixed(1)})`;
      console.log(`   ${String(round + 1).padStart(5)}   ${split(row.floor, row.floorUser, row.floorSystem, 16)}   ${split(row.driver, row.driverUser, row.driverSystem, 17)}   ${(row.driver / row.floor).toFixed(3).padStart(11)}x   ${split(row.socket, row.socketUser, row.socketSystem, 23)}   ${`${f.events} / ${events} / ${k.events}`.padStart(32)}   ${loadAverage().join(' ')}`);
    }
    // One more driver run under V8's sampling profiler (not counted in the rounds: the
    // profiler costs CPU too): where the driver's time goes, as shares of its busy samples.
    const profDir = join(work, 'profile');
    await chatgateLoad(['stream', '--concurrency', String(n), '--duration', String(secs), '--ramp-up', String(rampS), '--warmup', '5', '--cap-concurrency', String(Math.max(n, 5000))], base, join(work, 'fl-profile'), 300_000, ['--cpu-prof', '--cpu-prof-dir', profDir]);
    profile = largestProfile(profDir);
  } finally {
    await responder.close();
  }
  const floor = median(rows.map((r) => r.floor));
  const driver = median(rows.map((r) => r.driver));
  const ratio = median(rows.map((r) => r.driver / r.floor));
  if (profile) {
    const b = profileBreakdown(profile).run_share;
    const at = (share: number) => `${(share * 100).toFixed(1)} % (~${(share * driver).toFixed(1)} µs)`;
    console.log(`   profile of one more driver run (node --cpu-prof, shares of its busy samples in the run, start-up and report left out; µs: the share of the median ${driver.toFixed(2)} µs per event):`);
    console.log(`           its own per-event work ${at(b.per_event_driver)}, its per-request work ${at(b.per_request_driver)}, garbage collection ${at(b.garbage_collector)}, undici, Node and the kernel (the floor's work too) ${at(b.undici_node_kernel)}`);
    figures.stream_driver_profile_share = Object.fromEntries(Object.entries(b).map(([k, v]) => [k, round3(v)]));
  }
  Object.assign(figures, { stream_driver_per_request_us: Object.fromEntries(Object.entries(pr).map(([k, v]) => [k, round3(v)])), stream_driver_per_request_us_per_event: round3(perRequest.us_per_event) });
  await floorLongShape(n, secs, rampS);
  console.log(`   result: floor ${floor.toFixed(2)} µs per event, driver ${driver.toFixed(2)} µs per event: ${ratio.toFixed(3)}x the floor (medians of ${FLOOR_ROUNDS} rounds; the ratio is the median of the rounds' ratios)`);
  console.log(`           user time only: floor ${median(rows.map((r) => r.floorUser)).toFixed(2)}, driver ${median(rows.map((r) => r.driverUser)).toFixed(2)} µs per event`);
  const socket = median(rows.map((r) => r.socket));
  const socketSystem = median(rows.map((r) => r.socketSystem));
  console.log(`           below undici: the socket floor ${socket.toFixed(2)} µs per event, ${socketSystem.toFixed(2)} of them system time (the kernel's, for any client on this machine)`);
  Object.assign(figures, {
    stream_floor_us_per_event: round3(floor),
    stream_driver_us_per_event: round3(driver),
    stream_driver_to_floor_ratio: round3(ratio),
    stream_floor_user_us_per_event: round3(median(rows.map((r) => r.floorUser))),
    stream_floor_system_us_per_event: round3(median(rows.map((r) => r.floorSystem))),
    stream_driver_system_us_per_event: round3(median(rows.map((r) => r.driverSystem))),
    stream_socket_floor_us_per_event: round3(socket),
    stream_socket_floor_system_us_per_event: round3(socketSystem),
    stream_driver_user_us_per_event: round3(median(rows.map((r) => r.driverUser))),
    stream_driver_own_work_us_per_event: round3(own.driver_us_per_event),
    stream_driver_own_work_evicted_us_per_event: round3(own.driver_evicted_us_per_event),
    stream_sse_fast_path_us_per_event: round3(own.fast_path_us_per_event),
    stream_sse_chunk_parser_us_per_event: round3(own.fast_path_chunk_parser_us_per_event),
    stream_sse_strict_reader_us_per_event: round3(own.strict_reader_us_per_event),
    stream_floor_rounds: rows.map((r) => ({ floor_us_per_event: round3(r.floor), driver_us_per_event: round3(r.driver), ratio: round3(r.driver / r.floor), socket_floor_us_per_event: round3(r.socket) })),
    stream_floor_setup: { streams: n, seconds: secs, ttft_ms: FLOOR.ttftMs, itl_ms: FLOOR.itlMs, tokens: FLOOR.tokens },
  });
}

/** The main thread's profile of a --cpu-prof run (the largest file; the loader's worker writes one too). */
function largestProfile(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f));
  return files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
}

/**
 * The realistic shape, one round: 4,096-token prompts and 256-token replies, the floor
 * sending a prompt of the same size (one fixed text) and the driver its own synthetic
 * ones (building them is its work). Fewer, longer requests: per-request work weighs less per event.
 */
async function floorLongShape(n: number, secs: number, rampS: number): Promise<void> {
  const responder = await streamResponder(FLOOR_LONG);
  const base = `http://127.0.0.1:${responder.ready.port}/v1`;
  try {
    const f = await floorRun(base, n, secs, rampS, 'undici', FLOOR_LONG.promptTokens);
    const s = await chatgateLoad(['stream', '--concurrency', String(n), '--duration', String(secs), '--ramp-up', String(rampS), '--warmup', '5', '--cap-concurrency', String(Math.max(n, 5000)), '--prompt-tokens', String(FLOOR_LONG.promptTokens), '--output-tokens', String(FLOOR_LONG.tokens)], base, join(work, 'fl-long'));
    const events = s.details.sse_events as number;
    if (f.failed > 0 || s.counts.failed > 0 || !events || !f.events) throw new Error(`long-shape round: failures (floor ${f.failed}, driver ${s.counts.failed}) or no events`);
    const fl = ((f.cpu_user_s + f.cpu_system_s) / f.events) * 1e6;
    const dr = ((s.driver.cpu_user_s + s.driver.cpu_system_s) / events) * 1e6;
    console.log(`   the realistic shape (${FLOOR_LONG.promptTokens.toLocaleString('en')}-token prompts, ${FLOOR_LONG.tokens}-token replies, one round): floor ${fl.toFixed(2)}, driver ${dr.toFixed(2)} µs per event: ${(dr / fl).toFixed(3)}x (${f.events} / ${events} events), load average ${loadAverage().join(' ')}`);
    Object.assign(figures, { stream_long_floor_us_per_event: round3(fl), stream_long_driver_us_per_event: round3(dr), stream_long_driver_to_floor_ratio: round3(dr / fl), stream_long_setup: { streams: n, seconds: secs, prompt_tokens: FLOOR_LONG.promptTokens, reply_tokens: FLOOR_LONG.tokens } });
  } finally {
    await responder.close();
  }
}

interface HoldRun { n: number; held: boolean; failed: number; cores: number; elu: number; why: string; ttftErr: number; itlErr: number; perThousand: number; rssMib: number; lateP50: number; lateP99: number; split?: TtftSplit; row: string }

/** Where the TTFT of a step went (medians over its requests.jsonl, ms): which part grew when it drifts. */
interface TtftSplit { driver_lag_ms: number; pool_wait_ms: number; wire_to_headers_ms: number; headers_to_first_token_ms: number; requests: number }

function ttftSplit(out: string): TtftSplit | undefined {
  const file = join(out, 'requests.jsonl');
  if (!existsSync(file)) return undefined;
  const lag: number[] = []; const pool: number[] = []; const toHeaders: number[] = []; const afterHeaders: number[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const r = JSON.parse(line) as { ok?: boolean; intended_ms?: number; sent_ms?: number; wire_ms?: number; headers_ms?: number | null; ttft_ms?: number | null };
    if (!r.ok || r.wire_ms === undefined || typeof r.headers_ms !== 'number' || typeof r.ttft_ms !== 'number') continue;
    lag.push(r.sent_ms! - r.intended_ms!);
    pool.push(r.wire_ms - r.sent_ms!);
    toHeaders.push(r.headers_ms - (r.wire_ms - r.intended_ms!));
    afterHeaders.push(r.ttft_ms - r.headers_ms);
  }
  if (lag.length === 0) return undefined;
  return { driver_lag_ms: round3(median(lag)), pool_wait_ms: round3(median(pool)), wire_to_headers_ms: round3(median(toHeaders)), headers_to_first_token_ms: round3(median(afterHeaders)), requests: lag.length };
}

interface Lateness { writes: number; p50_ms: number; p99_ms: number; max_ms: number }
/**
 * The truth is delivered when the responder's own writes left at most this late
 * (median): half the 5 % band, so a step the driver holds is the driver's doing, and
 * a step that misses because the responder fell behind says so instead of blaming it.
 */
const RESPONDER_LATE_LIMIT = 0.025;

async function holdOnce(base: string, n: number, secs: number, responder: { ask<T>(m: { type: string }, t: string): Promise<T> }): Promise<HoldRun> {
  const cpu0 = await responder.ask<{ user_s: number; system_s: number }>({ type: 'cpu' }, 'cpu');
  await responder.ask<Lateness>({ type: 'late' }, 'late'); // starts the responder's tally afresh
  const t0 = performance.now();
  // Connection setup at up to 2,500 per second: 10,000 streams start over 4 s.
  const rampS = Math.max(1, Math.ceil(n / 2500));
  const out = join(work, `st-${n}-${Date.now()}`);
  const s: Summary = await chatgateLoad(['stream', '--concurrency', String(n), '--duration', String(secs + rampS), '--ramp-up', String(rampS), '--warmup', '5', '--cap-concurrency', String(Math.max(n, 5000))], base, out);
  const split = ttftSplit(out);
  rmSync(out, { recursive: true, force: true });
  const cpu1 = await responder.ask<{ user_s: number; system_s: number }>({ type: 'cpu' }, 'cpu');
  const late = await responder.ask<Lateness>({ type: 'late' }, 'late');
  const responderLate = late.writes === 0 || late.p50_ms > RESPONDER_LATE_LIMIT * HOLD.itlMs;
  const wall = (performance.now() - t0) / 1000;
  const ttft = s.latencies.ttft_ms;
  const itl = s.latencies.itl_ms;
  const ttftErr = Math.abs(ttft.p50_ms - HOLD.ttftMs) / HOLD.ttftMs;
  const itlErr = Math.abs(itl.p50_ms - HOLD.itlMs) / HOLD.itlMs;
  const streamSeconds = (s.latencies.e2e_ms.mean_ms * s.latencies.e2e_ms.count) / 1000;
  const driverCpu = s.driver.cpu_user_s + s.driver.cpu_system_s;
  // Cores per 1,000 concurrent streams = CPU seconds per 1,000 stream-seconds.
  const perThousand = streamSeconds > 0 ? (driverCpu / streamSeconds) * 1000 : 0;
  const responderCores = (cpu1.user_s + cpu1.system_s - cpu0.user_s - cpu0.system_s) / wall;
  const failed = s.counts.failed + (s.failures?.not_sent ?? 0);
  const why = [responderLate ? `the responder's writes left ${late.p50_ms} ms late (median; p99 ${late.p99_ms} ms): the truth was not delivered` : '',
    ttftErr >= 0.05 ? 'TTFT median off by 5% or more' : '', itlErr >= 0.05 ? 'ITL median off by 5% or more' : '', failed > 0 ? `${failed} failed` : '', s.details.peak_concurrent_streams < n ? `only ${s.details.peak_concurrent_streams} streams at once` : ''].filter(Boolean).join(', ');
  const row = `   ${String(n).padStart(6)}  ${fmt(ttft.p50_ms, 8)} ms ${(ttftErr * 100).toFixed(1).padStart(4)} %  ${fmt(itl.p50_ms, 7)} ms ${(itlErr * 100).toFixed(1).padStart(4)} %  ${fmt(ttft.p95_ms, 8)} ms  ${String(s.counts.ok).padStart(9)}  ${String(failed).padStart(6)}  ${s.driver.cpu_cores.toFixed(3).padStart(7)}  ${s.driver.event_loop_utilization.toFixed(2).padStart(4)}  ${perThousand.toFixed(3).padStart(10)}  ${String(s.driver.max_rss_mib).padStart(7)}  ${responderCores.toFixed(3).padStart(9)}  ${`${late.p50_ms.toFixed(1)} / ${late.p99_ms.toFixed(1)}`.padStart(11)}   ${loadAverage()[0]!.toFixed(1).padStart(5)}${why ? `   <- ${why}` : ''}`;
  console.log(row);
  if (split && ttftErr >= 0.05) console.log(`           TTFT split (medians of ${split.requests} requests): driver lag ${split.driver_lag_ms} ms, waiting for a connection ${split.pool_wait_ms} ms, wire to headers ${split.wire_to_headers_ms} ms, headers to first token ${split.headers_to_first_token_ms} ms (the responder waits ${HOLD.ttftMs} ms after the request); the driver's event loop busy ${(s.driver.event_loop_utilization * 100).toFixed(0)} %, its delay p99 ${s.driver.event_loop_delay_p99_ms} ms`);
  return { n, held: !why, failed, cores: s.driver.cpu_cores, elu: s.driver.event_loop_utilization, why, ttftErr, itlErr, perThousand, rssMib: s.driver.max_rss_mib, lateP50: late.p50_ms, lateP99: late.p99_ms, ...(split ? { split } : {}), row };
}

async function benchStreams(): Promise<void> {
  const secs = seconds ?? 8;
  const files = await fileLimit();
  // One socket per stream in the driver (and one in the responder), plus a margin.
  const steps = STREAM_STEPS.filter((n) => n <= maxStreams && n + 500 <= files);
  const responder = await streamResponder(HOLD);
  const base = `http://127.0.0.1:${responder.ready.port}/v1`;
  console.log(`\n4. Streams held: closed loop, N concurrent streams for ${secs} s after the ramp-up; the responder paces the first token at ${HOLD.ttftMs} ms, then one every ${HOLD.itlMs} ms, ${HOLD.tokens} tokens`);
  console.log(`   held = TTFT and ITL medians within 5% of the injected ${HOLD.ttftMs} ms / ${HOLD.itlMs} ms, nothing failed; the largest N held is run ${runs} times in all. Open files allowed: ${files} (steps above ${files - 500} are not tried)`);
  console.log(`   the responder times its own writes: "late" is how late they left (ms, median / p99); a step counts only if that median is within ${RESPONDER_LATE_LIMIT * HOLD.itlMs} ms`);
  console.log('        N   TTFT p50  error   ITL p50  error   TTFT p95   ok streams  failed    cores   ELU  cores/1000  RSS MiB  responder  late p50/p99   load1');
  const ladder: HoldRun[] = [];
  let confirmed: { n: number; held: number; runs: HoldRun[] } | undefined;
  try {
    // Up the ladder while nothing fails outright: past a step that missed only on
    // accuracy it goes on to 10,000 streams, so the driver's cost there is measured too.
    for (const n of steps) {
      const r = await holdOnce(base, n, secs, responder);
      ladder.push(r);
      if (r.failed > 0 || (!r.held && n >= 10_000)) break;
    }
    // Confirm from the top: the largest N that held in every one of `runs` runs.
    const candidates = ladder.filter((r) => r.held).map((r) => r.n).reverse().slice(0, 4);
    for (const n of candidates) {
      const all = [ladder.find((r) => r.n === n)!];
      console.log(`   confirming ${n} streams: ${runs - 1} more runs`);
      while (all.length < runs) {
        const r = await holdOnce(base, n, secs, responder);
        all.push(r);
        if (!r.held) break;
      }
      const heldRuns = all.filter((r) => r.held).length;
      if (heldRuns === runs) {
        confirmed = { n, held: heldRuns, runs: all };
        break;
      }
      console.log(`   ${n} streams held in ${heldRuns} of ${all.length} runs: trying the step below`);
    }
  } finally {
    await responder.close();
  }
  // The driver's cost per 1,000 streams where they flowed at pace (the largest step
  // held; else the first step), and at the top of the climb as measured (there,
  // streams that waited long for their first token count as stream-seconds too, so
  // the per-stream figure flatters: read the cores). Memory: the growth of the peak
  // RSS from the smallest step to the top.
  const first = ladder[0];
  const top = ladder[ladder.length - 1];
  if (first && top) {
    const paced = confirmed ? confirmed.runs : [first];
    const perThousand = median(paced.map((r) => r.perThousand));
    const rssPerThousand = top.n > first.n ? ((top.rssMib - first.rssMib) / (top.n - first.n)) * 1000 : null;
    console.log(`   driver cost: ${perThousand.toFixed(3)} cores per 1,000 concurrent streams at ${paced[0]!.n} streams (${(1000 / HOLD.itlMs).toFixed(0)} tokens/s each); ` +
      `at ${top.n} streams ${top.cores.toFixed(3)} cores in all, peak RSS ${top.rssMib} MiB` +
      (rssPerThousand !== null ? `, ${rssPerThousand.toFixed(1)} MiB per 1,000 streams (RSS growth from ${first.n} streams)` : ''));
    Object.assign(figures, {
      driver_cores_per_1000_streams: round3(perThousand),
      driver_cores_per_1000_streams_at: paced[0]!.n,
      driver_cores_at_top_step: round3(top.cores),
      driver_rss_mib_per_1000_streams: rssPerThousand === null ? null : round3(rssPerThousand),
      driver_max_rss_mib: top.rssMib,
      streams_top_step: top.n,
    });
  }
  if (confirmed) {
    const runsAtN = confirmed.runs;
    console.log(`   result: held ${confirmed.n} concurrent streams in ${confirmed.held} of ${runs} runs${pinning ? ' (driver on CPU 1, responder on CPU 0)' : ' (not pinned)'}, load average ${loadAverage().join(' ')}`);
    Object.assign(figures, {
      streams_held_max: confirmed.n,
      streams_held_runs: `${confirmed.held}/${runs}`,
      streams_held_ttft_error_max_pct: round3(Math.max(...runsAtN.map((r) => r.ttftErr)) * 100),
      streams_held_itl_error_max_pct: round3(Math.max(...runsAtN.map((r) => r.itlErr)) * 100),
    });
  } else {
    console.log(`   result: no step held in ${runs} of ${runs} runs on this machine right now (load average ${loadAverage().join(' ')})`);
    figures.streams_held_max = 0;
  }
  // What one core can read at all at this pace, from section 3's CPU per event (when it ran
  // in this invocation): an undici client cannot hold more streams than its floor allows.
  const perStreamEventsPerS = (HOLD.tokens + 3) / ((HOLD.ttftMs + (HOLD.tokens - 1) * HOLD.itlMs) / 1000);
  const ceiling = (us: unknown) => (typeof us === 'number' && us > 0 ? Math.floor(1e6 / (us * perStreamEventsPerS)) : null);
  const ceilings = { undici_floor: ceiling(figures.stream_floor_us_per_event), socket_floor: ceiling(figures.stream_socket_floor_us_per_event), driver: ceiling(figures.stream_driver_us_per_event) };
  if (ceilings.undici_floor !== null) {
    console.log(`   ceiling: at ${perStreamEventsPerS.toFixed(1)} events per second per stream, one core busy with nothing else reads at most ${ceilings.undici_floor.toLocaleString('en')} streams through undici (the floor's ${(figures.stream_floor_us_per_event as number).toFixed(1)} µs per event, section 3), ` +
      `${ceilings.socket_floor?.toLocaleString('en') ?? '-'} on plain sockets, ${ceilings.driver?.toLocaleString('en') ?? '-'} through the driver; 10,000 streams need at most ${(1e6 / (10_000 * perStreamEventsPerS)).toFixed(1)} µs per event, with no room for bursts`);
    figures.streams_one_core_ceiling = ceilings;
  }
  const stoppedAt = ladder.find((r) => !r.held);
  Object.assign(figures, {
    streams_setup: { ttft_ms: HOLD.ttftMs, itl_ms: HOLD.itlMs, tokens: HOLD.tokens, seconds: secs, pinned: pinning, open_files: Number.isFinite(files) ? files : null },
    streams_ladder: ladder.map((r) => ({ streams: r.n, held: r.held, ttft_error_pct: round3(r.ttftErr * 100), itl_error_pct: round3(r.itlErr * 100), cores_per_1000_streams: round3(r.perThousand), event_loop_utilization: r.elu, ttft_split: r.split, max_rss_mib: r.rssMib, responder_late_p50_ms: r.lateP50, responder_late_p99_ms: r.lateP99, why: r.why || undefined })),
    streams_first_not_held: stoppedAt ? { streams: stoppedAt.n, why: stoppedAt.why } : null,
  });
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

function fmt(n: number, width: number): string {
  return n.toFixed(1).padStart(width);
}

interface Section { name: string; run(): Promise<void> }

/** In order; --only picks by name. One more section is one more line here. */
const SECTIONS: Section[] = [
  { name: 'throughput', run: benchThroughput },
  { name: 'cpu', run: benchCpu },
  { name: 'floor', run: benchFloor },
  { name: 'streams', run: benchStreams },
  { name: 'fuzz', run: async () => { Object.assign(figures, await (await import('./fuzz.ts')).benchFuzz()); } },
  { name: 'workload', run: async () => { Object.assign(figures, await benchWorkload({ chatgateLoad, streamResponder: () => streamResponder(FLOOR), work, seconds, longSeconds, longRate })); } },
  { name: 'rehearsal', run: async () => { Object.assign(figures, await (await import('./rehearsal.ts')).benchRehearsal({ chatgateLoad, streamResponder: () => streamResponder(FLOOR), work, longSeconds, longRate })); } },
];

/** reports/bench/summary.json (the latest run) and reports/bench/<time>.json; prints the change from the previous summary. */
function writeFigures(startedAt: Date, sections: string[]): void {
  mkdirSync(OUT_DIR, { recursive: true });
  const path = join(OUT_DIR, 'summary.json');
  let previous: Record<string, unknown> | undefined;
  try {
    previous = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    previous = undefined;
  }
  const summary = {
    format: 'chatgate-bench-summary',
    format_version: 1,
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    node_version: process.version,
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? null,
    pinned: pinning,
    sections,
    load_average: figures.load_average,
    load_average_end: loadAverage(),
    stream_driver_us_per_event: null, stream_floor_us_per_event: null, stream_driver_to_floor_ratio: null,
    streams_held_max: null, driver_cores_per_1000_streams: null, driver_rss_mib_per_1000_streams: null,
    throughput_ratio_autocannon: null, throughput_ratio_wrk: null,
    ...figures,
  };
  writeFileSync(path, JSON.stringify(summary, null, 2) + '\n');
  writeFileSync(join(OUT_DIR, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`), JSON.stringify(summary, null, 2) + '\n');
  console.log(`\nfigures: ${path}`);
  if (previous) {
    const keys = Object.keys(summary).filter((k) => typeof (summary as Record<string, unknown>)[k] === 'number' && typeof previous![k] === 'number' && k !== 'format_version' && k !== 'cpus');
    console.log(`   against the previous summary (${String(previous.started_at)}, load average ${JSON.stringify(previous.load_average)}):`);
    for (const k of keys) console.log(`   ${k.padEnd(44)} ${String(previous[k]).padStart(10)} -> ${String((summary as Record<string, unknown>)[k])}`);
  }
}

async function main(): Promise<void> {
  const startedAt = new Date();
  figures.load_average = loadAverage();
  console.log(`chatgate bench: node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average ${loadAverage().join(' ')}`);
  if (loadavg()[0]! > cpus().length) console.log('   warning: the machine is busy; figures will be low and noisy (CPU per event and per request hold best)');
  await setUpPinning();
  if (pinning) console.log('   pinning: responder on CPU 0, the tool under test on CPU 1 (taskset)');
  const chosen = SECTIONS.filter((s) => only === undefined || only.includes(s.name));
  if (only && chosen.length !== only.length) throw new Error(`--only: unknown section in ${only.join(',')} (sections: ${SECTIONS.map((s) => s.name).join(', ')})`);
  try {
    for (const section of chosen) await section.run();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  writeFigures(startedAt, chosen.map((s) => s.name));
}

main().then(() => process.exit(0), (err) => {
  console.error(`bench: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
