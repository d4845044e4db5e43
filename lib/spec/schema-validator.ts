// Compiles schemas/*.schema.json once (ajv, strict, JSON Schema 2020-12) and turns
// validation errors into clause violations: each schema constraint carries the
// clause it enforces in `x-clause` (or `x-clause-required` for required members),
// so an error becomes "clause X broken at JSON pointer Y".
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import standaloneCode from 'ajv/dist/standalone/index.js';

export const SCHEMA_NAMES = [
  'chat-completion', 'choice', 'message', 'usage', 'error',
  'chat-completion-chunk', 'model-list', 'chat-request',
] as const;
export type SchemaName = (typeof SCHEMA_NAMES)[number];

export interface SchemaViolation {
  clause: string;
  /** JSON pointer of the offending value ('' = the document itself). */
  pointer: string;
  message: string;
  keyword: string;
}

export interface ValidationResult { valid: boolean; errors: SchemaViolation[] }

export const SCHEMA_DIR = fileURLToPath(new URL('../../schemas/', import.meta.url));

/** Reads every schema document; exported for tools that compile them elsewhere (k6 bundles). */
export function loadSchemas(): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const file of readdirSync(SCHEMA_DIR)) {
    if (!file.endsWith('.schema.json')) continue;
    out[file.replace('.schema.json', '')] = JSON.parse(readFileSync(join(SCHEMA_DIR, file), 'utf8'));
  }
  return out;
}

/** A strict ajv that knows our two annotation keywords. */
export function createAjv(options: { code?: { source?: boolean; esm?: boolean } } = {}): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true, verbose: true, ...options });
  ajv.addKeyword({ keyword: 'x-clause', schemaType: 'string' });
  ajv.addKeyword({ keyword: 'x-clause-required', schemaType: 'object' });
  return ajv;
}

let compiled: Map<SchemaName, ValidateFunction> | undefined;

// Compiling the schemas takes ajv 0.3 to 0.8 CPU-seconds in every process and worker that
// validates (a suite run has three), so the compiled code is kept in .cache/ajv/ as ajv's
// standalone module, named by a hash of the schemas and ajv's version, and loaded from there.
const CACHE_DIR = fileURLToPath(new URL('../../.cache/ajv/', import.meta.url));
const require = createRequire(import.meta.url);
const AJV_VERSION = (require('ajv/package.json') as { version: string }).version;

function validators(): Map<SchemaName, ValidateFunction> {
  if (compiled) return compiled;
  const docs = loadSchemas();
  for (const name of SCHEMA_NAMES) if (!docs[name]) throw new Error(`schemas/${name}.schema.json is missing`);
  const ids = Object.fromEntries(SCHEMA_NAMES.map((name) => [name, String(docs[name]!.$id)]));
  const key = createHash('sha1').update(JSON.stringify([AJV_VERSION, createAjv.toString(), docs, ids])).digest('hex').slice(0, 16);
  const file = join(CACHE_DIR, `validators-${key}.cjs`);
  let fns: Record<string, ValidateFunction> | undefined;
  if (existsSync(file)) {
    try { fns = require(file) as Record<string, ValidateFunction>; } catch { fns = undefined; }
  }
  if (!fns) {
    const ajv = createAjv({ code: { source: true } });
    for (const doc of Object.values(docs)) ajv.addSchema(doc);
    fns = Object.fromEntries(SCHEMA_NAMES.map((name) => [name, ajv.getSchema(ids[name]!)!]));
    try {
      mkdirSync(CACHE_DIR, { recursive: true });
      const tmp = `${file}.${process.pid}.${threadId}.tmp`;
      writeFileSync(tmp, standaloneCode(ajv, ids));
      renameSync(tmp, file);
    } catch { /* a read-only checkout compiles every time */ }
  }
  compiled = new Map(SCHEMA_NAMES.map((name) => [name, fns![name]!]));
  return compiled;
}

export function validate(name: SchemaName, data: unknown): ValidationResult {
  const fn = validators().get(name)!;
  if (fn(data)) return { valid: true, errors: [] };
  return { valid: false, errors: toViolations(fn.errors ?? [], rootClause(name)) };
}

function rootClause(name: SchemaName): string {
  const doc = loadSchemasCached()[name];
  return String(doc?.['x-clause'] ?? 'unknown');
}

let schemaDocs: Record<string, Record<string, unknown>> | undefined;
function loadSchemasCached() { return (schemaDocs ??= loadSchemas()); }

function toViolations(errors: ErrorObject[], fallback: string): SchemaViolation[] {
  const out: SchemaViolation[] = [];
  // anyOf branches report one error each; their branch subschemas carry no clause,
  // and the anyOf error on the same value says it better, so drop them.
  const anyOfPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  for (const e of errors) {
    const parent = (e.parentSchema ?? {}) as Record<string, unknown>;
    if (e.keyword !== 'anyOf' && parent['x-clause'] === undefined && anyOfPaths.has(e.instancePath)) continue;
    let pointer = e.instancePath;
    let clauseId = typeof parent['x-clause'] === 'string' ? parent['x-clause'] : fallback;
    let message: string;
    if (e.keyword === 'required') {
      const prop = String((e.params as { missingProperty: string }).missingProperty);
      pointer = `${e.instancePath}/${escapePointer(prop)}`;
      const perProp = parent['x-clause-required'] as Record<string, string> | undefined;
      if (perProp?.[prop]) clauseId = perProp[prop];
      message = `${pointer} is missing`;
    } else if (e.keyword === 'const') {
      const allowed = (e.params as { allowedValue: unknown }).allowedValue;
      message = `${pointer || '(document)'} must be ${describe(allowed)} (seen ${describe(e.data)})`;
    } else {
      message = `${pointer || '(document)'} ${e.message ?? 'is invalid'} (seen ${describe(e.data)})`;
    }
    out.push({ clause: clauseId, pointer, message, keyword: e.keyword });
  }
  return out;
}

function escapePointer(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A short, JSON-ish rendering of a seen value for messages. */
export function describe(value: unknown, max = 80): string {
  let s: string;
  try { s = value === undefined ? 'undefined' : JSON.stringify(value); } catch { s = String(value); }
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** The error-body schema check for lib/spec/error-body.ts (the k6 bundles pass their standalone validator instead). */
export function errorSchemaProblems(json: unknown): string[] {
  return validate('error', json).errors.map((v) => v.message);
}
