// Client-library traffic is judged like our own, and client cells are not blamed for
// the server's own wire breaches (docs/RUNNER.md, "Run-wide checks" and "Client cells").
// - A target that misbehaves only toward client libraries (their x-stainless-* headers
//   and user agents) fails the run-wide clause: ERR-2 for a 500, AUTH-9 for an echoed
//   key. Only the client suites run, so the evidence can only be client traffic.
// - A wire breach met by a client cell (401 cell answered 200, 400 cell answered 200, a
//   500) fails the wire clause, and the cells are `inconclusive` naming it, never a
//   SVC-4/SVC-4b failure.
// - An error body that is not one (text/plain, a string "error") on the right status fails
//   ERR-1 on the client traffic, and the error cells pass: each client raised its typed
//   error for the status; the note names the breach it tolerated.
// Cost: seven suite runs of the client suites (two at a time), 60-75 s in all (measured at load average 12-17).
import { describe, expect, it } from 'vitest';
import { runSuite, type SuiteRun } from '../support/run-suite.ts';
import { limiter, HANG_GUARD_MS } from '../support/limit.ts';

const slot = limiter(2);
const cells = (run: SuiteRun) => (run.results?.tests ?? []).filter((t) => t.matrix && !(t.verdict === 'skip' && /requires Node/.test(t.message ?? '')));
const run = (defect: string, clauses: string, files: string[]) => slot(() => runSuite(
  { REFERENCE_DEFECT: defect, CLAUSES: clauses, TIMEOUT_MS: '8000', RATE_LIMIT_PROBE_MAX: '0' }, { args: files }));

describe.concurrent('client-library traffic and client cells', () => {
  it('client-libraries-500: ERR-2 fails on client traffic alone; every cell the 500 reaches is inconclusive, naming ERR-2', async () => {
    const r = await run('client-libraries-500', 'SVC-4*,ERR-2', ['clients']);
    expect(r.exitCode, r.stderr.slice(0, 500)).toBe(1);
    const err2 = r.tests('ERR-2')[0]!;
    expect(err2.verdict, err2.message).toBe('fail');
    expect(err2.message).toMatch(/-> 500 \(client library\)/);
    const all = cells(r);
    expect(all.length).toBeGreaterThan(20);
    // The defect strikes after authentication: the error-401 cells get their conformant 401 and pass.
    for (const t of all.filter((x) => x.matrix!.operation === 'error-401')) expect(`${t.title}: ${t.verdict}`).toMatch(/: pass$/);
    for (const t of all.filter((x) => x.matrix!.operation !== 'error-401')) {
      expect(`${t.title}: ${t.verdict} ${t.message}`).toMatch(/: inconclusive the server answered 500(, not \d+: see [A-Z]+-\d+ and ERR-2|: see ERR-2)/);
    }
  }, HANG_GUARD_MS);

  it('key-echoed-to-clients: AUTH-9 fails on client traffic alone', async () => {
    const r = await run('key-echoed-to-clients', 'SVC-4*,AUTH-9', ['clients']);
    expect(r.exitCode, r.stderr.slice(0, 500)).toBe(1);
    const auth9 = r.tests('AUTH-9')[0]!;
    expect(auth9.verdict, auth9.message).toBe('fail');
    expect(auth9.message).toMatch(/\(client library\)/);
    expect(JSON.stringify(r.results) + r.stdout).not.toMatch(/sk-[A-Za-z0-9-]{20,}/);
  }, HANG_GUARD_MS);

  it('auth-any-key: AUTH-2 fails; the error-401 cells are inconclusive "see AUTH-2", no cell fails', async () => {
    const r = await run('auth-any-key', 'SVC-4*,AUTH-2', ['clients', 'auth']);
    expect(r.exitCode, r.stderr.slice(0, 500)).toBe(1);
    expect(r.clauses('fail')).toEqual(['AUTH-2']);
    expect(r.clauses('warn')).toEqual([]);
    const c401 = cells(r).filter((t) => t.matrix!.operation === 'error-401');
    expect(c401.length).toBeGreaterThan(3);
    for (const t of c401) expect(`${t.verdict} ${t.message}`).toMatch(/^inconclusive the server answered 200, not 401: see AUTH-2/);
    for (const t of cells(r).filter((x) => x.matrix!.operation !== 'error-401')) expect(`${t.title}: ${t.verdict}`).toMatch(/: pass$/);
  }, HANG_GUARD_MS);

  it('accepts-model-number: CHAT-2 fails; the error-400 cells are inconclusive "see CHAT-2", no cell fails', async () => {
    const r = await run('accepts-model-number', 'SVC-4*,CHAT-2', ['clients', 'chat-requests']);
    expect(r.exitCode, r.stderr.slice(0, 500)).toBe(1);
    expect(r.clauses('fail')).toEqual(['CHAT-2']);
    expect(r.clauses('warn')).toEqual([]);
    const c400 = cells(r).filter((t) => t.matrix!.operation === 'error-400');
    expect(c400.length).toBeGreaterThan(3);
    for (const t of c400) expect(`${t.verdict} ${t.message}`).toMatch(/^inconclusive the server answered 200, not 400: see CHAT-2/);
  }, HANG_GUARD_MS);
  it('scope-401-instead-of-403: AUTH-6 fails; the error-403 cells, where each client raised its typed error for the wrong status, are inconclusive "see AUTH-6", never a pass', async () => {
    const r = await run('scope-401-instead-of-403', 'SVC-4*,AUTH-6', ['clients', 'auth']);
    expect(r.exitCode, r.stderr.slice(0, 500)).toBe(1);
    expect(r.clauses('fail')).toEqual(['AUTH-6']);
    const c403 = cells(r).filter((t) => t.matrix!.operation === 'error-403');
    expect(c403.length).toBeGreaterThan(3);
    for (const t of c403) expect(`${t.verdict} ${t.message}`).toMatch(/^inconclusive the server answered 401, not 403: see AUTH-6 \(the client raised \w+/);
  }, HANG_GUARD_MS);

  for (const [defect, problem] of [['errors-4xx-plain-text', /Content-Type is "text\/plain/], ['errors-4xx-string-error', /error/]] as const) {
    it(`${defect}: ERR-1 fails on the client traffic; the error-401 and error-400 cells pass, each noting the breach it tolerated`, async () => {
      const r = await run(defect, 'SVC-4*,ERR-1', ['clients']);
      expect(r.exitCode, r.stderr.slice(0, 500)).toBe(1);
      expect(r.clauses('fail')).toEqual(['ERR-1']);
      const err1 = r.tests('ERR-1')[0]!;
      expect(err1.message).toMatch(/-> 40[01] \(client library\)/);
      const all = cells(r);
      expect(all.length).toBeGreaterThan(20);
      const tolerant = all.filter((x) => x.matrix!.operation === 'error-401' || x.matrix!.operation === 'error-400');
      expect(tolerant.length).toBeGreaterThan(7);
      for (const t of tolerant) {
        expect(`${t.title}: ${t.verdict} ${t.message ?? ''}`).toMatch(/: pass $/);
        const note = t.notes.find((n) => n.startsWith('the client worked despite the server\'s breach')) ?? t.notes.join(' | ');
        expect(note, t.title).toMatch(new RegExp(`the server's ${t.matrix!.operation.slice(6)} carries no proper error body \\(`));
        expect(note, t.title).toMatch(problem);
        expect(note, t.title).toMatch(/see ERR-1; it raised its typed error for the status, and the body held no error.message to carry$/);
        // The typed error is what the client's users catch.
        expect(t.observations?.[0], t.title).toMatch(/BadRequestError|AuthenticationError|APICallError/);
      }
      for (const t of all.filter((x) => !tolerant.includes(x))) expect(`${t.title}: ${t.verdict}`).toMatch(/: pass$/);
    }, HANG_GUARD_MS);
  }
});
