// The client x operation matrix (SVC-4 / SVC-4b, docs/CLIENTS.md) as a user sees it in
// results.json: complete and all green on the embedded default, green for every legal
// variant of the reference server with every client, and, where clients differ, broken
// for exactly the clients that break. The expectations below were measured with the
// installed client versions; a client upgrade that changes one is a finding to look at.
import { afterAll, describe, expect, it } from 'vitest';
import { VARIANTS } from '../../reference/variants.ts';
import { CLIENTS, clientById, nodeMajor, OPERATIONS, operationsOf, unavailable } from '../../harness/clients/registry.ts';
import { runSuite, type SuiteRun } from '../support/run-suite.ts';
import { limiter, HANG_GUARD_MS } from '../support/limit.ts';
import { publishTable } from '../support/table.ts';
import { THROTTLING_VARIANTS } from '../support/targets.ts';

const slot = limiter(2);
const rows = new Map<string, string[]>();
// openai 7 needs Node >= 22: on Node 20 its cells are skipped (with the reason), on a newer
// Node it runs and breaks where the other openai majors break (selftest/e2e/node-lts.test.ts
// runs this file under the newest Node LTS, so both branches are exercised).
const openai7Runs = !unavailable(clientById('openai@7'));

// Legal variants, combined where they do not contradict each other (one line-end
// choice per group) so that every variant meets every client without 22 runs.
const VARIANT_GROUPS: string[][] = [
  ['sse-crlf', 'split-writes', 'sse-comments', 'sse-fields', 'sse-no-space', 'char-per-chunk', 'role-chunk-null-content', 'gzip', 'charset', 'chunked', 'extra-fields', 'retry-after-ms-only', 'reply-in-kind', 'n-ignored', 'never-echoes', 'fast-writer'],
  ['sse-cr', 'one-chunk', 'no-usage-chunk', 'connection-close', 'slow-stream', 'slow-json', 'tight-rate-limit', 'resolved-model', 'unknown-model-400', 'error-param-absent', 'outside-base-plain-404',
    'retry-after-http-date', 'auth-lenient-bearer', 'brain-route-201', 'unknown-params-400', 'large-bodies-served', 'usage-own-count', 'empty-messages-accepted'],
  // The retry-hint styles exclude each other (the reference uses the first it is given): one per group.
  ['ratelimit-reset-only', 'keep-alive-timeout', 'params-ignored', 'repetitive-deltas', 'stream-refusals-400', 'brain-route-stream-json', 'error-echoes-url', 'capped-empty-reply', 'route-trailing-slash', 'body-limit-64k', 'json-bom-tolerated', 'case-variant-keys-refused'],
];

// The tight rate limits (THROTTLING_VARIANTS) are not grouped here: they only make a run wait.
// Every client meets each of them in whole-suite runs (client suites included):
// throttled-variants.test.ts demands the unthrottled verdicts, cell for cell, and
// legal-variants.test.ts runs the rest.

interface Case {
  name: string;
  env: Record<string, string>;
  /** "client operation" cells that must not pass (warn for SVC-4b, fail for SVC-4); all others pass. */
  breaks: string[];
  why: string;
}

const CASES: Case[] = [
  { name: 'embedded default', env: {}, breaks: [], why: 'the reference server is what every client expects' },
  ...VARIANT_GROUPS.map((g) => ({ name: `variants ${g.join(',')}`, env: { REFERENCE_VARIANTS: g.join(',') }, breaks: [], why: 'legal variants: every client copes' })),
  {
    name: 'variant sse-named-event', env: { REFERENCE_VARIANTS: 'sse-named-event' }, breaks: ['openai@4 stream'],
    why: 'openai 4 takes a named SSE event for a non-chat event and yields {event, data}: the stream comes out empty, with no error',
  },
  {
    // No 429 to provoke: every runnable client's 429 cell is left without evidence, never passed.
    name: 'variant no-rate-limit', env: { REFERENCE_VARIANTS: 'no-rate-limit' },
    breaks: CLIENTS.filter((c) => !unavailable(c) && operationsOf(c).includes('error-429')).map((c) => `${c.id} error-429`),
    why: 'the server never answers 429 within the probe\'s bounds: the error-429 cells are inconclusive (see LIM-1), never a pass',
  },
  {
    name: 'defect stream-last-event-unterminated', env: { REFERENCE_DEFECT: 'stream-last-event-unterminated' }, breaks: [],
    why: 'the event left without its blank line is [DONE]: openai 4-6 and Vercel drop it and end at EOF, which loses nothing; only EV-2 catches it',
  },
  {
    name: 'defect cc-json-as-text', env: { REFERENCE_DEFECT: 'cc-json-as-text' },
    breaks: ['openai@4 completion', 'openai@4 brain', 'openai@5 completion', 'openai@5 brain', 'openai@6 completion', 'openai@6 brain', 'langchain@1 completion', 'langchain@1 brain',
      ...(openai7Runs ? ['openai@7 completion', 'openai@7 brain'] : [])],
    why: 'openai-node returns a text/plain body as a string (LangChain runs on it); the Vercel provider parses JSON whatever the content type',
  },
  {
    name: 'defect ch-role-user', env: { REFERENCE_DEFECT: 'ch-role-user' }, breaks: ['ai-sdk@6 completion', 'ai-sdk@6 brain'],
    why: 'only the Vercel provider validates the reply role ("Invalid JSON response"); openai-node and LangChain pass it through',
  },
  {
    name: 'defect cumulative-deltas', env: { REFERENCE_DEFECT: 'cumulative-deltas' },
    breaks: CLIENTS.filter((c) => !unavailable(c) && operationsOf(c).includes('stream')).map((c) => `${c.id} stream`),
    why: 'every client concatenates deltas, so each assembles the garbled reply: the stream cells are inconclusive naming EV-12 (the server\'s breach), never a fail of the client',
  },
  {
    name: 'defect auth-401-code-numeric', env: { REFERENCE_DEFECT: 'auth-401-code-numeric' }, breaks: [],
    why: 'every client raises its authentication error with the server\'s message despite the integer error.code (an ERR-1 breach): the error-401 cells pass, each with a note naming ERR-1',
  },
  {
    name: 'defect stream-false-sse', env: { REFERENCE_DEFECT: 'stream-false-sse' }, breaks: ['langchain@1 completion', 'langchain@1 brain'],
    why: 'only LangChain sends "stream": false on a plain call (the others leave stream out), and gets an event stream back',
  },
];

/** Cells of the matrix that did not pass (skips of a client that cannot run here aside). */
function broken(run: SuiteRun): string[] {
  return (run.results?.tests ?? [])
    .filter((t) => t.matrix && t.verdict !== 'pass' && !(t.verdict === 'skip' && /requires Node/.test(t.message ?? '')))
    .map((t) => `${t.matrix!.client} ${t.matrix!.operation}`).sort();
}

const expectedCells = CLIENTS.flatMap((c) => operationsOf(c).map((op) => `${c.id} ${op}`)).sort();

describe('variant groups', () => {
  it('put every legal variant of the reference in exactly one group (sse-named-event and no-rate-limit have their own cases)', () => {
    const grouped = [...VARIANT_GROUPS.flat(), 'sse-named-event', 'no-rate-limit', ...THROTTLING_VARIANTS].sort();
    expect(grouped, 'a new variant needs a place in VARIANT_GROUPS').toEqual(Object.keys(VARIANTS).sort());
  });
});

describe.concurrent('the client matrix in results.json', () => {
  for (const c of CASES) {
    it(`${c.name}: ${c.breaks.length ? `breaks ${c.breaks.join(', ')}` : 'all green'}`, async () => {
      // Only the matrix is judged here (SVC-4*); the LIM probe still runs for the 429 cells.
      // No case here stalls: the deadline is the suite's default, so a client library's
      // CPU-heavy stream on a loaded machine (load average 25+) does not meet it.
      const run = await slot(() => runSuite({ ...c.env, CLAUSES: 'SVC-4*' }));
      const cells = (run.results?.tests ?? []).filter((t) => t.matrix);
      const seen = broken(run);
      rows.set(c.name, [c.name, c.breaks.join(', ') || '(none)', seen.join(', ') || '(none)', seen.join() === [...c.breaks].sort().join() ? 'as expected' : 'DIFFERENT', `${(run.wallMs / 1000).toFixed(1)} s`]);
      expect(run.results, run.stderr.slice(0, 500)).toBeDefined();
      // The run reports the Node it ran on (the suite runs under this process's node).
      expect(run.results!.chatgate.node).toBe(process.version);

      // Every cell once; a cell left out (a client whose tests were never registered) would read as green.
      expect(cells.map((t) => `${t.matrix!.client} ${t.matrix!.operation}`).sort()).toEqual(expectedCells);
      for (const t of cells) {
        expect(OPERATIONS).toContain(t.matrix!.operation);
        expect(t.clause).toMatch(/^SVC-4b?$/);
      }

      const detail = cells.filter((t) => t.verdict !== 'pass').map((t) => `${t.verdict} ${t.title}: ${t.message}`).join('\n');
      expect(seen, `${c.why}\n${detail}`).toEqual([...c.breaks].sort());
      // A broken cell says what the client did, in the client's words; a passing one records them too.
      for (const t of cells.filter((t) => t.verdict !== 'pass' && t.verdict !== 'skip' && t.verdict !== 'inconclusive')) expect(t.message, t.title).toMatch(/got .+/);
      // One the server's wire breach leaves undecided names that clause.
      for (const t of cells.filter((t) => t.verdict === 'inconclusive')) expect(t.message, t.title).toMatch(/see [A-Z]+-\d+/);
      if (c.env.REFERENCE_DEFECT === 'cumulative-deltas') for (const t of cells.filter((t) => t.verdict !== 'pass' && t.verdict !== 'skip')) expect(`${t.verdict} ${t.message}`).toMatch(/^inconclusive .*see EV-12/);
      for (const t of cells.filter((t) => t.verdict === 'pass')) expect(t.observations?.length, t.title).toBeGreaterThan(0);
      // A wire breach the client tolerated is named on its passing cell.
      if (c.env.REFERENCE_DEFECT === 'auth-401-code-numeric') {
        for (const t of cells.filter((t) => t.matrix!.operation === 'error-401' && t.verdict === 'pass')) expect(t.notes.join('\n'), t.title).toMatch(/see ERR-1/);
        expect(cells.filter((t) => t.matrix!.operation === 'error-401' && t.verdict === 'pass').length).toBeGreaterThan(0);
      }
      // A client that cannot run on this Node (openai 7 before Node 22) is skipped with the reason, never dropped.
      for (const t of cells.filter((t) => unavailable(clientById(t.matrix!.client)))) {
        expect(`${t.title}: ${t.verdict} ${t.message}`).toBe(`${t.title}: skip ${unavailable(clientById(t.matrix!.client))}`);
      }
      // Legal variants fail nothing: a client that breaks on them is an SVC-4b warning at most.
      if (!c.env.REFERENCE_DEFECT) expect(run.exitCode, detail).toBe(0);
    }, HANG_GUARD_MS);
  }
});

afterAll(() => {
  const all = CASES.map((c) => rows.get(c.name) ?? [c.name, c.breaks.join(', ') || '(none)', '(not run)', 'not run', '']);
  publishTable(`client-matrix-node${nodeMajor()}`, `Client matrix on Node ${process.versions.node}: which clients break`, ['target', 'expected to break', 'broke', 'result', 'run time'], all,
    `${all.filter((r) => r[3] === 'as expected').length} of ${all.length} targets break exactly the expected clients.`);
});
