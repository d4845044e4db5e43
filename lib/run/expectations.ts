// EXPECTATIONS=<file>: the known failures of a target (WPT expectation files,
// Schemathesis --baseline). The file maps a clause id or a test id to the reason,
// a ticket link:
//
//   # staging, 2026-11
//   LIM-2: https://tracker.example/API-88 no Retry-After yet
//   resources/completion-id: https://tracker.example/API-91
//
// Test ids are the stable ids of results.json (resultsVersion 2). The title-based ids
// of earlier versions ("resources/RES-CC-1 id is ...") are still accepted, with a
// deprecation warning naming the stable id to use instead.
//
// JSON is the same map. A known failure does not fail the run; a known failure
// that passes ("unexpected pass") does, until --update-expectations removes it.
// An id that names nothing is a configuration error, before any request.
import { readFileSync, writeFileSync } from 'node:fs';
import { extname } from 'node:path';
import YAML from 'yaml';
import { ConfigError } from './config.ts';
import { isClauseId } from '../spec/clauses.ts';
import { countsAsFailing, countsAsPassing, isHarnessError, type ExpectationsSummary, type TestExpectation, type TestRecord } from './verdicts.ts';

export interface ExpectationEntry {
  /** As the file writes it: a clause id (LIM-2), a test id (auth/missing-key/models) or an old title-based test id. */
  id: string;
  reason: string;
  /** The stable test id an old title-based entry names (checkTestIds sets it). */
  testId?: string;
}

export interface ExpectationsFile {
  path: string;
  format: 'json' | 'yaml';
  entries: ExpectationEntry[];
}

const VAR = 'EXPECTATIONS';

/** Test ids (stable or title-based) hold a slash; clause ids never do. */
export const isTestId = (id: string): boolean => id.includes('/');

export function loadExpectations(path: string): ExpectationsFile {
  let text: string;
  try { text = readFileSync(path, 'utf8'); } catch (err) {
    throw new ConfigError(VAR, `cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); give the path of a JSON or YAML file`);
  }
  const format = extname(path).toLowerCase() === '.json' ? 'json' : 'yaml';
  let doc: unknown;
  try {
    doc = format === 'json' ? JSON.parse(text) : YAML.parse(text);
  } catch (err) {
    throw new ConfigError(VAR, `${path} is not valid ${format.toUpperCase()}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) return { path, format, entries: [] };
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError(VAR, `${path} must map clause or test ids to reasons, e.g. "LIM-2: https://tracker.example/API-88"`);
  }
  const entries: ExpectationEntry[] = [];
  const noReason: string[] = [];
  const unknown: string[] = [];
  for (const [id, reason] of Object.entries(doc as Record<string, unknown>)) {
    if (typeof reason !== 'string' || reason.trim() === '') noReason.push(id);
    else if (!isTestId(id) && !isClauseId(id)) unknown.push(id);
    else entries.push({ id, reason: reason.trim() });
  }
  if (noReason.length) throw new ConfigError(VAR, `${path}: ${quoted(noReason)} ${noReason.length === 1 ? 'has' : 'have'} no reason; give each known failure its ticket link as a string`);
  if (unknown.length) throw new ConfigError(VAR, `${path}: ${quoted(unknown)} ${unknown.length === 1 ? 'is' : 'are'} no clause id; use a clause id (LIM-2) or a test id from results.json (auth/AUTH-1 ...)`);
  return { path, format, entries };
}

/**
 * Test ids must name a test of the suite (known only after vitest collected the files):
 * a stable id, or an old title-based id (`legacy`: title-based id -> stable id), which
 * is resolved to its stable id. Returns one deprecation warning per old id.
 */
export function checkTestIds(file: ExpectationsFile, known: Set<string>, legacy: Map<string, string> = new Map()): string[] {
  const unknown: string[] = [];
  const warnings: string[] = [];
  for (const e of file.entries) {
    if (!isTestId(e.id) || known.has(e.id)) continue;
    const stable = legacy.get(e.id);
    if (stable === undefined) { unknown.push(e.id); continue; }
    e.testId = stable;
    warnings.push(`${VAR}: ${file.path}: ${JSON.stringify(e.id)} is a title-based test id (deprecated, it breaks when the title changes); use its stable id ${JSON.stringify(stable)}`);
  }
  if (unknown.length) throw new ConfigError(VAR, `${file.path}: ${quoted(unknown)} ${unknown.length === 1 ? 'is' : 'are'} no test of the suite; copy test ids from results.json or npm test -- --list-tests`);
  return warnings;
}

/** The test id an entry names (its stable id), or undefined for a clause entry. */
const testOf = (e: ExpectationEntry): string | undefined => (isTestId(e.id) ? e.testId ?? e.id : undefined);

/** Whether an entry names this test (itself or its clause): such a failure is known and is not retried. */
export function isNamed(file: ExpectationsFile | undefined, t: Pick<TestRecord, 'id' | 'clause'>): boolean {
  return !!file?.entries.some((e) => testOf(e) === t.id || e.id === t.clause);
}

// A harness error counts as failing, but it is no evidence of the known failure: it
// confirms nothing (and fails the run whatever the file says).
const failed = (t: TestRecord) => countsAsFailing(t) && !isHarnessError(t);
const passed = countsAsPassing;

/**
 * Marks each test an entry names with the entry's outcome and sums them up. A test
 * entry judges that test; a clause entry judges the clause: it fails when any of
 * its tests fails (those are the expected failures), passes when none fails and one passes.
 */
export function applyExpectations(file: ExpectationsFile, tests: TestRecord[]): ExpectationsSummary {
  const summary: ExpectationsSummary = { file: file.path, expectedFail: 0, unexpectedPass: [], unconfirmed: [], notRun: [], updated: false };
  const mark = (t: TestRecord, e: ExpectationEntry, outcome: TestExpectation['outcome']) => {
    t.expectation = { entry: e.id, reason: e.reason, outcome };
    if (outcome === 'expected-fail') summary.expectedFail++;
  };
  // Test entries first: they are more precise than an entry for their clause.
  const ordered = [...file.entries.filter((e) => isTestId(e.id)), ...file.entries.filter((e) => !isTestId(e.id))];
  for (const e of ordered) {
    const named = tests.filter((t) => (isTestId(e.id) ? t.id === testOf(e) : t.clause === e.id) && !t.expectation);
    if (named.length === 0) { summary.notRun.push(e.id); continue; }
    if (named.some(failed)) {
      for (const t of named.filter(failed)) mark(t, e, 'expected-fail');
    } else if (named.some(passed)) {
      for (const t of named.filter(passed)) mark(t, e, 'unexpected-pass');
      summary.unexpectedPass.push(e.id);
    } else {
      for (const t of named) mark(t, e, 'unconfirmed');
      summary.unconfirmed.push(e.id);
    }
  }
  return summary;
}

/** --update-expectations: drops the entries that now pass, keeping the rest of the file (YAML comments too). */
export function removeEntries(file: ExpectationsFile, ids: string[]): void {
  if (ids.length === 0) return;
  const text = readFileSync(file.path, 'utf8');
  if (file.format === 'json') {
    const doc = JSON.parse(text) as Record<string, unknown>;
    for (const id of ids) delete doc[id];
    writeFileSync(file.path, JSON.stringify(doc, null, 2) + '\n');
  } else {
    const doc = YAML.parseDocument(text);
    const map = doc.contents;
    if (YAML.isMap(map)) {
      // A comment above an entry belongs to it in the YAML tree; one above a removed entry
      // (the file's heading, above the first) moves to the entry that follows.
      const keep = map.items.filter((p) => !ids.includes(String(YAML.isScalar(p.key) ? p.key.value : p.key)));
      let carried: string | undefined;
      for (const p of map.items) {
        const key = p.key as YAML.Scalar;
        if (!keep.includes(p)) { carried = [carried, key.commentBefore].filter(Boolean).join('\n') || undefined; continue; }
        if (carried) { key.commentBefore = [carried, key.commentBefore].filter(Boolean).join('\n'); carried = undefined; }
      }
      if (carried) doc.comment = [doc.comment, carried].filter(Boolean).join('\n');
      map.items = keep;
    }
    writeFileSync(file.path, doc.toString());
  }
}

function quoted(ids: string[]): string {
  return ids.map((id) => JSON.stringify(id)).join(', ');
}
