// `npm run build:k6`: bundles each load/k6/scripts/*.ts into one plain-JavaScript
// ES module in load/k6/dist/ that any k6 can run, with or without native
// TypeScript support, offline, from a single file (what a k6-operator ConfigMap
// holds).
//
// The schemas travel inside the bundles as code: ajv's standalone mode compiles
// schemas/*.schema.json (with the project's own createAjv, so x-clause annotations
// and strict mode are the suite's) into validator functions; that source is
// bundled once into dist/validators.js and each script imports it as the virtual
// module "chatgate:validators". No ajv, no schema files and no eval at run time.
import { build, type Metafile, type Plugin } from 'esbuild';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { createAjv, loadSchemas } from '../../lib/spec/schema-validator.ts';

export const K6_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT_DIR = join(K6_DIR, '..', '..');
export const SCRIPTS_DIR = join(K6_DIR, 'scripts');
export const DEFAULT_OUTDIR = join(K6_DIR, 'dist');

/** Export name in chatgate:validators -> schema file (schemas/<name>.schema.json). */
export const VALIDATOR_EXPORTS = {
  chatCompletion: 'chat-completion',
  chatCompletionChunk: 'chat-completion-chunk',
  errorBody: 'error',
  modelList: 'model-list',
} as const;

/** es2017: old k6 versions (goja before ES2018+ syntax) run the output as well as current ones. */
export const TARGET = 'es2017';
/**
 * The second output, dist/base/: CommonJS (`require('k6/http')`, `module.exports`),
 * ES2015, for `k6 run --compatibility-mode=base`. k6 v0.34 to v0.48 run an ES module
 * through their built-in Babel first, which costs about 10 s per start; base mode skips
 * Babel, but accepts only CommonJS. ES2015 because that is what goja, k6's engine, ran
 * natively before k6 added newer syntax; the bundles use no async and no generators.
 */
export const BASE_TARGET = 'es2015';
export const BASE_SUBDIR = 'base';

export function scriptNames(): string[] {
  return readdirSync(SCRIPTS_DIR).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3)).sort();
}

/** ES module source of the standalone validators (it still requires ajv's small runtime helpers). */
export function validatorsSource(): string {
  const ajv = createAjv({ code: { source: true, esm: true } });
  const docs = loadSchemas();
  for (const doc of Object.values(docs)) ajv.addSchema(doc);
  const refs: Record<string, string> = {};
  for (const [name, file] of Object.entries(VALIDATOR_EXPORTS)) {
    const doc = docs[file];
    if (!doc) throw new Error(`schemas/${file}.schema.json is missing`);
    refs[name] = String(doc.$id);
  }
  return standaloneCode(ajv, refs);
}

export interface BundleInfo {
  name: string;
  file: string;
  bytes: number;
  /** Import paths left in the output (only k6 modules are allowed). */
  imports: string[];
  exports: string[];
}

export interface BuildResult { outdir: string; validators: BundleInfo; bundles: BundleInfo[]; baseBundles: BundleInfo[] }

const K6_MODULE = /^k6(\/|$)/;

function describe(metafile: Metafile, outfile: string, name: string): BundleInfo {
  // Output keys are relative to absWorkingDir (ROOT_DIR below).
  const out = metafile.outputs[relative(ROOT_DIR, outfile).split('\\').join('/')];
  if (!out) throw new Error(`esbuild reported no output for ${outfile}`);
  return { name, file: outfile, bytes: out.bytes, imports: out.imports.map((i) => i.path), exports: out.exports };
}

/** The names a CommonJS bundle exports: esbuild writes them in one `__export(x_exports, { name: () => ..., ... })`. */
export function cjsExports(code: string): string[] {
  const m = /^__export\(\w+, \{\n([\s\S]*?)\n\}\);$/m.exec(code);
  if (!m) return [];
  return m[1]!.split('\n').map((l) => /^\s*(\w+): /.exec(l)?.[1]).filter((n): n is string => n !== undefined);
}

/** Refuses a bundle that still imports anything k6 does not provide (node:, npm packages). */
function assertOnlyK6Imports(info: BundleInfo): void {
  const stray = info.imports.filter((p) => !K6_MODULE.test(p));
  if (stray.length > 0) throw new Error(`${relative(ROOT_DIR, info.file)} still imports ${stray.join(', ')}: k6 cannot resolve these; bundle them or drop them`);
}

export async function buildK6(opts: { outdir?: string; scripts?: string[] } = {}): Promise<BuildResult> {
  const outdir = opts.outdir ?? DEFAULT_OUTDIR;
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });

  // 1. The validators, self-contained (ajv's runtime helpers such as ucs2length bundled in).
  const validatorsFile = join(outdir, 'validators.js');
  const v = await build({
    stdin: { contents: validatorsSource(), resolveDir: ROOT_DIR, sourcefile: 'chatgate-validators.generated.js', loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    target: TARGET,
    outfile: validatorsFile,
    metafile: true,
    legalComments: 'none',
    banner: { js: '// chatgate: JSON Schema validators generated from schemas/*.schema.json by load/k6/build.ts (ajv standalone). Do not edit.' },
    logLevel: 'silent',
    absWorkingDir: ROOT_DIR,
  });
  const validators = describe(v.metafile, validatorsFile, 'validators');
  if (validators.imports.length > 0) throw new Error(`validators.js still imports ${validators.imports.join(', ')}`);

  // 2. Each script, with chatgate:validators pointing at the file above.
  const virtual: Plugin = {
    name: 'chatgate-validators',
    setup(b) {
      b.onResolve({ filter: /^chatgate:validators$/ }, () => ({ path: validatorsFile }));
    },
  };
  // CommonJS bundles: every module that imports k6/http would get its own
  // require("k6/http"), and on k6 v0.40 each require is a separate instance of the
  // module, so setResponseCallback on one misses the requests sent through another.
  // All imports of k6/http resolve to this one shim instead, which requires it once.
  const httpOnce: Plugin = {
    name: 'chatgate-k6-http-once',
    setup(b) {
      b.onResolve({ filter: /^k6\/http$/ }, (args) => (args.namespace === 'k6-http-once' ? { path: 'k6/http', external: true } : { path: 'k6/http', namespace: 'k6-http-once' }));
      b.onLoad({ filter: /.*/, namespace: 'k6-http-once' }, () => ({ contents: 'module.exports = require("k6/http");', loader: 'js', resolveDir: ROOT_DIR }));
    },
  };
  // One build of a script: ES module (k6's default mode) or CommonJS (--compatibility-mode=base).
  const bundle = async (name: string, base: boolean): Promise<BundleInfo> => {
    const outfile = base ? join(outdir, BASE_SUBDIR, `${name}.js`) : join(outdir, `${name}.js`);
    const r = await build({
      entryPoints: [join(SCRIPTS_DIR, `${name}.ts`)],
      bundle: true,
      format: base ? 'cjs' : 'esm',
      // neutral: nothing from Node is assumed; a node: import fails the build.
      platform: 'neutral',
      mainFields: ['module', 'main'],
      target: base ? BASE_TARGET : TARGET,
      external: ['k6', 'k6/*'],
      plugins: base ? [virtual, httpOnce] : [virtual],
      outfile,
      metafile: true,
      legalComments: 'none',
      banner: { js: base
        ? `// chatgate k6 script built from load/k6/scripts/${name}.ts by \`npm run build:k6\` as CommonJS for \`k6 run --compatibility-mode=base\`. Do not edit; see docs/K6.md.`
        : `// chatgate k6 script built from load/k6/scripts/${name}.ts by \`npm run build:k6\`. Do not edit; see docs/K6.md.` },
      logLevel: 'silent',
      absWorkingDir: ROOT_DIR,
    });
    const info = describe(r.metafile, outfile, name);
    if (base) info.exports = cjsExports(readFileSync(outfile, 'utf8'));
    assertOnlyK6Imports(info);
    for (const needed of base ? ['default', 'options', 'handleSummary', 'setup'] : ['default', 'options', 'handleSummary']) {
      if (!info.exports.includes(needed)) throw new Error(`${name}${base ? ' (base)' : ''}: the bundle does not export ${needed}`);
    }
    return info;
  };
  const bundles: BundleInfo[] = [];
  for (const name of opts.scripts ?? scriptNames()) bundles.push(await bundle(name, false));
  // 3. The same scripts as CommonJS for --compatibility-mode=base (see BASE_TARGET).
  const baseBundles: BundleInfo[] = [];
  for (const name of opts.scripts ?? scriptNames()) baseBundles.push(await bundle(name, true));
  return { outdir, validators, bundles, baseBundles };
}

async function main(): Promise<void> {
  const result = await buildK6();
  const rel = (f: string) => relative(process.cwd(), f) || f;
  console.log(`k6 bundles (ES modules, target ${TARGET}; ${BASE_SUBDIR}/: CommonJS, target ${BASE_TARGET}, for --compatibility-mode=base; k6 modules external) in ${rel(result.outdir)}:`);
  for (const b of [result.validators, ...result.bundles, ...result.baseBundles]) {
    const imports = b.imports.length ? `imports ${[...new Set(b.imports)].join(', ')}` : 'no imports';
    console.log(`  ${rel(b.file).padEnd(40)} ${(b.bytes / 1024).toFixed(1).padStart(6)} KiB  ${imports}`);
  }
  console.log('run one with e.g.: TARGET_URL=... API_KEY=... k6 run --no-usage-report load/k6/dist/chat-throughput.js (see docs/K6.md)');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(`build:k6: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}
