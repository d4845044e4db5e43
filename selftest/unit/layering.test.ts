// The layering docs/ARCHITECTURE.md states, checked on the imports themselves: lib/
// imports nothing of the project outside lib/; lib/spec/ imports only types from outside
// itself (the k6 bundles take its modules whole); runner/ and fuzz/ meet only through
// the rule registry (lib/spec/rules/), never by importing each other; no import circle
// anywhere (type-only imports count); reference/ files import only their own or lower layers.
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
  for (const m of src.matchAll(/^\s*(import|export)(\s+type)?\b[^'"]*?from\s+'(\.[^']+)'|^\s*import\s+'(\.[^']+)'/gm)) {
    out.push({ target: relative(ROOT, resolve(ROOT, dirname(file), (m[3] ?? m[4])!)), typeOnly: !!m[2] });
  }
  return out;
}

/** Every .ts file of the project: its sources, tests and tools, not what is installed or generated. */
const NOT_SOURCE = new Set(['node_modules', 'reports', '.git', '.cache', '.stryker-tmp', 'load/k6/dist']);
function projectFiles(dir = ''): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const rel = dir ? join(dir, name) : name;
    if (NOT_SOURCE.has(rel)) return [];
    return statSync(join(ROOT, rel)).isDirectory() ? projectFiles(rel) : rel.endsWith('.ts') ? [rel] : [];
  });
}

/** One circle per strongly connected part of the graph (Tarjan), written `a -> b -> a`. */
function circles(graph: Map<string, string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const parts: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      part.push(w);
    } while (w !== v);
    if (part.length > 1 || graph.get(v)!.includes(v)) parts.push(part);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return parts.map((part) => {
    // The shortest way from the part's first file back to itself, through the part only.
    const inPart = new Set(part);
    const start = part.sort()[0]!;
    const from = new Map<string, string>();
    const queue = [start];
    while (queue.length) {
      const v = queue.shift()!;
      const next = (graph.get(v) ?? []).filter((w) => inPart.has(w));
      if (next.includes(start)) {
        const path = [v];
        while (path[0] !== start) path.unshift(from.get(path[0]!)!);
        return [...path, start].join(' -> ');
      }
      for (const w of next) if (!from.has(w)) from.set(w, v), queue.push(w);
    }
    return part.join(' -> ');
  });
}

/**
 * reference/ bottom to top: a file imports only its own layer or lower ones. A file not
 * named here sits in the lowest layer its imports allow (a new defect's helper file needs
 * no entry until a lower file imports it and the check says where it must go).
 */
const REFERENCE_LAYERS: Array<[layer: string, files: string[]]> = [
  // What a running server is and holds: switch tables, options, keys, limits, counters, the engine model, reply text, delays.
  ['state', ['defects', 'variants', 'keys', 'options', 'rate-limit', 'state', 'engine-model', 'engine-runtime', 'generate', 'latency']],
  // Writing responses: the request context and its bodies, error bodies, SSE framing.
  ['wire', ['api-error', 'request-context', 'errors', 'sse-writer']],
  // Reading requests: the chat body's parsing and validation, authentication, brain ids.
  ['request', ['chat-request', 'auth', 'brains']],
  // What a reply is: the completion and its plan, the stream plan, the engine's stream.
  ['reply', ['completion', 'stream-plan', 'engine-reply']],
  // Paths to handlers and the server that dispatches them.
  ['routes', ['routes', 'models', 'unavailable', 'chat', 'server']],
];

/** Each reference/ file's layer (its index in REFERENCE_LAYERS), unnamed files placed by their imports. */
function referenceLayers(): { layerOf: Map<string, number>; named: Map<string, number> } {
  const named = new Map<string, number>(REFERENCE_LAYERS.flatMap(([, names], i) => names.map((n) => [`reference/${n}.ts`, i] as [string, number])));
  const layerOf = new Map<string, number>();
  const place = (file: string, seen: Set<string>): number => {
    if (named.has(file)) return named.get(file)!;
    if (layerOf.has(file)) return layerOf.get(file)!;
    // A circle among unnamed files has no lowest layer; the no-circle check reports it.
    if (seen.has(file)) return 0;
    seen.add(file);
    const within = imports(file).filter((i) => under(i.target, 'reference') && i.target.endsWith('.ts'));
    const layer = Math.max(0, ...within.map((i) => place(i.target, seen)));
    layerOf.set(file, layer);
    return layer;
  };
  for (const f of files('reference')) layerOf.set(f, place(f, new Set()));
  return { layerOf, named };
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

  it('finds a circle where there is one (the graph check reads what it judges)', () => {
    const graph = new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts', 'd.ts']], ['c.ts', ['a.ts']], ['d.ts', ['d.ts']], ['e.ts', ['a.ts']]]);
    expect(circles(graph).sort()).toEqual(['a.ts -> b.ts -> c.ts -> a.ts', 'd.ts -> d.ts']);
    expect(imports('reference/chat.ts').map((i) => i.target)).toContain('reference/request-context.ts');
  });

  it('the whole project imports in no circle (type-only imports included)', () => {
    const all = projectFiles();
    expect(all.length).toBeGreaterThan(200);
    expect(all).toContain('reference/request-context.ts');
    const graph = new Map(all.map((f) => [f, imports(f).map((i) => i.target)]));
    expect(circles(graph)).toEqual([]);
  });

  it('every file the reference layers name exists', () => {
    const { named } = referenceLayers();
    expect([...named.keys()].filter((f) => !statSync(join(ROOT, f), { throwIfNoEntry: false }))).toEqual([]);
  });

  it('a reference/ file imports only its own or lower layers', () => {
    const { layerOf } = referenceLayers();
    const name = (f: string) => REFERENCE_LAYERS[layerOf.get(f)!]![0];
    const out = files('reference').flatMap((f) =>
      imports(f)
        .filter((i) => layerOf.has(i.target) && layerOf.get(i.target)! > layerOf.get(f)!)
        .map((i) => `${f} (${name(f)}) -> ${i.target} (${name(i.target)})`));
    expect(out).toEqual([]);
  });
});
