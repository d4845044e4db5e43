// The reference's mutation triage stays out of its lines: every `// Stryker disable`
// comment in reference/ gives its reason as a tag from the table in docs/MUTATION.md
// (the reason written once there) and at most a few words, so a line of the reference is
// followed by at most one short comment.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/run-suite.ts';
import { DEFECTS } from '../../reference/defects.ts';

const TAGS = new Set([...readFileSync(join(ROOT, 'docs/MUTATION.md'), 'utf8').matchAll(/^\| `\[([a-z0-9-]+)\]` \|/gm)].map((m) => m[1]!));
// The catalogues are not mutated (stryker.config.mjs); every other file of reference/ is.
const MUTATED = readdirSync(join(ROOT, 'reference')).filter((f) => f.endsWith('.ts') && f !== 'defects.ts' && f !== 'variants.ts');
/** Files of reference/ with no directive at all, and why they need none. */
const UNTRIAGED_OK: Record<string, string> = { 'api-error.ts': 'its mutants do not compile' };
const source = (f: string) => readFileSync(join(ROOT, 'reference', f), 'utf8');
const DISABLES = readdirSync(join(ROOT, 'reference')).filter((f) => f.endsWith('.ts')).flatMap((f) =>
  readFileSync(join(ROOT, 'reference', f), 'utf8').split('\n').map((line, i) => ({ where: `reference/${f}:${i + 1}`, line: line.trim() }))
    .filter((l) => /^\/\/ Stryker disable\b/.test(l.line)));

describe('mutation triage tags', () => {
  it('reads the table and the comments it judges', () => {
    expect(TAGS.size).toBeGreaterThan(10);
    expect(DISABLES.length).toBeGreaterThan(100);
  });

  it('every disable in reference/ names a tag of docs/MUTATION.md and stays short', () => {
    const bad = DISABLES.filter(({ line }) => {
      const tag = /^\/\/ Stryker disable (?:next-line )?[\w,]+: \[([a-z0-9-]+)\]/.exec(line)?.[1];
      return !tag || !TAGS.has(tag) || line.length > 170;
    }).map(({ where, line }) => `${where}: ${line}`);
    expect(bad, 'give the reason as a tag of docs/MUTATION.md (add a row there for a new reason) and a few words').toEqual([]);
  });

  it('every mutated file of reference/ carries its triage, or says why it needs none', () => {
    const bare = MUTATED.filter((f) => !/^\s*\/\/ Stryker disable\b/m.test(source(f)) && !UNTRIAGED_OK[f]);
    expect(bare, 'a new reference file: run `npm run mutation -- --mutate reference/<file>` and tag its survivors (docs/MUTATION.md)').toEqual([]);
  });

  it('a file that serves only seeded defects marks its code a [gate] naming each of them', () => {
    // Such a file opens with the defects it serves: "// <defect>[ and <defect>]: what it does".
    const owned = MUTATED.map((f) => ({ f, names: /^\/\/ ([a-z0-9-]+(?: and [a-z0-9-]+)*):/.exec(source(f))?.[1]?.split(' and ') ?? [] }))
      .filter(({ names }) => names.length > 0 && names.every((n) => n in DEFECTS));
    expect(owned.map(({ f }) => f)).toEqual(expect.arrayContaining(['cross-talk.ts', 'buffered-stream.ts', 'goes-away.ts']));
    const ungated = owned.filter(({ f, names }) => {
      const gates = source(f).split('\n').filter((l) => /^\s*\/\/ Stryker disable all: \[gate\]/.test(l));
      return !names.every((n) => gates.some((g) => g.includes(n)));
    }).map(({ f, names }) => `${f} (${names.join(', ')})`);
    expect(ungated, 'a `// Stryker disable all: [gate] <defect> <clause>` after its imports').toEqual([]);
  });
});
