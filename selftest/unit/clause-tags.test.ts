// A clause id that names nothing drops violations silently (a schema error tagged
// "ERR-l" would be filtered out by every test that asks for its own clause). Every
// x-clause / x-clause-required tag of every schema names a clause of the registry;
// defect declarations are typed as ClauseId[] (reference/defects.ts), and checked here too.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLAUSES } from '../../lib/spec/clauses.ts';
import { SCHEMA_DIR } from '../../lib/spec/schema-validator.ts';
import { DEFECTS } from '../../reference/defects.ts';

/** Every [pointer, clause id] of the x-clause tags in a schema document. */
function tags(node: unknown, pointer = ''): Array<[string, unknown]> {
  if (node === null || typeof node !== 'object') return [];
  const out: Array<[string, unknown]> = [];
  for (const [k, v] of Object.entries(node)) {
    if (k === 'x-clause') out.push([`${pointer}/x-clause`, v]);
    else if (k === 'x-clause-required' && v && typeof v === 'object') {
      for (const [prop, id] of Object.entries(v)) out.push([`${pointer}/x-clause-required/${prop}`, id]);
    } else out.push(...tags(v, `${pointer}/${k}`));
  }
  return out;
}

describe('clause ids outside lib/spec/clauses.ts', () => {
  const files = readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.schema.json'));
  it('finds the schemas', () => expect(files.length).toBeGreaterThanOrEqual(8));
  for (const file of files) {
    it(`every x-clause tag of schemas/${file} names a clause of the registry`, () => {
      const found = tags(JSON.parse(readFileSync(join(SCHEMA_DIR, file), 'utf8')));
      expect(found.length).toBeGreaterThan(0);
      const unknown = found.filter(([, id]) => typeof id !== 'string' || !(id in CLAUSES)).map(([p, id]) => `${p}: ${JSON.stringify(id)}`);
      expect(unknown).toEqual([]);
    });
  }
  it('every defect declares clauses of the registry', () => {
    const unknown = Object.entries(DEFECTS).flatMap(([name, d]) => d.clauses.filter((c) => !(c in CLAUSES)).map((c) => `${name}: ${c}`));
    expect(unknown).toEqual([]);
    for (const d of Object.values(DEFECTS)) expect(d.clauses.length).toBeGreaterThan(0);
  });
});
