// examples/github-actions/nightly.yml is valid YAML with the steps it promises: a
// nightly schedule, the target and keys from secrets, npm test as a plain step (its
// exit code 1 fails the job), reports uploaded as artifacts whatever happened, and
// a step summary even when the run could not complete.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { ROOT } from '../support/run-suite.ts';

interface Step { name?: string; uses?: string; run?: string; if?: string; env?: Record<string, string>; with?: Record<string, unknown>; 'continue-on-error'?: unknown }

const text = readFileSync(join(ROOT, 'examples/github-actions/nightly.yml'), 'utf8');
const doc = YAML.parseDocument(text);
const wf = doc.toJS() as { on: Record<string, unknown>; jobs: Record<string, { steps: Step[]; 'runs-on': string; 'continue-on-error'?: unknown }> };
const job = Object.values(wf.jobs)[0]!;
const steps = job.steps;
const index = (pred: (s: Step) => boolean) => steps.findIndex(pred);

describe('the nightly workflow example', () => {
  it('parses as YAML without errors and runs nightly and on demand', () => {
    expect(doc.errors).toEqual([]);
    const schedule = wf.on.schedule as Array<{ cron: string }>;
    expect(schedule[0]!.cron.split(' ')).toHaveLength(5);
    expect(wf.on).toHaveProperty('workflow_dispatch');
    expect(job['runs-on']).toBe('ubuntu-latest');
  });

  it('installs the current Node LTS (24, where openai 7 runs) and the locked dependencies', () => {
    const node = steps[index((s) => !!s.uses?.startsWith('actions/setup-node@'))]!;
    expect(String(node.with!['node-version'])).toBe('24');
    expect(index((s) => s.run?.trim().startsWith('npm ci') ?? false)).toBeGreaterThan(index((s) => s === node));
    for (const s of steps.filter((x) => x.uses)) expect(s.uses, 'actions pinned to a major version').toMatch(/^actions\/[a-z-]+(\/[a-z]+)?@v\d+$/);
  });

  it('runs npm test against the staging URL from secrets, and a failure fails the job', () => {
    const run = steps[index((s) => s.run?.trim() === 'npm test')]!;
    expect(run.env!.TARGET_URL).toBe('${{ secrets.CHATGATE_TARGET_URL }}');
    expect(run.env!.API_KEY).toBe('${{ secrets.CHATGATE_API_KEY }}');
    expect(run['continue-on-error']).toBeUndefined();
    expect(job['continue-on-error']).toBeUndefined();
    expect(run.if).toBeUndefined();
    // An unset secret would silently test the embedded reference: a step before refuses it.
    const guard = index((s) => s.env?.TARGET_URL !== undefined && /-z "\$TARGET_URL"/.test(s.run ?? ''));
    expect(guard).toBeGreaterThan(-1);
    expect(guard).toBeLessThan(steps.indexOf(run));
    expect(text).not.toMatch(/echo[^\n]*secrets\./);
  });

  it('uploads the reports as artifacts whatever the outcome, and writes a step summary', () => {
    const testStep = index((s) => s.run?.trim() === 'npm test');
    const upload = index((s) => !!s.uses?.startsWith('actions/upload-artifact@'));
    expect(upload).toBeGreaterThan(testStep);
    expect(steps[upload]!.if).toBe('always()');
    expect(String(steps[upload]!.with!.path)).toContain('reports/latest/');
    const summary = steps[index((s) => /GITHUB_STEP_SUMMARY/.test(s.run ?? ''))]!;
    expect(summary.if).toMatch(/failure\(\)/);
  });

  it('keeps the run history between nightly runs for the "since the previous run" line', () => {
    const restore = index((s) => !!s.uses?.startsWith('actions/cache/restore@'));
    const save = index((s) => !!s.uses?.startsWith('actions/cache/save@'));
    const testStep = index((s) => s.run?.trim() === 'npm test');
    expect(restore).toBeGreaterThan(-1);
    expect(restore).toBeLessThan(testStep);
    expect(save).toBeGreaterThan(testStep);
    expect(steps[restore]!.with!.path).toBe('reports/runs');
    expect(steps[save]!.if).toBe('always()');
  });
});
