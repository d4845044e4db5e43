// Compiles schemas/*.schema.json once (ajv, strict, JSON Schema 2020-12) and turns
// validation errors into clause violations: each schema constraint carries the
// clause it enforces in `x-clause` (or `x-clause-required` for required members),
// so an error becomes "clause X broken at JSON pointer Y".
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

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

function validators(): Map<SchemaName, ValidateFunction> {
  if (compiled) return compiled;
  const ajv = createAjv();
  const docs = loadSchemas();
  for (const doc of Object.values(docs)) ajv.addSchema(doc);
  compiled = new Map();
  for (const name of SCHEMA_NAMES) {
    const doc = docs[name];
    if (!doc) throw new Error(`schemas/${name}.schema.json is missing`);
    compiled.set(name, ajv.getSchema(String(doc.$id))!);
  }
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
