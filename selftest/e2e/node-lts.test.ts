// The conformance run under the newest Node LTS, not only under the Node that runs the
// self-tests (Node 20 on the build machine, past its end of life): openai 7 needs
// Node >= 22, so without this its cells would never run. `.ci/run` installs the LTS
// from the npm registry (the `node` package ships the binary) into .cache/node-lts/
// (gitignored); NODE_LTS_BIN points at another binary. Without one, the tests are
// skipped and say why in their titles. Cost, measured on the 2-core machine: the whole
// `npm test` of the embedded default under Node 24 takes 13-18 s (the defect
// runs of selftest/e2e/client-matrix.test.ts are not repeated under it: 89 s more for cells
// that depend on the server's bytes, not on Node); installing the binary (.ci/run) 6 s, 0.2 s when .cache/node-lts already has it.
//
// The report writers' Node line is checked on every machine (first describe).
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLIENTS, clientById, operationsOf, unavailable } from '../../harness/clients/registry.ts';
import { renderConsole } from '../../runner/report/console.ts';
import { renderJunit } from '../../runner/report/junit.ts';
import { renderMarkdown } from '../../runner/report/markdown.ts';
import { renderHtml } from '../../runner/report/html.ts';
import { reportModel } from '../../runner/report/model.ts';
import { parse } from 'yaml';
import { fixtureResults } from '../unit/reports-fixture.ts';
import { ROOT, runSuite } from '../support/run-suite.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

/** Where .ci/run puts the LTS binary (`npm install --prefix .cache/node-lts node@<major>`). */
export const NODE_LTS_DEFAULT = join(ROOT, '.cache', 'node-lts', 'node_modules', '.bin', 'node');
const bin = process.env.NODE_LTS_BIN || NODE_LTS_DEFAULT;

function versionOf(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return execFileSync(file, ['--version'], { encoding: 'utf8', timeout: 30_000 }).trim();
  } catch {
    return undefined;
  }
}

const version = versionOf(bin);
const SKIPPED = `Node LTS tests: skipped, no node binary at ${bin} (bash .ci/run installs one; or set NODE_LTS_BIN)`;
if (!version) console.info(SKIPPED);
const title = (t: string) => (version ? `${t} (${version})` : `${SKIPPED}: ${t}`);

describe('every report names the Node it ran on', () => {
  it('console footer, summary.md, junit.xml properties and the HTML report', () => {
    const r = fixtureResults();
    const node = r.chatgate.node;
    expect(node).toMatch(/^v\d+\./);
    expect(renderConsole(reportModel(r))).toMatch(new RegExp(`tests, [\\d.]+ s, Node ${node.replace(/\./g, '\\.')}\\)`));
    expect(renderMarkdown(reportModel(r))).toContain(`on Node ${node}`);
    expect(renderJunit(reportModel(r))).toContain(`<property name="node" value="${node}"/>`);
    expect(renderHtml(reportModel(r))).toContain(`node ${node}`);
  });
});

describe('supported Node lines', () => {
  it('package.json engines admit this Node; the nightly workflow example sets up an LTS line where openai 7 runs', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    const min = /^>=(\d+)\.(\d+)\.(\d+)$/.exec(pkg.engines.node);
    expect(min, pkg.engines.node).not.toBeNull();
    const [maj, mi, pa] = process.versions.node.split('.').map(Number);
    const [wMaj, wMi, wPa] = min!.slice(1).map(Number);
    expect(maj! * 1e6 + mi! * 1e3 + pa!).toBeGreaterThanOrEqual(wMaj! * 1e6 + wMi! * 1e3 + wPa!);
    const wf = parse(readFileSync(join(ROOT, 'examples/github-actions/nightly.yml'), 'utf8'));
    const setup = (wf.jobs.conformance.steps as Array<{ uses?: string; with?: { 'node-version'?: unknown } }>).find((s) => s.uses?.startsWith('actions/setup-node'));
    const major = Number(setup?.with?.['node-version']);
    expect(major % 2).toBe(0);
    expect(unavailable(clientById('openai@7'), `${major}.0.0`)).toBeUndefined();
  });
});

describe('the client matrix under the newest Node LTS', () => {
  it.skipIf(!version)(title('runs on an LTS line (even major) newer than this Node'), () => {
    const major = Number(version!.slice(1).split('.')[0]);
    expect(major % 2, `${version} is not an LTS line`).toBe(0);
    expect(major).toBeGreaterThanOrEqual(22);
    // openai 7 is what this Node makes reachable.
    expect(unavailable(clientById('openai@7'), version!.slice(1))).toBeUndefined();
  });

  it.skipIf(!version)(title('npm test against the embedded default: exit 0, every matrix cell passes, openai@7 included, and every report names that Node'), async () => {
    // The whole conformance run (about 13 s), not only the matrix: nothing else may break on a newer Node either.
    const run = await runSuite({}, { node: bin });
    expect(run.results, run.stderr.slice(0, 500)).toBeDefined();
    expect(run.exitCode, run.stdout.slice(-2000)).toBe(0);
    expect(run.results!.chatgate.node).toBe(version);

    const cells = run.results!.tests.filter((t) => t.matrix);
    const expected = CLIENTS.flatMap((c) => operationsOf(c).map((op) => `${c.id} ${op}`)).sort();
    expect(cells.map((t) => `${t.matrix!.client} ${t.matrix!.operation}`).sort()).toEqual(expected);
    const notPassing = cells.filter((t) => t.verdict !== 'pass').map((t) => `${t.verdict} ${t.title}: ${t.message}`);
    expect(notPassing).toEqual([]);
    const openai7 = cells.filter((t) => t.matrix!.client === 'openai@7');
    expect(openai7.length).toBe(operationsOf(clientById('openai@7')).length);
    // On a Node where openai 7 runs, it is the newest official major: SVC-4 judges it.
    for (const t of openai7) expect(t.clause, t.title).toBe('SVC-4');
    for (const t of cells.filter((t) => t.matrix!.client === 'openai@6')) expect(t.clause, t.title).toBe('SVC-4b');

    expect(run.stdout).toContain(`Node ${version})`);
    expect(run.report('summary.md')).toContain(`on Node ${version}`);
    expect(run.report('junit.xml')).toContain(`<property name="node" value="${version}"/>`);
    expect(run.report('index.html')).toContain(`node ${version}`);
  }, HANG_GUARD_MS);
});
