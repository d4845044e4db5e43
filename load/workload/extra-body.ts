// Request fields a real server needs that chatgate does not set itself (ignore_eos,
// min_tokens, temperature, ...): one JSON object, merged into every request body of
// every engine (Node lean client, autocannon, the k6 scripts). Fields the harness owns
// are refused: overriding them would make the report describe requests it did not send.
// Plain module (no Node APIs): k6 bundles it.
import { WorkloadInputError } from './input-error.ts';

/** Set by the harness from its own options (the flag that sets each). */
const OWNED: Record<string, string> = {
  messages: 'the workload (--prompt, --prompt-tokens, --dataset)',
  model: '--model',
  stream: 'the scenario',
  stream_options: 'the harness (it asks include_usage to count tokens)',
  max_tokens: '--max-tokens or --output-tokens',
};

/** Parses the JSON text of an extra body; `source` (flag, variable or file) names it in errors. */
export function parseExtraBody(text: string, source: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new WorkloadInputError(`${source}: not JSON (${(e as Error).message}); give one object, e.g. '{"ignore_eos": true}' or @file.json`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new WorkloadInputError(`${source}: not a JSON object; give one object, e.g. '{"ignore_eos": true}'`);
  for (const k of Object.keys(v)) {
    if (OWNED[k]) throw new WorkloadInputError(`${source}: "${k}" is set by ${OWNED[k]}; drop it from the extra body`);
  }
  return v as Record<string, unknown>;
}

/** Copies the extra fields into a body (the extra object is the run's, shared: values are not copied deeply). */
export function withExtraBody(body: Record<string, unknown>, extra: Record<string, unknown> | undefined): Record<string, unknown> {
  if (extra) for (const k of Object.keys(extra)) body[k] = extra[k];
  return body;
}

/** The run's extra fields from the options' canonical JSON text (undefined without --extra-body). */
export function extraBodyOf(o: { extraBody?: string }): Record<string, unknown> | undefined {
  return o.extraBody === undefined ? undefined : JSON.parse(o.extraBody) as Record<string, unknown>;
}
