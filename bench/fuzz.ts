// `npm run bench` section 5, fuzz (or `npx tsx bench/fuzz.ts` alone): the fuzz phase's speed.
// 1. Requests per second of the campaign (the coverage phase and the random one:
//    generation, sending, judging; FUZZ_RUNS=200, FUZZ_CONCURRENCY=4, the defaults) against
//    the reference server in this process, 3 rounds, median, with each phase's request
//    count and the campaign's wall time. Shrinking is not in it: the reference has no defect.
// 2. Its share of a default `npm test` run's wall time: default runs and FUZZ_RUNS=0 runs
//    take turns (2 rounds), share = (default - without) / default, median of the rounds.
//    The fuzz tests run beside the other suites, so this is what the phase adds, not its
//    own duration (which the fuzz tests' observations print).
// Printed, never asserted: the figures depend on the machine and its load.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startReferenceServer } from '../reference/server.ts';
import { HttpClient } from '../lib/http/http-client.ts';
import { FUZZ_DEFAULT_RUNS } from '../lib/run/config.ts';
import { runCampaign } from '../fuzz/campaign.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function campaignRate(seed: number): Promise<{ rate: number; sent: number; coverage: number; ms: number }> {
  const ref = await startReferenceServer({});
  const http = new HttpClient({ baseUrl: ref.url, timeoutMs: 30_000 });
  try {
    const r = await runCampaign({
      send: (s) => http.send(s), auth: { key: ref.keys.main }, models: ['svc-auto', 'svc'], brainId: ref.brainId,
      fuzz: { runs: FUZZ_DEFAULT_RUNS, seed, timeMs: 120_000, concurrency: 4, maxBodyBytes: 64 * 1024, replay: undefined },
    });
    return { rate: (r.summary.sent / r.summary.sendMs) * 1000, sent: r.summary.sent, coverage: r.summary.coverage.sent, ms: r.summary.sendMs };
  } finally {
    await http.close();
    await ref.close();
  }
}

function defaultRun(extra: Record<string, string>): Promise<{ wallMs: number; code: number }> {
  const reports = mkdtempSync(join(tmpdir(), 'chatgate-bench-fuzz-'));
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(process.execPath, [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), join(ROOT, 'bin/chatgate.ts')], {
      cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, REPORTS_DIR: reports, FUZZ_SEED: '1', ...extra }, timeout: 600_000, maxBuffer: 64 * 1024 * 1024,
    }, (err) => {
      const wallMs = performance.now() - started;
      let code = err ? Number((err as { code?: number }).code ?? 1) : 0;
      try { code = JSON.parse(readFileSync(join(reports, 'latest/results.json'), 'utf8')).exitCode; } catch { /* keep the process's */ }
      rmSync(reports, { recursive: true, force: true });
      resolve({ wallMs, code });
    });
  });
}

/** Prints the figures and returns them (snake_case, units in the names) for reports/bench/summary.json. */
export async function benchFuzz(): Promise<{ fuzz_requests_per_second: number; fuzz_share_of_default_run: number }> {
  console.log(`\n5. Fuzz phase (coverage phase, then random): FUZZ_RUNS=${FUZZ_DEFAULT_RUNS}, FUZZ_CONCURRENCY=4 against the reference server in this process, 3 rounds`);
  const rates: number[] = [];
  for (let round = 0; round < 3; round++) {
    const r = await campaignRate(round + 1);
    rates.push(r.rate);
    console.log(`   round ${round + 1}  ${r.sent} requests (${r.coverage} coverage + ${r.sent - r.coverage} random) in ${(r.ms / 1000).toFixed(2)} s  ->  ${r.rate.toFixed(0)} req/s`);
  }
  console.log(`   result: ${median(rates).toFixed(0)} generated requests per second (median), generation and judging included`);
  console.log('   share of a default `npm test` (embedded reference): default runs and FUZZ_RUNS=0 runs take turns, 2 rounds');
  const shares: number[] = [];
  for (let round = 0; round < 2; round++) {
    const withFuzz = await defaultRun({});
    const without = await defaultRun({ FUZZ_RUNS: '0' });
    const share = (withFuzz.wallMs - without.wallMs) / withFuzz.wallMs;
    shares.push(share);
    console.log(`   round ${round + 1}  default ${(withFuzz.wallMs / 1000).toFixed(1)} s (exit ${withFuzz.code})  |  FUZZ_RUNS=0 ${(without.wallMs / 1000).toFixed(1)} s (exit ${without.code})  ->  fuzz adds ${(share * 100).toFixed(0)} %`);
  }
  console.log(`   result: the default fuzz phase adds ${(median(shares) * 100).toFixed(0)} % to a default run's wall time (median of rounds; negative = within the noise)`);
  return { fuzz_requests_per_second: Math.round(median(rates)), fuzz_share_of_default_run: Math.round(median(shares) * 1000) / 1000 };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  benchFuzz().then(() => process.exit(0), (err) => { console.error(`bench: ${(err as Error).stack ?? err}`); process.exit(1); });
}
