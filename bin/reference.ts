// `npm run reference`: runs the reference server on its own, for trying the suite or
// a client against it by hand. Prints the URL, the per-run keys (local use only:
// they die with the process) and a ready-to-paste `npm test` line.
import { parseArgs } from 'node:util';
import { DEFECTS } from '../reference/defects.ts';
import { VARIANTS } from '../reference/variants.ts';
import { referenceOptionsFromEnv, startReferenceServer, type ReferenceOptions } from '../reference/server.ts';
import type { EngineModelOptions } from '../reference/engine-model.ts';

const USAGE = 'usage: npm run reference -- [--port N] [--defect NAME] [--variant NAME]... [--engine [--max-batch N] [--prefill-tps N] [--decode-step-ms MS] [--decode-step-per-seq-ms MS]] [--json] [--list]';

/** The engine model's flags (docs/REHEARSAL.md) and the option each sets. */
const ENGINE_FLAGS = {
  '--max-batch': 'maxBatch',
  '--prefill-tps': 'prefillTokensPerS',
  '--decode-step-ms': 'decodeStepMs',
  '--decode-step-per-seq-ms': 'decodeStepPerSeqMs',
} as const;

class UsageError extends Error {}

interface Flags {
  port?: number;
  defect?: string;
  variants: string[];
  json: boolean;
  list: boolean;
  /** Set by --engine (or any engine flag): the rehearsal engine model's options. */
  engine?: Partial<EngineModelOptions>;
}

function parseFlags(argv: string[]): Flags {
  const flags: Flags = { variants: [], json: false, list: false };
  // node:util's parser splits the command line; non-strict, so each mistake gets the one-line message below.
  const { tokens } = parseArgs({
    args: argv, strict: false, allowPositionals: true, tokens: true,
    options: {
      port: { type: 'string', multiple: true }, defect: { type: 'string', multiple: true }, variant: { type: 'string', multiple: true },
      json: { type: 'boolean' }, list: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, engine: { type: 'boolean' },
      ...Object.fromEntries(Object.keys(ENGINE_FLAGS).map((f) => [f.slice(2), { type: 'string' as const, multiple: true }])),
    },
  });
  for (const token of tokens) {
    if (token.kind !== 'option') throw new UsageError(`unknown flag "${token.kind === 'positional' ? token.value : '--'}"`);
    const name = token.rawName;
    const value = (): string => {
      const v = token.value;
      if (v === undefined || (!token.inlineValue && v.startsWith('--'))) throw new UsageError(`${name} needs a value`);
      return v;
    };
    switch (name) {
      case '--port': {
        const raw = value();
        const n = Number(raw);
        if (!/^\d+$/.test(raw) || n > 65535) throw new UsageError(`--port must be an integer 0-65535 (got "${raw}")`);
        flags.port = n;
        break;
      }
      case '--defect': {
        const d = value();
        if (!(d in DEFECTS)) throw new UsageError(`unknown defect "${d}" (see --list)`);
        flags.defect = d;
        break;
      }
      case '--variant': {
        const v = value();
        if (!(v in VARIANTS)) throw new UsageError(`unknown variant "${v}" (see --list)`);
        flags.variants.push(v);
        break;
      }
      case '--json':
        flags.json = true;
        break;
      case '--engine':
        flags.engine ??= {};
        break;
      case '--max-batch':
      case '--prefill-tps':
      case '--decode-step-ms':
      case '--decode-step-per-seq-ms': {
        const raw = value();
        if (!/^\d*\.?\d+$/.test(raw)) throw new UsageError(`${name} must be a non-negative number (got "${raw}")`);
        flags.engine = { ...flags.engine, [ENGINE_FLAGS[name]]: Number(raw) };
        break;
      }
      case '--list':
        flags.list = true;
        break;
      case '--help':
      case '-h':
        console.log(USAGE);
        process.exit(0);
      // falls through (process.exit never returns)
      default:
        throw new UsageError(`unknown flag "${name}${token.inlineValue ? `=${token.value}` : ''}"`);
    }
  }
  return flags;
}

function printList(): void {
  const width = Math.max(...Object.keys(DEFECTS).map((k) => k.length), ...Object.keys(VARIANTS).map((k) => k.length));
  console.log(`Defects (${Object.keys(DEFECTS).length}): each breaks the clauses in brackets`);
  for (const [name, d] of Object.entries(DEFECTS)) console.log(`  ${name.padEnd(width)}  [${d.clauses.join(', ')}] ${d.description}`);
  console.log(`\nVariants (${Object.keys(VARIANTS).length}): legal behaviour the suite must pass`);
  for (const [name, v] of Object.entries(VARIANTS)) console.log(`  ${name.padEnd(width)}  ${v.description}`);
}

async function main(): Promise<void> {
  let flags: Flags;
  let options: ReferenceOptions;
  try {
    flags = parseFlags(process.argv.slice(2));
    const env = referenceOptionsFromEnv(process.env);
    // Flags win over the environment; variants from both are combined.
    options = {
      ...env,
      ...(flags.port !== undefined ? { port: flags.port } : {}),
      ...(flags.defect !== undefined ? { defect: flags.defect } : {}),
      variants: [...new Set([...(env.variants ?? []), ...flags.variants])],
      ...(flags.engine ? { engine: flags.engine } : {}),
    };
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`reference: ${e.message}. ${USAGE}`);
      process.exit(2);
    }
    throw e;
  }
  if (flags.list) {
    printList();
    return;
  }

  let ref;
  try {
    ref = await startReferenceServer(options);
  } catch (e) {
    // Bad names from the environment, or the port is taken.
    console.error(`reference: ${(e as Error).message}`);
    process.exit(2);
  }

  if (flags.json) {
    console.log(JSON.stringify({ url: ref.url, keys: ref.keys, brainId: ref.brainId, models: ref.models, ...(ref.controlUrl ? { controlUrl: ref.controlUrl } : {}) }));
  } else {
    const mode = [options.defect ? `defect ${options.defect}` : 'conformant', ...(options.variants ?? []).map((v) => `variant ${v}`), ...(flags.engine ? ['engine model'] : [])];
    console.log(`chatgate reference server (${mode.join(', ')})`);
    console.log(`  URL:                 ${ref.url}`);
    console.log(`  brain id:            ${ref.brainId}`);
    console.log(`  models:              ${ref.models.join(', ')}`);
    if (flags.engine) console.log(`  engine model:        ${Object.entries(flags.engine).map(([k, v]) => `${k} ${v}`).join(', ') || 'defaults'} (docs/REHEARSAL.md)`);
    if (ref.controlUrl) console.log(`  engine changes:      ${ref.controlUrl} (POST /engine/slots?n=&seconds=, /engine/restart?down_seconds=; docs/LOAD.md)`);
    console.log('  keys (this run only, for local use):');
    console.log(`    main (brains:invoke):       ${ref.keys.main}`);
    console.log(`    limited (no scopes):        ${ref.keys.limited}`);
    console.log(`    rateLimit (low limit):      ${ref.keys.rateLimit}`);
    console.log('\nRun the suite against it:');
    console.log(
      `  TARGET_URL=${ref.url} API_KEY=${ref.keys.main} LIMITED_API_KEY=${ref.keys.limited} BRAIN_ID=${ref.brainId} RATE_LIMIT_API_KEY=${ref.keys.rateLimit} npm test`,
    );
    console.log('\nCtrl-C to stop.');
  }

  const stop = (signal: string) => {
    if (!flags.json) console.log(`\n${signal}: closing`);
    ref.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

await main();
