// Real k6 runs of every bundle for a few seconds against the embedded reference
// (127.0.0.1 only): thresholds pass against the conformant server (exit 0) and are
// crossed against a seeded defect (exit 99), summaries are written and hold no key.
// Needs a k6 binary on PATH; without one (npm and apt ship none) every test here is
// skipped and says so in its title. The bundles' logic is also covered without k6
// by selftest/unit/k6-scripts.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parse } from 'yaml';
import { build } from 'esbuild';
import { createServer as createHttpServer } from 'node:http';
import { buildK6, K6_DIR, ROOT_DIR, TARGET } from '../../load/k6/build.ts';
import { SSE_CASES, nodeFraming } from '../support/sse-cases.ts';
import { startReferenceServer, type ReferenceServer } from '../../reference/server.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';
import { runProcess } from '../support/run-process.ts';

function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

const k6 = findOnPath('k6');
const SKIPPED = 'k6 run tests: skipped, no k6 binary on PATH';
if (!k6) console.info(`${SKIPPED} (install k6 to run each bundle against the reference)`);
const title = (t: string) => (k6 ? t : `${SKIPPED}: ${t}`);

interface Case { script: string; env: Record<string, string>; defect: string; crossed: string }

// Short, low-rate runs: enough requests to judge, little enough for a 2-core machine.
const CASES: Case[] = [
  { script: 'chat-throughput', env: { RATE: '10', DURATION: '3s' }, defect: 'cc-id-no-prefix', crossed: 'chatgate_body_shape_failures' },
  { script: 'chat-stream', env: { RATE: '5', DURATION: '3s' }, defect: 'stream-wrong-chunk-object', crossed: 'chatgate_body_shape_failures' },
  { script: 'ratelimit-probe', env: { RATE: '30', DURATION: '3s', RECOVERY_MAX_WAIT_S: '5' }, defect: 'ratelimit-429-no-body', crossed: 'chatgate_body_shape_failures' },
  { script: 'brain-mix', env: { RATE: '10', DURATION: '3s' }, defect: 'brain-route-different-shape', crossed: 'chatgate_body_shape_failures' },
];

interface K6Run { code: number | null; stdout: string; stderr: string; dir: string }

let outdir: string;
beforeAll(async () => {
  if (!k6) return;
  outdir = mkdtempSync(join(tmpdir(), 'chatgate-k6-run-'));
  await buildK6({ outdir });
});
afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

/** Runs k6 with these arguments and exactly this environment (plus PATH and HOME). */
function k6Exec(args: string[], env: Record<string, string>, cwd: string): Promise<K6Run> {
  return runProcess(k6!, args, { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? cwd, ...env }, cwd, 50_000).then((r) => ({ ...r, dir: cwd }));
}

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function k6Run(script: string, ref: ReferenceServer, env: Record<string, string>, opts: { base?: boolean } = {}): Promise<K6Run> {
  const dir = mkdtempSync(join(outdir, `${script}-`));
  // Only what k6 needs: no inherited TARGET_URL/keys from the developer's shell; keys in the
  // environment, never on the command line (visible in ps).
  const childEnv: Record<string, string> = {
    TARGET_URL: ref.url,
    API_KEY: ref.keys.main,
    LIMITED_API_KEY: ref.keys.limited,
    RATE_LIMIT_API_KEY: ref.keys.rateLimit,
    BRAIN_ID: ref.brainId,
    SUMMARY_DIR: dir,
    K6_NO_USAGE_REPORT: 'true',
    ...env,
  };
  const args = opts.base ? ['run', '--compatibility-mode=base', '--quiet', '--no-color', join(outdir, 'base', `${script}.js`)] : ['run', '--quiet', '--no-color', join(outdir, `${script}.js`)];
  return k6Exec(args, childEnv, dir);
}

function readSummaries(run: K6Run, script: string) {
  const jsonFile = join(run.dir, `k6-${script}-summary.json`);
  const junitFile = join(run.dir, `k6-${script}-junit.xml`);
  expect(existsSync(jsonFile), `${jsonFile}\n${run.stderr}`).toBe(true);
  expect(existsSync(junitFile)).toBe(true);
  return { json: JSON.parse(readFileSync(jsonFile, 'utf8')), junit: readFileSync(junitFile, 'utf8'), raw: readFileSync(jsonFile, 'utf8') };
}

function expectNoKeys(ref: ReferenceServer, ...texts: string[]): void {
  for (const key of Object.values(ref.keys)) for (const t of texts) expect(t.includes(key), 'a key was written').toBe(false);
}

describe('k6 run against the embedded reference', () => {
  for (const c of CASES) {
    it.skipIf(!k6)(title(`${c.script}: thresholds pass against the conformant reference (exit 0)`), async () => {
      const ref = await startReferenceServer({});
      try {
        const run = await k6Run(c.script, ref, c.env);
        expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
        const { json, junit, raw } = readSummaries(run, c.script);
        expect(json.result).toBe('pass');
        expect(json.thresholds.length).toBeGreaterThan(0);
        expect(junit).not.toContain('<failure');
        expect(run.stdout).toContain(`chatgate k6 · ${c.script}`);
        expect(run.stdout).toContain('PASS');
        expect(json.metrics.http_reqs.values.count).toBeGreaterThanOrEqual(5);
        expectNoKeys(ref, run.stdout, run.stderr, raw, junit);
      } finally {
        await ref.close();
      }
    });

    it.skipIf(!k6)(title(`${c.script}: ${c.crossed} crossed against defect ${c.defect} (exit 99)`), async () => {
      const ref = await startReferenceServer({ defect: c.defect });
      try {
        const run = await k6Run(c.script, ref, c.env);
        expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(99);
        const { json, junit, raw } = readSummaries(run, c.script);
        expect(json.result).toBe('fail');
        expect(json.thresholds.filter((t: { ok: boolean }) => !t.ok).map((t: { metric: string }) => t.metric)).toContain(c.crossed);
        expect(junit).toContain('<failure type="threshold"');
        expect(run.stdout).toContain('FAIL');
        expectNoKeys(ref, run.stdout, run.stderr, raw, junit);
      } finally {
        await ref.close();
      }
    });
  }
});

describe('k6 run --compatibility-mode=base on the CommonJS bundles (dist/base/: no Babel at start-up)', () => {
  for (const c of CASES) {
    it.skipIf(!k6)(title(`${c.script}: runs in base mode, thresholds pass against the reference (exit 0)`), async () => {
      const ref = await startReferenceServer({});
      try {
        const run = await k6Run(c.script, ref, c.env, { base: true });
        expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
        expect(readSummaries(run, c.script).json.result).toBe('pass');
      } finally {
        await ref.close();
      }
    });
  }
});

describe('k6 run: what the operator and a user without a reachable target see', () => {
  it.skipIf(!k6)(title('the operator\'s sequence, k6 archive (runner env as -e, keys only in the process environment) then k6 run archive.tar: exit 0, no key in the archive'), async () => {
    const ref = await startReferenceServer({});
    try {
      const dir = mkdtempSync(join(outdir, 'archive-'));
      const tr = parse(readFileSync(join(K6_DIR, 'operator', 'testrun.yaml'), 'utf8'));
      // What the initializer passes: every runner env entry as -e (TARGET_URL pointed at the reference, short load).
      const runnerEnv: Record<string, string> = Object.fromEntries((tr.spec.runner.env as Array<{ name: string; value: string }>).map((e) => [e.name, e.value]));
      Object.assign(runnerEnv, { TARGET_URL: ref.url, RATE: '5', DURATION: '2s', VUS: '2', MAX_VUS: '4', SUMMARY_DIR: dir });
      const secrets = { API_KEY: ref.keys.main, RATE_LIMIT_API_KEY: ref.keys.rateLimit, LIMITED_API_KEY: ref.keys.limited };
      const eArgs = Object.entries(runnerEnv).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
      const archive = await k6Exec(['archive', ...eArgs, '-O', join(dir, 'archive.tar'), join(outdir, tr.spec.script.configMap.file)], { ...secrets, K6_NO_USAGE_REPORT: 'true' }, dir);
      expect(archive.code, `${archive.stdout}\n${archive.stderr}`).toBe(0);
      const tar = readFileSync(join(dir, 'archive.tar'));
      expect(tar.length).toBeGreaterThan(10_000);
      for (const key of Object.values(secrets)) expect(tar.includes(Buffer.from(key)), 'a key was written into the archive').toBe(false);
      // The runner: k6 run on the archive, keys from its environment (envFrom).
      const run = await k6Exec(['run', '--quiet', '--no-color', join(dir, 'archive.tar')], { ...secrets, K6_NO_USAGE_REPORT: 'true' }, dir);
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout).toContain('chatgate k6 · chat-throughput');
      expectNoKeys(ref, run.stdout, run.stderr);
    } finally {
      await ref.close();
    }
  }, HANG_GUARD_MS);

  it.skipIf(!k6)(title('a target that gives no HTTP answer: setup stops the run with one line (cause, k6 error 1212, fix), no summary files'), async () => {
    const dir = mkdtempSync(join(outdir, 'refused-'));
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const run = await k6Exec(['run', '--quiet', '--no-color', join(outdir, 'chat-throughput.js')], { TARGET_URL: url, API_KEY: 'sk-unreachable-0123456789', SUMMARY_DIR: dir, K6_NO_USAGE_REPORT: 'true' }, dir);
    // 108: exec.test.abort (k6 >= 0.35); 107: the exception fallback of older k6.
    expect([107, 108], `${run.stdout}\n${run.stderr}`).toContain(run.code);
    expect(run.stderr + run.stdout).toMatch(/gave no HTTP answer to GET \/models: connection refused \(k6 error 1212/);
    expect(run.stdout).toContain('NOT RUN');
    // k6 prints its error line (the cause) after the summary, and the summary says so.
    expect(run.stdout).toContain('k6 prints the reason next');
    expect(readdirSync(dir)).toEqual([]);
    expect(run.stderr + run.stdout).not.toContain('sk-unreachable-0123456789');
  }, HANG_GUARD_MS);

  it.skipIf(!k6)(title('one SSE framing in a real k6: the bundled reader gives the Node reader\'s events, problems and stats for the same bytes over HTTP'), async () => {
    // A loopback server writes each case's bytes in its pieces; a k6 script built like the
    // bundles reads them with k6/http and load/k6/lib/sse.ts and hands the results back
    // through setup() data in its summary.
    const srv = createHttpServer((req, res) => {
      const c = SSE_CASES[Number((req.url ?? '').split('/').pop())];
      if (!c) { res.writeHead(404).end(); return; }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const p of c.pieces) res.write(p);
      res.end();
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    try {
      const dir = mkdtempSync(join(outdir, 'framing-'));
      const entry = [
        "import http from 'k6/http';",
        "import { SseTextReader } from './load/k6/lib/sse.ts';",
        'export const options = { vus: 1, iterations: 1 };',
        'export function setup() {',
        '  const out = [];',
        '  for (let i = 0; i < Number(__ENV.CASES); i++) {',
        "    const res = http.get(`${__ENV.BASE}/case/${i}`, { responseType: 'text' });",
        '    const r = new SseTextReader(5);',
        '    const events = r.push(res.body);',
        '    r.end();',
        // As JSON text: k6 passes setup data through Go, which would turn absent keys into null.
        '    out.push(JSON.stringify({ events, problems: r.problems, stats: r.stats }));',
        '  }',
        '  return out;',
        '}',
        'export default function () {}',
        'export function handleSummary(data) { return { stdout: JSON.stringify(data.setup_data) }; }',
      ].join('\n');
      const script = join(dir, 'framing.js');
      const r = await build({ stdin: { contents: entry, resolveDir: ROOT_DIR, sourcefile: 'framing.ts', loader: 'ts' }, bundle: true, format: 'esm', platform: 'neutral', mainFields: ['module', 'main'], target: TARGET, external: ['k6', 'k6/*'], write: false, logLevel: 'silent', absWorkingDir: ROOT_DIR });
      writeFileSync(script, r.outputFiles[0]!.text);
      const port = (srv.address() as { port: number }).port;
      const run = await k6Exec(['run', '--quiet', '--no-color', script], { BASE: `http://127.0.0.1:${port}`, CASES: String(SSE_CASES.length), K6_NO_USAGE_REPORT: 'true' }, dir);
      expect(run.code, run.stderr).toBe(0);
      const got = (JSON.parse(run.stdout) as string[]).map((t) => JSON.parse(t) as unknown);
      expect(got).toHaveLength(SSE_CASES.length);
      SSE_CASES.forEach((c, i) => expect(got[i], c.name).toEqual(JSON.parse(JSON.stringify(nodeFraming(c.pieces)))));
    } finally {
      await new Promise<void>((r) => srv.close(() => r()));
    }
  }, HANG_GUARD_MS);

  it.skipIf(!k6)(title('a configuration error (TARGET_URL without /v1): exit 107, the one chatgate line, no JavaScript stack trace'), async () => {
    const dir = mkdtempSync(join(outdir, 'config-'));
    const run = await k6Exec(['run', '--quiet', '--no-color', join(outdir, 'chat-throughput.js')], { TARGET_URL: 'http://127.0.0.1:9/api', API_KEY: 'sk-config-0123456789', K6_NO_USAGE_REPORT: 'true' }, dir);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(107);
    expect(run.stderr).toMatch(/chatgate k6: TARGET_URL: path \\"\/api\\" does not end with \/v1 \(VER-1\)/);
    // k6 logs an uncaught Error with "\n\tat <function> (file:...)" frames; a ConfigError has none.
    expect(run.stderr).not.toMatch(/\\tat |\bat targetConfig\b|ConfigError:/);
  }, HANG_GUARD_MS);
});

describe('k6 sees cross-talk (SVC-9) in a distributed run too', () => {
  // A swap of two replies in flight, and a reply cache one request behind (no concurrency needed).
  it.skipIf(!k6).each(['replies-swapped-under-concurrency', 'reply-of-previous-request'] as const)(title('chat-stream: chatgate_cross_talk crossed against defect %s (exit 99)'), async (defect) => {
    const ref = await startReferenceServer({ defect });
    try {
      const run = await k6Run('chat-stream', ref, { RATE: '20', DURATION: '3s' });
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(99);
      const { json } = readSummaries(run, 'chat-stream');
      expect(json.thresholds.filter((t: { ok: boolean }) => !t.ok).map((t: { metric: string }) => t.metric)).toContain('chatgate_cross_talk');
      expect(run.stderr + run.stdout).toMatch(/a reply was another request's \(SVC-9\): the reply carries another request's canary CG\w{10}, not its own CG\w{10}/);
    } finally {
      await ref.close();
    }
  });
});
