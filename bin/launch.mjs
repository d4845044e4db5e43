// Starts one of bin/*.ts from a bundle of it that esbuild makes and keeps in
// .cache/bundles/, made again whenever one of its sources changes. Why not tsx: its
// loader hooks see every module Node loads, vitest's and vite's included, and cost about
// 2 CPU-seconds per `npm test` (a one-test run: 4.1 s under tsx, 2.0 s from the bundle),
// paid again by each of the hundreds of suite runs the self-tests make. Packages stay
// outside the bundle (resolved from node_modules as usual); each module keeps its own
// import.meta.url, so paths taken relative to a source file still point at it. Where
// .cache/ cannot be written, the entry runs under tsx as before.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIR = join(ROOT, '.cache', 'bundles');

/** Runs `entry` (a path under the project, e.g. 'bin/chatgate.ts') in this process. */
export async function launch(entry) {
  // Output to a pipe or socket is written asynchronously, and process.exit() drops what is
  // still queued (a --list-tests listing lost its last 60 lines on a busy machine): the
  // entry points write synchronously, as they did behind tsx's parent process.
  for (const stream of [process.stdout, process.stderr]) stream._handle?.setBlocking?.(true);
  // Stack traces name the TypeScript sources, as under tsx.
  process.setSourceMapsEnabled(true);
  let file;
  try {
    file = fresh(entry) ?? (await bundle(entry));
  } catch (err) {
    if (!['EACCES', 'EROFS', 'EPERM'].includes(err?.code)) throw err;
    const { register } = await import('tsx/esm/api');
    register();
    file = join(ROOT, entry);
  }
  await import(pathToFileURL(file).href);
}

const nameOf = (entry) => entry.replace(/^bin\//, '').replace(/\.ts$/, '').replace(/[^\w-]/g, '_');
const sha1 = (data) => createHash('sha1').update(data).digest('hex');
const manifestOf = (entry) => join(DIR, `${nameOf(entry)}.json`);

/** The bundle made last, if none of its sources (nor esbuild) changed since. */
function fresh(entry) {
  let m;
  try { m = JSON.parse(readFileSync(manifestOf(entry), 'utf8')); } catch { return undefined; }
  const bundleFile = join(DIR, m.bundle);
  if (m.esbuild !== esbuildVersion() || !existsSync(bundleFile)) return undefined;
  for (const [path, hash] of Object.entries(m.inputs)) {
    let now;
    try { now = sha1(readFileSync(join(ROOT, path))); } catch { return undefined; }
    if (now !== hash) return undefined;
  }
  return bundleFile;
}

function esbuildVersion() {
  return JSON.parse(readFileSync(join(ROOT, 'node_modules/esbuild/package.json'), 'utf8')).version;
}

async function bundle(entry) {
  const { build } = await import('esbuild');
  const name = nameOf(entry);
  const result = await build({
    entryPoints: [join(ROOT, entry)], bundle: true, platform: 'node', format: 'esm', target: 'node20',
    packages: 'external', write: false, metafile: true, sourcemap: 'linked', outfile: join(DIR, `${name}.mjs`),
    logLevel: 'silent', absWorkingDir: ROOT,
    plugins: [{
      name: 'own-import-meta-url',
      setup(b) {
        b.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
          const source = readFileSync(args.path, 'utf8');
          // The one piece of a module's identity a bundle would change: its own URL.
          const text = source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href));
          return { contents: text, loader: args.path.endsWith('ts') ? 'ts' : 'js' };
        });
      },
    }],
  });
  // Every file in the bundle (JSON schemas too), by the hash of its bytes.
  const inputs = Object.fromEntries(Object.keys(result.metafile.inputs).sort().map((path) => [path, sha1(readFileSync(join(ROOT, path)))]));
  const key = sha1(JSON.stringify(inputs)).slice(0, 16);
  mkdirSync(DIR, { recursive: true });
  const js = result.outputFiles.find((f) => f.path.endsWith('.mjs'));
  const map = result.outputFiles.find((f) => f.path.endsWith('.map'));
  const bundleName = `${name}-${key}.mjs`;
  // The map keeps its name beside the bundle; every writer writes the same bytes (runs start at once).
  const text = js.text.replace(/\/\/# sourceMappingURL=\S+\s*$/, `//# sourceMappingURL=${bundleName}.map\n`);
  writeAtomically(join(DIR, `${bundleName}.map`), map.text);
  writeAtomically(join(DIR, bundleName), text);
  writeAtomically(manifestOf(entry), JSON.stringify({ esbuild: esbuildVersion(), bundle: bundleName, inputs }, null, 1));
  return join(DIR, bundleName);
}

function writeAtomically(file, data) {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, file);
}
