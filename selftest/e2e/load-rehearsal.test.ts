// Rehearsing a change against a target whose behaviour is known: the reference's engine
// model (8 slots, 20-token replies, 50 ms decode steps: about 8 req/s, computed by
// engineCapacity) at 70 % of its capacity, with the change run by --run through its
// control port. A scale-down to a quarter of the slots (2, which serve about 2 req/s
// against 5.6 offered) for 4 s must show violation from the change's slice on, recovery
// close to the 4 s after which the model serves again (its backlog is at most 2 waiting
// plus 2 in slots, which 8 slots take at once), and a graceful verdict (503s with a
// body). A restart (streams cut, connections refused for 2 s) must not be graceful and
// name EV-6 and LIM-1. The same load without a change has no violation at all.
// Bounded by the phases: 12 + 8 + 8 s of load at 5.6 req/s (about 150 streams), about
// 35 s in all on an idle 2-core machine.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { loadConfig } from '../../lib/run/config.ts';
import { parseArgs } from '../../load/setup/options.ts';
import { executeRun } from '../../load/run.ts';
import { startReferenceProcess, type EmbeddedReference } from '../../load/setup/reference-process.ts';
import { referenceOptionsFor, referenceTarget } from '../../load/setup/load-target.ts';
import { StopToken } from '../../load/setup/stop.ts';
import { engineCapacity, resolveEngineModel } from '../../reference/engine-model.ts';
import { DEFAULT_PROMPT } from '../../load/engine/request-bodies.ts';
import type { Damage } from '../../load/report/damage.ts';
import type { SliceRow } from '../../load/report/slices.ts';

const SLO_TTFT = 500;
const ENGINE = ['--ref-engine', '--ref-max-batch', '8', '--ref-decode-step-ms', '50', '--max-tokens', '20'];
const BASE = ['stream', '--quiet', '--warmup', '2', ...ENGINE, '--arrival', 'constant', '--slice', '1s', '--slo-ttft-p95-ms', String(SLO_TTFT)];
const CONTROL = (path: string) => `node -e 'fetch(process.env.CHATGATE_REF_CONTROL + "${path}", { method: "POST" }).then((r) => r.text()).then(console.log)'`;

describe('rehearsing a change against the reference engine model', () => {
  let ref: EmbeddedReference;
  const model = resolveEngineModel(referenceOptionsFor(parseArgs(BASE, {}).options).engine!);
  // The prompt as the model counts it (the message's text in o200k_base), for the capacity.
  const promptTokens = encode(`${DEFAULT_PROMPT} (request 100)`).length;
  const cap = engineCapacity(model, { promptTokens, outputTokens: 20 }, { ttftP95Ms: SLO_TTFT });
  const quarter = engineCapacity({ ...model, maxBatch: model.maxBatch / 4 }, { promptTokens, outputTokens: 20 }, { ttftP95Ms: SLO_TTFT });

  beforeAll(async () => {
    ref = await startReferenceProcess(referenceOptionsFor(parseArgs(BASE, {}).options));
  });
  afterAll(async () => {
    await ref?.close();
  });

  async function run(extra: string[]) {
    const out = mkdtempSync(join(tmpdir(), 'chatgate-rehearsal-'));
    const { options } = parseArgs([...BASE, '--capacity', cap.rps.toFixed(3), ...extra], {});
    const o = await executeRun({ scenario: 'stream', options, config: loadConfig({}), target: { ...referenceTarget(ref), reference: ref }, stop: new StopToken(), outDir: out, log: () => {} });
    const d = (o.summary.details as { rehearsal: { damage: Damage; command: { exit_code: number | null; stdout: string } | null } }).rehearsal;
    const rows = (o.summary.plots.extra as { slices: SliceRow[] }).slices;
    const trail = rows.map((r) => `${r.t_start_s}:${r.within_slo === null ? '-' : r.within_slo ? 'ok' : r.broken.join('+')}`).join(' ');
    return { o, d, rows, out, trail: `${d.damage.verdict} | ${trail}` };
  }

  it('the model: 70 % of capacity is above what a quarter of the slots serves', () => {
    expect(cap.bound).toBe('batch');
    expect(0.7 * cap.rps).toBeGreaterThan(1.5 * quarter.rps);
  });

  it('without a change: 0 s of violation, nothing lost', async () => {
    const { d, rows, trail } = await run(['--phases', 'ramp 1s to 70%, hold 7s']);
    expect(d.damage.violation_s, trail).toBe(0);
    expect(d.damage.change_at_s).toBeNull();
    expect(d.damage.losses.lost, trail).toBe(0);
    expect(rows.length).toBeGreaterThanOrEqual(8);
  });

  it('a scale-down to a quarter of the slots for 4 s: violation from the change, recovery near 4 s, graceful with 503s', async () => {
    const S = 4;
    const { o, d, rows, out, trail } = await run(['--phases', 'ramp 1s to 70%, hold 11s', '--at', '3s', '--run', CONTROL(`/engine/slots?n=${model.maxBatch / 4}&seconds=${S}`)]);
    const dm = d.damage;
    expect(d.command?.exit_code, JSON.stringify(d.command)).toBe(0);
    expect(dm.change_at_s!).toBeGreaterThanOrEqual(2.9);
    // The slice holding the change is the first that can break (it starts up to one slice before it).
    expect(dm.violation_from_s, trail).not.toBeNull();
    expect(dm.violation_from_s!, trail).toBeGreaterThanOrEqual(-1);
    expect(dm.violation_from_s!, trail).toBeLessThanOrEqual(5);
    // The model serves again S s after the change and its backlog fits the restored slots at once.
    expect(dm.recovery_s, trail).not.toBeNull();
    expect(Math.abs(dm.recovery_s! - S), trail).toBeLessThanOrEqual(10);
    expect(dm.recovery_s!, trail).toBeGreaterThanOrEqual(S - 1);
    expect(dm.graceful, trail).toBe(true);
    expect(dm.losses.graceful.shed_503 ?? 0, trail).toBeGreaterThan(0);
    expect(dm.verdict).toMatch(/: graceful: SLO violated/);
    expect(o.summary.findings.filter((f) => f.level === 'MUST' || f.level === 'COMPAT')).toEqual([]);
    // One CSV row and one chart point per slice; the phases and the change marked.
    const csv = readFileSync(join(out, 'slices.csv'), 'utf8').trim().split('\n');
    expect(csv.length - 1).toBe(rows.length);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain(`data-points="${rows.length}"`);
    expect(html).toContain('change: node -e');
    expect(html).toContain('hold 11s');
    expect(rows.some((r) => r.marks.length > 0)).toBe(true);
  });

  it('a restart: streams cut, connections refused, not graceful, naming EV-6 and LIM-1', async () => {
    const { o, d, rows, trail } = await run(['--phases', 'hold 7s at 70%', '--at', '3s', '--run', CONTROL('/engine/restart?down_seconds=2')]);
    const dm = d.damage;
    expect(dm.graceful, trail).toBe(false);
    expect(dm.losses.clauses, trail).toEqual(expect.arrayContaining(['EV-6', 'LIM-1']));
    expect(rows.reduce((a, r) => a + r.streams_cut, 0), trail).toBeGreaterThan(0);
    expect(dm.verdict).toMatch(/NOT graceful \(.*EV-6.*\)/);
    const ev6 = o.summary.findings.find((f) => f.clause === 'EV-6' && /rehearsal/.test(f.message));
    expect(ev6?.example ?? '').toMatch(/reproduce: curl .*chat\/completions/);
    expect(ev6?.example ?? '').not.toContain(ref.keys.main);
    // Each cut stream is one finding, on EV-6 (not also the recorder's LIM-1 "connection lost" or EV-6 entry).
    expect(ev6?.count, trail).toBe(rows.reduce((a, r) => a + r.streams_cut, 0));
    expect(o.summary.findings.filter((f) => !/rehearsal/.test(f.message) && ['EV-6', 'LIM-1', 'LOAD'].includes(f.clause)).map((f) => f.message), trail).toEqual([]);
  });
});
