// The reference's mutation triage stays out of its lines: every `// Stryker disable`
// comment in reference/ gives its reason as a tag from the table in docs/MUTATION.md
// (the reason written once there) and at most a few words, so a line of the reference is
// followed by at most one short comment.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/run-suite.ts';

const TAGS = new Set([...readFileSync(join(ROOT, 'docs/MUTATION.md'), 'utf8').matchAll(/^\| `\[([a-z0-9-]+)\]` \|/gm)].map((m) => m[1]!));
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
});
