// load/k6/operator/testrun.yaml against the k6-operator's own TestRun definition (the
// part of its CRD vendored in load/k6/operator/testrun.schema.json, source noted
// there), and the rules that keep keys out of it: no initializer (its `k6 archive`
// sees only `env` and would need keys on the command line or archived), keys only
// from a Secret, no usage report. A cluster is not needed for any of this; what a
// real `k6 archive` writes is checked in selftest/e2e/k6-run.test.ts where k6 exists.
// testrun-sse-out.yaml keeps each runner's `--out json` output on a claim: its runner
// pods are played by real k6-sse processes where one exists (skipped otherwise).
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import { parse, parseAllDocuments } from 'yaml';
import { buildK6, K6_DIR } from '../../load/k6/build.ts';
import { mergeMain } from '../../load/report/merge.ts';
import { startReferenceServer } from '../../reference/server.ts';
import { findBin, operatorSegmentArgs } from '../support/k6-merge-segments.ts';
import { runProcess } from '../support/run-process.ts';

const k6sse = findBin('k6-sse', 'K6_SSE_BIN');

/** One k6 process to its end (killed after 60 s): its exit status and output. */
const runPod = (bin: string, args: string[], env: Record<string, string>, cwd: string) =>
  runProcess(bin, args, env, cwd, 60_000).then((r) => ({ status: r.code, stdout: r.stdout, stderr: r.stderr }));


const schema = JSON.parse(readFileSync(join(K6_DIR, 'operator', 'testrun.schema.json'), 'utf8'));
const manifest = parse(readFileSync(join(K6_DIR, 'operator', 'testrun.yaml'), 'utf8'));
// Draft-07, strict: an unknown keyword in the vendored schema is an error, not ignored.
const validate = new Ajv({ strict: true, allErrors: true }).compile(schema);
const errors = (doc: unknown) => (validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`));
const copy = () => JSON.parse(JSON.stringify(manifest));

describe('testrun.yaml against the TestRun CRD (k6.io/v1alpha1)', () => {
  it('is valid', () => {
    expect(errors(manifest)).toEqual([]);
  });

  it('the vendored schema rejects what the API server would drop or refuse (the check can fail)', () => {
    const typo = copy();
    typo.spec.intializer = typo.spec.initializer;
    delete typo.spec.initializer;
    expect(errors(typo).join('\n')).toMatch(/must NOT have additional properties.*intializer/);
    const badPod = copy();
    badPod.spec.runner.envFrom = [{ secret: { name: 'x' } }];
    expect(errors(badPod).join('\n')).toMatch(/envFrom\/0 must NOT have additional properties/);
    const noScript = copy();
    delete noScript.spec.script;
    expect(errors(noScript).join('\n')).toMatch(/must have required property 'script'/);
    const stringParallelism = copy();
    stringParallelism.spec.parallelism = '4';
    expect(errors(stringParallelism).join('\n')).toMatch(/parallelism must be integer/);
    const numberEnv = copy();
    numberEnv.spec.runner.env[0].value = 200;
    expect(errors(numberEnv).join('\n')).toMatch(/env\/0\/value must be string/);
  });
});

describe('no key in the TestRun or in any k6 archive', () => {
  const env = Object.fromEntries((manifest.spec.runner.env as Array<{ name: string; value: string }>).map((e) => [e.name, e.value]));

  it('the initializer (k6 archive + k6 inspect) is disabled', () => {
    expect(manifest.spec.initializer).toEqual({ disabled: true });
  });

  it('keys come from a Secret through envFrom; env holds no key', () => {
    expect(manifest.spec.runner.envFrom).toEqual([{ secretRef: { name: expect.any(String) } }]);
    for (const name of Object.keys(env)) expect(name, 'a key under env is readable by anyone who can get the TestRun').not.toMatch(/KEY|TOKEN|SECRET|PASSWORD/i);
    expect(JSON.stringify(manifest.spec)).not.toMatch(/--include-system-env-vars|\s-e\s|--env\b/);
  });

  it('TARGET_URL is set in env (the init code needs it; it is not a secret) and ends in /v1', () => {
    expect(env.TARGET_URL).toMatch(/^https:\/\/[^/]+\/v1$/);
  });

  it('k6 does not phone home (K6_NO_USAGE_REPORT); pod files vanish, so summaries go to the log', () => {
    expect(env.K6_NO_USAGE_REPORT).toBe('true');
    expect(env.SUMMARY_DIR).toBe('none');
    // No flag in arguments that `k6 archive` would not know, should an initializer run after all.
    expect(manifest.spec.arguments ?? '').not.toContain('--no-usage-report');
  });

  it('the comment block names the Secret the manifest reads and the same keys the scripts read', () => {
    const text = readFileSync(join(K6_DIR, 'operator', 'testrun.yaml'), 'utf8');
    expect(text).toContain(`kubectl create secret generic ${manifest.spec.runner.envFrom[0].secretRef.name}`);
    expect(text).toContain(`kubectl create configmap ${manifest.spec.script.configMap.name} --from-file=load/k6/dist/${manifest.spec.script.configMap.file}`);
    for (const key of ['API_KEY', 'RATE_LIMIT_API_KEY']) expect(text).toContain(`--from-literal=${key}=`);
  });
});

describe('testrun-sse.yaml (chat-stream-sse on a custom runner image) and its Dockerfile', () => {
  const file = join(K6_DIR, 'operator', 'testrun-sse.yaml');
  const text = readFileSync(file, 'utf8');
  const sse = parse(text);
  const env = Object.fromEntries((sse.spec.runner.env as Array<{ name: string; value: string }>).map((e) => [e.name, e.value]));
  const dockerfile = readFileSync(join(K6_DIR, 'operator', 'Dockerfile.k6-sse'), 'utf8');
  const arg = (name: string) => new RegExp(`^ARG ${name}=(\\S+)$`, 'm').exec(dockerfile)?.[1];

  it('is valid against the TestRun CRD, and the same schema rejects a broken copy', () => {
    expect(errors(sse)).toEqual([]);
    const broken = JSON.parse(JSON.stringify(sse));
    broken.spec.runner.imagee = broken.spec.runner.image;
    expect(errors(broken).join('\n')).toMatch(/must NOT have additional properties.*imagee/);
  });

  it('runs chat-stream-sse.js on a runner image that is not stock k6, with the same key rules as testrun.yaml', () => {
    expect(sse.spec.script.configMap.file).toBe('chat-stream-sse.js');
    expect(sse.spec.runner.image).not.toMatch(/^grafana\/k6(:|$)|:latest$/);
    expect(sse.spec.initializer).toEqual({ disabled: true });
    expect(sse.spec.runner.envFrom).toEqual([{ secretRef: { name: expect.any(String) } }]);
    for (const name of Object.keys(env)) expect(name).not.toMatch(/KEY|TOKEN|SECRET|PASSWORD/i);
    expect(env.TARGET_URL).toMatch(/^https:\/\/[^/]+\/v1$/);
    expect(env).toMatchObject({ K6_NO_USAGE_REPORT: 'true', SUMMARY_DIR: 'none' });
    expect(env.TTFT_P95_MS).toMatch(/^\d+$/);
    expect(env.ITL_P95_MS).toMatch(/^\d+$/);
    expect(text).toContain(`kubectl create configmap ${sse.spec.script.configMap.name} --from-file=load/k6/dist/chat-stream-sse.js`);
    expect(text).toContain(`-t ${sse.spec.runner.image} .`);
  });

  it('the Dockerfile pins every version: Go image, xk6, k6 and xk6-sse, and the base image', () => {
    expect(arg('GO_VERSION')).toMatch(/^\d+\.\d+\.\d+$/);
    expect(arg('XK6_VERSION')).toMatch(/^v\d+\.\d+\.\d+$/);
    expect(arg('K6_VERSION')).toMatch(/^v1\.\d+\.\d+$/);
    expect(arg('XK6_SSE_VERSION')).toMatch(/^v\d+\.\d+\.\d+$/);
    expect(dockerfile).toMatch(/xk6 build --k6-version \$\{K6_VERSION\} \\\n\s+--with github\.com\/phymbert\/xk6-sse@\$\{XK6_SSE_VERSION\}/);
    expect(dockerfile).toContain('go install go.k6.io/xk6@${XK6_VERSION}');
    expect(dockerfile).not.toMatch(/@latest|:latest/);
    // The runtime image is the official one of the same k6 version.
    expect(dockerfile).toContain(`FROM grafana/k6:${arg('K6_VERSION')!.slice(1)}`);
    // The image tag in the manifest names the same k6 and extension versions.
    expect(sse.spec.runner.image).toContain(`${arg('K6_VERSION')!.slice(1)}-${arg('XK6_SSE_VERSION')!.slice(1)}`);
  });
});

describe('the manifests produce what `npm run load -- merge` needs', () => {
  for (const name of ['testrun.yaml', 'testrun-sse.yaml']) {
    const text = readFileSync(join(K6_DIR, 'operator', name), 'utf8');
    const doc = parse(text);
    const entries = doc.spec.runner.env as Array<{ name: string; value?: string; valueFrom?: unknown }>;
    const env = Object.fromEntries(entries.map((e) => [e.name, e.value]));

    it(`${name}: each runner prints its JSON summary on stdout, tagged with the test id and its own runner name`, () => {
      expect(env).toMatchObject({ SUMMARY_DIR: 'none', SUMMARY_STDOUT: '1' });
      // testid groups the runners (and names the test in each summary); runner keeps their series apart in an output.
      expect(env.K6_TAGS).toBe(`testid:${doc.metadata.name},runner:$(POD_NAME)`);
      // Kubernetes expands $(POD_NAME) only from a variable defined before it.
      const pod = entries.findIndex((e) => e.name === 'POD_NAME');
      expect(pod).toBeGreaterThanOrEqual(0);
      expect(pod).toBeLessThan(entries.findIndex((e) => e.name === 'K6_TAGS'));
      expect(entries[pod]!.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
      // A --tag on the command line would replace K6_TAGS' tags.
      expect(doc.spec.arguments ?? '').not.toMatch(/--tag\b/);
    });

    it(`${name}: the pods stay until their logs are collected, and the comment block gives the collect and merge commands`, () => {
      expect(doc.spec.cleanup).toBeUndefined();
      expect(text).toContain(`kubectl logs -l k6_cr=${doc.metadata.name},runner=true --tail=-1 --max-log-requests=${doc.spec.parallelism} > runners.log`);
      expect(text).toContain('npm run load -- merge runners.log');
    });
  }
});

describe('testrun-sse-out.yaml and results-pvc.yaml: the runners\' --out json outputs kept for the merge', () => {
  const file = join(K6_DIR, 'operator', 'testrun-sse-out.yaml');
  const text = readFileSync(file, 'utf8');
  const out = parse(text);
  const entries = out.spec.runner.env as Array<{ name: string; value?: string; valueFrom?: unknown }>;
  const env = Object.fromEntries(entries.map((e) => [e.name, e.value]));
  const pvcText = readFileSync(join(K6_DIR, 'operator', 'results-pvc.yaml'), 'utf8');
  const [pvc, reader] = parseAllDocuments(pvcText).map((d) => d.toJSON());
  const mount = out.spec.runner.volumeMounts[0] as { name: string; mountPath: string };
  const volume = (out.spec.runner.volumes as Array<{ name: string; persistentVolumeClaim?: { claimName: string } }>).find((v) => v.name === mount.name);

  it('is valid against the TestRun CRD; a misspelt mount or claim field is refused', () => {
    expect(errors(out)).toEqual([]);
    const badMount = JSON.parse(JSON.stringify(out));
    badMount.spec.runner.volumeMounts[0].mountpath = '/results';
    delete badMount.spec.runner.volumeMounts[0].mountPath;
    expect(errors(badMount).join('\n')).toMatch(/volumeMounts\/0 must have required property 'mountPath'/);
    const badClaim = JSON.parse(JSON.stringify(out));
    badClaim.spec.runner.volumes[0].persistentVolumeClaim = { claimname: 'x' };
    expect(errors(badClaim).join('\n')).toMatch(/persistentVolumeClaim must have required property 'claimName'/);
    const badGroup = JSON.parse(JSON.stringify(out));
    badGroup.spec.runner.securityContext.fsGroup = '12345';
    expect(errors(badGroup).join('\n')).toMatch(/fsGroup must be integer/);
  });

  it('keeps the key rules of the other manifests and writes one JSON output per pod into the mounted claim', () => {
    expect(out.spec.initializer).toEqual({ disabled: true });
    expect(out.spec.runner.envFrom).toEqual([{ secretRef: { name: expect.any(String) } }]);
    for (const name of Object.keys(env)) expect(name).not.toMatch(/KEY|TOKEN|SECRET|PASSWORD/i);
    expect(out.spec.script.configMap.file).toBe('chat-stream-sse.js');
    expect(env).toMatchObject({ K6_NO_USAGE_REPORT: 'true', SUMMARY_DIR: 'none', SUMMARY_STDOUT: '1', SLICE: '5s' });
    expect(env.K6_TAGS).toBe(`testid:${out.metadata.name},runner:$(POD_NAME)`);
    // K6_OUT (k6's --out) names the pod, in the mount; $(POD_NAME) expands only from a variable defined before it.
    expect(env.K6_OUT).toBe(`json=${mount.mountPath}/$(POD_NAME).ndjson`);
    expect(entries.findIndex((e) => e.name === 'POD_NAME')).toBeLessThan(entries.findIndex((e) => e.name === 'K6_OUT'));
    expect(out.spec.arguments ?? '').not.toMatch(/--out\b|--tag\b/);
    expect(volume?.persistentVolumeClaim?.claimName).toBe(pvc.metadata.name);
    // k6's user in grafana/k6 (the runner image's base) can write to the claim.
    expect(out.spec.runner.securityContext).toEqual({ fsGroup: 12345 });
    expect(out.spec.cleanup).toBeUndefined();
  });

  it('the claim is ReadWriteMany (runners on separate nodes) and its reader pod mounts it where the commands read it', () => {
    expect(out.spec.separate).toBe(true);
    expect(pvc).toMatchObject({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', spec: { accessModes: ['ReadWriteMany'] } });
    expect(reader).toMatchObject({ apiVersion: 'v1', kind: 'Pod' });
    const c = reader.spec.containers[0];
    expect(c.image).toMatch(/^busybox:\d+\.\d+\.\d+$/);
    const rv = (reader.spec.volumes as Array<{ name: string; persistentVolumeClaim?: { claimName: string } }>).find((v) => v.name === c.volumeMounts[0].name);
    expect(rv?.persistentVolumeClaim?.claimName).toBe(pvc.metadata.name);
    const dir = c.volumeMounts[0].mountPath;
    for (const t of [text, pvcText]) {
      expect(t).toContain(`kubectl cp ${reader.metadata.name}:${dir} ./results`);
      expect(t).toMatch(/npm run load -- merge runners\.log results --out /);
    }
    expect(text).toContain(`kubectl logs -l k6_cr=${out.metadata.name},runner=true --tail=-1 --max-log-requests=${out.spec.parallelism} > runners.log`);
    expect(text).toContain('kubectl apply -f load/k6/operator/results-pvc.yaml');
  });

  // The runner pods as the operator starts them, without a cluster: real k6-sse processes with the
  // manifest's environment ($(VAR) expanded as Kubernetes does), its segment arguments, the mount a
  // folder; then the documented collection (the logs, the claim's files) and merge.
  it.skipIf(!k6sse)(k6sse ? 'two runner pods\' logs and outputs merge into one summary with per-slice figures' : 'skipped, no k6 with xk6-sse (K6_SSE_BIN or k6-sse on PATH)', async () => {
    const work = mkdtempSync(join(tmpdir(), 'chatgate-k6-operator-'));
    const ref = await startReferenceServer({ latency: { ttftMs: 5, itlMs: 2 }, replyWords: 4 });
    try {
      await buildK6({ outdir: join(work, 'dist'), scripts: ['chat-stream-sse'] });
      const claim = join(work, 'claim');
      mkdirSync(claim);
      let log = '';
      for (let i = 1; i <= 2; i++) {
        const pod: Record<string, string> = {};
        for (const e of entries) {
          // Kubernetes expands $(NAME) from the variables defined before it; the downward API gives POD_NAME.
          const value = e.valueFrom ? `${out.metadata.name}-${i - 1}-x${i}` : (e.value ?? '').replace(/\$\(([A-Z_]+)\)/g, (m, n: string) => pod[n] ?? m);
          pod[e.name] = value;
        }
        // Loopback, bounded: the reference instead of staging, 2 s at 8 streams/s, the mount a folder.
        Object.assign(pod, { TARGET_URL: ref.url, RATE: '8', DURATION: '2s', VUS: '4', MAX_VUS: '8', MODELS: 'svc', SLICE: '1s', K6_OUT: pod.K6_OUT!.replace(`json=${mount.mountPath}/`, `json=${claim}/`) });
        // Not spawnSync: the reference answers from this process's event loop.
        const run = await runPod(k6sse!, ['run', '--quiet', ...operatorSegmentArgs(i, 2), join(work, 'dist', 'chat-stream-sse.js')], { PATH: process.env.PATH ?? '', HOME: work, ...pod, API_KEY: ref.keys.main }, work);
        expect(run.status, run.stderr).toBe(0);
        log += run.stdout;
      }
      writeFileSync(join(work, 'runners.log'), log);
      expect(readdirSync(claim).sort()).toEqual([`${out.metadata.name}-0-x1.ndjson`, `${out.metadata.name}-1-x2.ndjson`]);
      const lines: string[] = [];
      const code = mergeMain([join(work, 'runners.log'), claim, '--out', join(work, 'merged')], {}, (l) => lines.push(l));
      expect(code, lines.join('\n')).toBe(0);
      expect(lines.join('\n')).toMatch(/slices: \d+ of 1 s from 2 runners' k6 outputs/);
      const s = JSON.parse(readFileSync(join(work, 'merged', 'summary.json'), 'utf8'));
      const rows = s.details.k6.slices.rows as Array<{ sent: number }>;
      expect(rows.reduce((n, r) => n + r.sent, 0)).toBe(s.counts.sent);
      expect(readFileSync(join(work, 'merged', 'report.html'), 'utf8')).toContain('id="k6-slice-charts"');
      for (const f of readdirSync(join(work, 'merged'))) expect(readFileSync(join(work, 'merged', f), 'utf8')).not.toContain(ref.keys.main);
    } finally {
      await ref.close();
      rmSync(work, { recursive: true, force: true });
    }
  }, 120_000);
});
