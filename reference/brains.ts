// The reference's one brain (a saved configuration invoked through its own route or
// the "brain:<uuid>" model form) and the id checks both routes share.
import { randomUUID } from 'node:crypto';
import type { RequestContext } from './request-context.ts';
import { badRequest, notFound, serverError } from './errors.ts';
import type { Brain } from './state.ts';

export const BRAIN_MODEL_PREFIX = 'brain:';
// Stryker disable next-line Regex: [brain-id] BRAIN-4; killed: BRAIN-1
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function createBrain(): Brain {
  // Stryker disable next-line StringLiteral: [equiv] never sent
  return { id: randomUUID(), name: 'reference-brain' };
}

/**
 * Checks a brain id (scope already checked by the caller) and returns the brain.
 * `param` names where the id came from, for the error body.
 */
// Stryker disable next-line BooleanLiteral: [equiv] caller passes it
export function resolveBrain(ctx: RequestContext, id: string, param: string | null, streaming = false): Brain {
  const brain = ctx.state.brain;
  // Stryker disable next-line ConditionalExpression,BlockStatement: [brain-id] BRAIN-4
  if (!UUID_RE.test(id)) {
    if (ctx.defect('brain-malformed-accepted')) return brain;
    if (ctx.defect('brain-malformed-id-500')) throw serverError('Internal error while loading the brain.');
    throw badRequest(`Invalid brain id "${truncate(id)}": expected a uuid.`, 'invalid_brain_id', param);
  }
  if (id.toLowerCase() === brain.id.toLowerCase() || ctx.defect('brain-unknown-accepted')) return brain;
  // stream-unknown-brain-accepted: the streaming path looks no brain up.
  if (streaming && ctx.defect('stream-unknown-brain-accepted')) return brain;
  const message = `The brain ${id} does not exist.`;
  if (streaming && ctx.variant('stream-refusals-400')) throw badRequest(message, 'brain_not_found', param);
  throw notFound(message, 'brain_not_found', param);
}

function truncate(s: string): string {
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral,MethodExpression: [msg-free] ERR-3
  return s.length > 80 ? `${s.slice(0, 80)}…` : s;
}
