// load/k6/operator/testrun.yaml against the k6-operator's own TestRun definition (the
// part of its CRD vendored in load/k6/operator/testrun.schema.json, source noted
// there), and the rules that keep keys out of it: no initializer (its `k6 archive`
// sees only `env` and would need keys on the command line or archived), keys only
// from a Secret, no usage report. A cluster is not needed for any of this; what a
// real `k6 archive` writes is checked in selftest/e2e/k6-run.test.ts where k6 exists.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { parse } from 'yaml';
import { K6_DIR } from '../../load/k6/build.ts';

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
