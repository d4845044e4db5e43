// Checks bodies against schemas/*.schema.json through the validators the build
// generated with ajv standalone (no ajv at run time, no schema files to open: the
// same judgement the Node suite makes, inside the bundle). An error names the
// clause its constraint carries in x-clause / x-clause-required, like
// lib/spec/schema-validator.ts does.
import { chatCompletion, chatCompletionChunk, errorBody, modelList, type AjvError, type StandaloneValidator } from 'chatgate:validators';

export type ShapeName = 'chat-completion' | 'chat-completion-chunk' | 'error' | 'model-list';

const VALIDATORS: Record<ShapeName, StandaloneValidator> = {
  'chat-completion': chatCompletion,
  'chat-completion-chunk': chatCompletionChunk,
  error: errorBody,
  'model-list': modelList,
};

/** The clause a schema breaks when nothing more precise is known (its root x-clause). */
const ROOT_CLAUSE: Record<ShapeName, string> = {
  'chat-completion': 'SVC-1',
  'chat-completion-chunk': 'EV-3',
  error: 'ERR-1',
  'model-list': 'MOD-1',
};

export interface ShapeResult {
  ok: boolean;
  /** Clause of the first violation. */
  clause: string;
  /** "clause: pointer message" of the first violations, for logs. */
  problems: string[];
}

function describeError(e: AjvError, fallback: string): { clause: string; text: string } {
  const parent = e.parentSchema ?? {};
  let clause = typeof parent['x-clause'] === 'string' ? (parent['x-clause'] as string) : fallback;
  let pointer = e.instancePath;
  if (e.keyword === 'required') {
    const prop = String(e.params.missingProperty);
    pointer = `${e.instancePath}/${prop}`;
    const perProp = parent['x-clause-required'] as Record<string, string> | undefined;
    if (perProp && perProp[prop]) clause = perProp[prop]!;
    return { clause, text: `${clause}: ${pointer} is missing` };
  }
  return { clause, text: `${clause}: ${pointer || '(document)'} ${e.message ?? 'is invalid'}` };
}

export function checkShape(name: ShapeName, data: unknown): ShapeResult {
  const validate = VALIDATORS[name];
  if (validate(data)) return { ok: true, clause: '', problems: [] };
  const described = (validate.errors ?? []).map((e) => describeError(e, ROOT_CLAUSE[name]));
  return {
    ok: false,
    clause: described.length > 0 ? described[0]!.clause : ROOT_CLAUSE[name],
    problems: described.slice(0, 3).map((d) => d.text),
  };
}

/** Parses a JSON body; undefined when it is not JSON (an empty 429 body, text/plain...). */
export function parseJson(body: string | null | undefined): unknown {
  if (body === null || body === undefined || body === '') return undefined;
  try {
    return JSON.parse(body);
  } catch (_e) {
    return undefined;
  }
}
