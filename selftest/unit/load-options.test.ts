// The load harness's options: flags and variables, precedence, bad values as one-line
// usage errors, options given to the wrong scenario, the caps and the remote guard,
// and that --help and docs/LOAD.md document every option.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { helpText, OPTION_SPECS, parseArgs, parseSeconds, UsageError } from '../../load/setup/options.ts';
import { checkCaps, checkRemote, isLoopbackHost, planFor, rampSteps, sweepSteps } from '../../load/setup/safety.ts';
import { formatProgress } from '../../load/report/progress.ts';

const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseArgs(argv, env);
const usage = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  try {
    parse(argv, env);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error('expected a UsageError');
};

describe('load options', () => {
  it('has defaults that make a short, sensible run', () => {
    const { scenario, options } = parse(['stream']);
    expect(scenario).toBe('stream');
    expect(options.duration).toBeUndefined(); // 10 s, see runSeconds
    expect(options.rate).toBeUndefined(); // 10 req/s open loop, see streamMode
    expect(options.arrival).toBeUndefined(); // Poisson for stream and sweep, constant for throughput --rate
    expect(options.capDuration).toBe(300);
    expect(options.coCorrection).toBe(true);
    expect(options.refTtftMs).toBeGreaterThan(0);
  });

  it('reads flags in both forms, variables, and lets flags win', () => {
    const p = parse(['throughput', '--rate=50', '--connections', '4', '--duration', '500ms', '--no-co-correction'], { LOAD_RATE: '7', LOAD_CONNECTIONS: '9' });
    expect(p.options.rate).toBe(50);
    expect(p.options.connections).toBe(4);
    expect(p.options.duration).toBe(0.5);
    expect(p.options.coCorrection).toBe(false);
    const e = parse(['throughput'], { LOAD_RATE: '7', LOAD_CO_CORRECTION: '0', LOAD_THRESHOLDS: 'ok_rps=5%, latency_p99_ms=20' });
    expect(e.options.rate).toBe(7);
    expect(e.options.coCorrection).toBe(false);
    expect(e.options.thresholds).toEqual(['ok_rps=5%', 'latency_p99_ms=20']);
    expect(e.given.has('rate')).toBe(true);
  });

  it('repeats list options and accepts durations with units', () => {
    expect(parse(['stream', '--threshold', 'a=1%', '--threshold=b=2']).options.thresholds).toEqual(['a=1%', 'b=2']);
    expect(parseSeconds('2m')).toBe(120);
    expect(parseSeconds('1.5')).toBe(1.5);
    expect(parseSeconds('10s')).toBe(10);
    expect(parseSeconds('soon')).toBeUndefined();
  });

  it('turns bad input into one-line usage errors that name the option and the fix', () => {
    expect(usage([])).toMatch(/name a scenario: throughput, stream, sweep, rate-limit/);
    expect(usage(['soak'])).toMatch(/unknown scenario "soak"/);
    expect(usage(['stream', '--rat', '5'])).toMatch(/unknown option "--rat"/);
    expect(usage(['stream', '--rate'])).toMatch(/--rate needs a value/);
    expect(usage(['stream', '--rate', 'fast'])).toMatch(/--rate: "fast" is not a positive number/);
    expect(usage(['stream', '--brain-share', '1.5'])).toMatch(/not a share between 0 and 1/);
    expect(usage(['stream', '--arrival', 'burst'])).toMatch(/not one of poisson, constant/);
    expect(usage(['stream', '--duration', 'long'])).toMatch(/not a duration/);
    expect(usage(['stream'], { LOAD_CONCURRENCY: '-3' })).toMatch(/LOAD_CONCURRENCY: "-3" is not a whole number/);
    expect(usage(['stream', '--concurrency', '0'])).toMatch(/below the minimum 1/);
    for (const argv of [['stream', '--rate', 'x'], []]) expect(usage(argv)).not.toContain('\n');
  });

  it('refuses a flag the scenario does not use, but ignores such a variable', () => {
    expect(usage(['stream', '--connections', '5'])).toMatch(/--connections does not apply to the stream scenario \(it is for throughput\)/);
    expect(usage(['throughput', '--sweep-start', '5'])).toMatch(/does not apply to the throughput scenario/);
    expect(parse(['stream'], { LOAD_CONNECTIONS: '5' }).given.has('connections')).toBe(false);
  });

  it('documents every option in --help and in docs/LOAD.md', () => {
    const help = helpText();
    const doc = readFileSync(new URL('../../docs/LOAD.md', import.meta.url), 'utf8');
    for (const spec of OPTION_SPECS) {
      expect(help, spec.flag).toContain(spec.flag);
      expect(help, spec.env).toContain(spec.env);
      expect(doc, `docs/LOAD.md lacks ${spec.flag}`).toContain(`\`${spec.flag}`);
      expect(doc, `docs/LOAD.md lacks ${spec.env}`).toContain(spec.env);
    }
  });
});

describe('--help', () => {
  it('groups the options with an example each; <scenario> --help lists only what that scenario takes', () => {
    const all = helpText();
    for (const title of ['Every scenario:', 'Workload: what each request says', 'throughput:', 'stream:', 'sweep:', 'rate-limit:', 'Embedded reference server']) expect(all).toContain(title);
    expect(all.match(/^ {2}e\.g\. npm run load -- /gm)!.length).toBeGreaterThanOrEqual(8);
    expect(parse(['stream', '--help']).helpFor).toBe('stream');
    expect(parse(['--help']).helpFor).toBeUndefined();
    const stream = helpText('stream');
    for (const spec of OPTION_SPECS) {
      const applies = spec.scenarios === 'all' || spec.scenarios.includes('stream');
      expect(stream.includes(`  ${spec.flag} `) || stream.includes(`  ${spec.flag}\n`), spec.flag).toBe(applies);
    }
    expect(stream).not.toMatch(/^throughput:|^sweep:|^rate-limit:/m);
    expect(stream.split('\n').length).toBeLessThan(all.split('\n').length);
  });
});

describe('load safety', () => {
  it('knows loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', 'api.localhost', '[::1]', '::1']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['10.0.0.1', '192.0.2.1', 'staging.example', '0.0.0.0', '128.0.0.1', '127.evil.example']) expect(isLoopbackHost(h), h).toBe(false);
  });

  it('refuses a remote target unless --allow-remote', () => {
    expect(() => checkRemote('https://staging.example/v1', false)).toThrow(/staging\.example is not loopback; .*--allow-remote/);
    expect(() => checkRemote('https://staging.example/v1', true)).not.toThrow();
    expect(() => checkRemote('http://127.0.0.1:9/v1', false)).not.toThrow();
  });

  it('plans rate x duration and enforces the caps, naming the option that raises each', () => {
    const stream = parse(['stream', '--rate', '20', '--duration', '30']).options;
    expect(planFor('stream', stream)).toMatchObject({ maxSeconds: 30, maxRate: 20, requests: 600 });
    expect(planFor('stream', stream).lines[0]).toMatch(/poisson arrivals at 20 req\/s x 30 s = about 600 streams/);

    const long = parse(['stream', '--duration', '10m']).options;
    expect(() => checkCaps('stream', long, planFor('stream', long))).toThrow(/above the cap of 300 s; .*--cap-duration 600/);
    const raised = parse(['stream', '--duration', '10m', '--cap-duration', '600']).options;
    expect(() => checkCaps('stream', raised, planFor('stream', raised))).not.toThrow();

    const fast = parse(['throughput', '--rate', '5000']).options;
    expect(() => checkCaps('throughput', fast, planFor('throughput', fast))).toThrow(/5000 req\/s, above the cap of 1000 req\/s; .*--cap-rate 5000/);
    const wide = parse(['stream', '--concurrency', '8000']).options;
    expect(() => checkCaps('stream', wide, planFor('stream', wide))).toThrow(/8000 concurrent streams, above the cap of 5000; .*--cap-concurrency 8000/);

    // A trace: its own length, not the cap; cut by --duration when that is shorter.
    const trace = parse(['stream', '--trace', 't.jsonl']).options;
    expect(planFor('stream', trace, 12.5).lines[0]).toMatch(/replay of the trace t\.jsonl at its own times, 12\.5 s \(the trace's length\)/);
    expect(planFor('stream', trace, 12.5).maxSeconds).toBe(12.5);
    const cut = parse(['stream', '--trace', 't.jsonl', '--duration', '5']).options;
    expect(planFor('stream', cut, 12.5).lines[0]).toMatch(/its first 5 s of 12\.5 s \(--duration\)/);
  });

  it('bounds sweeps and ramps', () => {
    const o = parse(['sweep']).options;
    expect(sweepSteps(o)).toEqual([10, 20, 40, 80, 160, 320, 640]);
    expect(sweepSteps(parse(['sweep', '--sweep-start', '5', '--sweep-step', '5', '--sweep-max', '20']).options)).toEqual([5, 10, 15, 20]);
    expect(sweepSteps(parse(['sweep', '--sweep-by', 'concurrency', '--concurrency', '100', '--sweep-steps', '3']).options)).toEqual([100, 200, 400]);
    const plan = planFor('sweep', o);
    // 7 ladder steps of 4 s, the first 4.4 s (40 requests at 10 req/s after its 0.4-s settle), and 6 bisection steps of at most 4.4 s.
    expect(plan.maxSeconds).toBe(54.8);
    expect(rampSteps(parse(['rate-limit', '--ramp-start', '2', '--ramp-factor', '2', '--ramp-max', '16']).options)).toEqual([2, 4, 8, 16]);
    const rl = planFor('rate-limit', parse(['rate-limit']).options);
    expect(rl.maxSeconds).toBeLessThanOrEqual(300);
  });
});

describe('progress line', () => {
  it('says "no answer yet" before the first answer, never 0 ms', () => {
    const snap = { phase: 'stream', elapsedS: 3, totalS: 10, sent: 5, ok: 0, errors: 0, inFlight: 5, metric: 'ttft', p50Ms: 0, p95Ms: 0, samples: 0 };
    expect(formatProgress(snap, 2)).toMatch(/ttft: no answer yet$/);
    expect(formatProgress(snap, 2)).not.toMatch(/0\.0 ms/);
    expect(formatProgress({ ...snap, ok: 3, samples: 3, p50Ms: 150, p95Ms: 210 }, 2)).toMatch(/ttft p50 150 ms p95 210 ms$/);
  });
});
