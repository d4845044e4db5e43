// `npm run bench`: the load harness's own speed, measured on this machine, printed
// (never asserted: the figures depend on the machine).
//
// 1. Throughput: req/s of the `throughput` scenario (closed loop, 10 connections)
//    against a minimal loopback responder, as a ratio to the autocannon CLI and to
//    wrk (one thread) on the same responder, same connections, same time. The tools
//    take turns for 5 rounds; the ratio is the median of the rounds' ratios (a shared
//    machine's speed drifts between rounds more than between neighbouring runs).
// 2. CPU per request: the throughput scenario and plain autocannon (the CLI's engine,
//    no hooks) in this one process, interleaved, CPU time per answered request. Much
//    steadier than req/s on a shared machine: other processes take wall time away,
//    not CPU time.
// 3. Streams: the `stream` scenario holds N concurrent streams (closed loop) against a
//    responder that paces exactly (first token at 200 ms, then one every 50 ms, 40
//    tokens); N grows until the measured TTFT median is off by 5% or more (or
//    anything fails). Reported: the largest N held, and the driver's CPU per 1,000
//    concurrent streams (driver CPU seconds / stream-seconds x 1000).
//
// Options: --only throughput|cpu|streams|fuzz (4. the fuzz phase, bench/fuzz.ts), --seconds N (per measurement), --pin.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { forkTs, TSX_LOADER } from '../load/ts-child.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const AUTOCANNON = join(ROOT, 'node_modules/.bin/autocannon');
const CONNECTIONS = 10;
const ROUNDS = 5;
const KEY = 'sk-bench-0000000000000000';
const BODY = JSON.stringify({ model: 'svc-auto', messages: [{ role: 'user', content: 'Write one short sentence about load testing. (request 0)' }] });
const STREAM_STEPS = [250, 500, 1000, 1500, 2000, 2500, 3000, 4000, 5000, 6000, 8000];
const TTFT_MS = 200;
const ITL_MS = 50;
const TOKENS = 40;

const args = process.argv.slice(2);
const only = valueOf('--only');
const seconds = valueOf('--seconds') === undefined ? undefined : Number(valueOf('--seconds'));
const work = mkdtempSync(join(tmpdir(), 'chatgate-bench-'));

function valueOf(flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i === -1 ? undefined : args[i + 1];
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
  pinning = args.includes('--pin') && cpus().length >= 2 && (await have('taskset', ['-V']));
}
function pinned(cmd: string, argv: string[]): [string, string[]] {
  return pinning ? ['taskset', ['-c', '1', cmd, ...argv]] : [cmd, argv];
}
async function pinResponder(pid: number): Promise<void> {
  if (pinning) await run('taskset', ['-a', '-p', '-c', '0', String(pid)]);
}

/** The load harness itself, as `npm run load` runs it, in a fresh process. */
async function chatgateLoad(argv: string[], baseUrl: string, out: string): Promise<Record<string, any>> {
  const r = await run(...pinned(process.execPath, ['--import', TSX_LOADER, join(ROOT, 'bin/load.ts'), ...argv, '--quiet', '--out', out]),
    { ...process.env, TARGET_URL: baseUrl, API_KEY: KEY }, 300_000);
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
  console.log('   note: on a small machine the responder may be the limit for all tools alike; the ratio then says "no slower", not "as fast".');
}

async function benchCpu(): Promise<void> {
  const secs = seconds ?? 3;
  const responder = await forkTs<{ port: number; pid: number }>(join(ROOT, 'bench/json-responder.ts'));
  const base = `http://127.0.0.1:${responder.ready.port}`;
  const { default: autocannon } = await import('autocannon');
  const { executeRun } = await import('../load/run.ts');
  const { parseArgs } = await import('../load/options.ts');
  const { loadConfig } = await import('../lib/config.ts');
  const { remoteTarget } = await import('../load/target.ts');
  const { StopToken } = await import('../load/stop.ts');
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
}

async function benchStreams(): Promise<void> {
  const secs = seconds ?? 8;
  const responder = await forkTs<{ port: number; pid: number }>(join(ROOT, 'bench/stream-responder.ts'),
    { ...process.env, TTFT_MS: String(TTFT_MS), ITL_MS: String(ITL_MS), TOKENS: String(TOKENS) });
  await pinResponder(responder.ready.pid);
  const base = `http://127.0.0.1:${responder.ready.port}/v1`;
  console.log(`\n3. Streams: closed loop, N concurrent streams for ${secs} s (ramp-up 2 s); responder paces the first token at ${TTFT_MS} ms, then one every ${ITL_MS} ms, ${TOKENS} tokens`);
  console.log('        N   TTFT p50   error   TTFT p95   ITL p50   ok streams  failed  driver cores  cores/1000 streams  responder cores');
  let held: { n: number; perThousand: number } | undefined;
  for (const n of STREAM_STEPS) {
    const cpu0 = await responder.ask<{ user_s: number; system_s: number }>({ type: 'cpu' }, 'cpu');
    const t0 = performance.now();
    const s = await chatgateLoad(['stream', '--concurrency', String(n), '--duration', String(secs), '--ramp-up', '2', '--warmup', '5', '--cap-concurrency', String(Math.max(n, 5000))], base, join(work, `st-${n}`));
    const cpu1 = await responder.ask<{ user_s: number; system_s: number }>({ type: 'cpu' }, 'cpu');
    const wall = (performance.now() - t0) / 1000;
    const ttft = s.latencies.ttft_ms;
    const err = Math.abs(ttft.p50_ms - TTFT_MS) / TTFT_MS;
    const streamSeconds = (s.latencies.e2e_ms.mean_ms * s.latencies.e2e_ms.count) / 1000;
    const driverCpu = s.driver.cpu_user_s + s.driver.cpu_system_s;
    // Cores per 1,000 concurrent streams = CPU seconds per 1,000 stream-seconds.
    const perThousand = streamSeconds > 0 ? (driverCpu / streamSeconds) * 1000 : 0;
    const responderCores = (cpu1.user_s + cpu1.system_s - cpu0.user_s - cpu0.system_s) / wall;
    const ok = err < 0.05 && s.counts.failed === 0;
    console.log(`   ${String(n).padStart(6)}  ${fmt(ttft.p50_ms, 8)} ms  ${(err * 100).toFixed(1).padStart(4)} %  ${fmt(ttft.p95_ms, 7)} ms  ${fmt(s.latencies.itl_ms.p50_ms, 6)} ms  ${String(s.counts.ok).padStart(11)}  ${String(s.counts.failed).padStart(6)}  ${s.driver.cpu_cores.toFixed(3).padStart(12)}  ${perThousand.toFixed(3).padStart(18)}  ${responderCores.toFixed(3).padStart(15)}${ok ? '' : '   <- TTFT error >= 5% or failures'}`);
    if (!ok) break;
    held = { n, perThousand };
  }
  await responder.close();
  if (held) {
    console.log(`   result: held ${held.n} concurrent streams with the TTFT median within 5%${pinning ? ' (driver on one core, responder on the other)' : ''}; driver CPU ${held.perThousand.toFixed(3)} cores per 1,000 concurrent streams (${(1000 / ITL_MS).toFixed(0)} tokens/s each)`);
  } else {
    console.log(`   result: not even ${STREAM_STEPS[0]} streams held within 5% on this machine right now`);
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

function fmt(n: number, width: number): string {
  return n.toFixed(1).padStart(width);
}

async function main(): Promise<void> {
  const load = loadavg().map((l) => l.toFixed(2)).join(' ');
  console.log(`chatgate bench: node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average ${load}`);
  if (loadavg()[0]! > cpus().length) console.log('   warning: the machine is busy; figures will be low and noisy');
  await setUpPinning();
  if (pinning) console.log('   pinning: responder on CPU 0, the tool under test on CPU 1 (taskset)');
  try {
    if (only === undefined || only === 'throughput') await benchThroughput();
    if (only === undefined || only === 'cpu') await benchCpu();
    if (only === undefined || only === 'streams') await benchStreams();
    // --- issue 11: the fuzz phase's req/s and its share of a default run (bench/fuzz.ts) ---
    if (only === undefined || only === 'fuzz') await (await import('./fuzz.ts')).benchFuzz();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(`bench: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
