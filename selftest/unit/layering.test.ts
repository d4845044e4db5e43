// The layering docs/ARCHITECTURE.md states, checked on the imports themselves: lib/
// imports nothing of the project outside lib/; lib/spec/ imports only types from outside
// itself (the k6 bundles take its modules whole); runner/ and fuzz/ meet only through
// the rule registry (lib/spec/rules/), never by importing each other.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const rel = join(dir, name);
    return statSync(join(ROOT, rel)).isDirectory() ? files(rel) : rel.endsWith('.ts') ? [rel] : [];
  });
}

/** Each relative import of a file: the project path it names, and whether it is `import type`. */
function imports(file: string): Array<{ target: string; typeOnly: boolean }> {
  const src = readFileSync(join(ROOT, file), 'utf8');
  const out: Array<{ target: string; typeOnly: boolean }> = [];
  for (const m of src.matchAll(/^\s*(import|export)(\s+type)?\b[^'"]*?from\s+'(\.[^']+)'/gm)) {
    out.push({ target: relative(ROOT, resolve(ROOT, dirname(file), m[3]!)), typeOnly: !!m[2] });
  }
  return out;
}

const under = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);

describe('layering', () => {
  it('finds the imports it judges (a check that reads nothing cannot fail)', () => {
    expect(imports('lib/spec/rules/response-rules.ts').map((i) => i.target)).toContain('lib/spec/rules/status.ts');
    expect(imports('fuzz/oracles.ts').map((i) => i.target)).toContain('lib/spec/rules/response-rules.ts');
  });

  it('lib/ imports nothing of the project outside lib/', () => {
    const out = files('lib').flatMap((f) => imports(f).filter((i) => !under(i.target, 'lib')).map((i) => `${f} -> ${i.target}`));
    expect(out).toEqual([]);
  });

  it('lib/spec/ imports only types from outside lib/spec/', () => {
    const out = files('lib/spec').flatMap((f) => imports(f).filter((i) => !under(i.target, 'lib/spec') && !i.typeOnly).map((i) => `${f} -> ${i.target}`));
    expect(out).toEqual([]);
  });

  it('runner/ and fuzz/ do not import each other', () => {
    const out = [
      ...files('runner').flatMap((f) => imports(f).filter((i) => under(i.target, 'fuzz')).map((i) => `${f} -> ${i.target}`)),
      ...files('fuzz').flatMap((f) => imports(f).filter((i) => under(i.target, 'runner')).map((i) => `${f} -> ${i.target}`)),
    ];
    expect(out).toEqual([]);
  });
});
