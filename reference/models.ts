// GET /models (OpenAI's list shape) and GET /models/{id}, with the model-list defects.
import { sendBody, sendJson, type RequestContext } from './request-context.ts';
import { forbidden, notFound } from './errors.ts';
import { SCOPE_BRAINS_INVOKE } from './keys.ts';

export const SERVICE_MODELS = ['svc-auto', 'svc'] as const;
/** resolved-model: what the svc-auto alias resolves to. */
// Stryker disable next-line StringLiteral: [gate] resolved-model
export const RESOLVED_SVC_AUTO = 'svc-2026-11-01';

/** A fixed creation time: model records are static, and tests may compare runs. */
const MODELS_CREATED = 1767225600;

function entry(ctx: RequestContext, id: string): Record<string, unknown> {
  if (ctx.defect('models-entry-no-id')) return { name: id };
  const e: Record<string, unknown> = {
    id,
    object: ctx.defect('models-entry-object-wrong') ? 'engine' : 'model',
    created: MODELS_CREATED,
    // Stryker disable next-line StringLiteral: [not-shown] owned_by
    owned_by: 'chatgate-reference',
  };
  if (ctx.variant('extra-fields')) e.x_reference_context_window = 8192;
  return e;
}

export function listedModels(ctx: RequestContext): string[] {
  if (ctx.defect('models-empty-list')) return [];
  return ctx.defect('model-list-missing-svc') ? SERVICE_MODELS.filter((m) => m !== 'svc') : [...SERVICE_MODELS];
}

export async function handleListModels(ctx: RequestContext): Promise<void> {
  if (ctx.defect('models-404')) throw notFound('Unknown path /models.', 'not_found');
  // scope-gates-models: the brains:invoke scope wrongly gates the model list too.
  // Stryker disable next-line all: [unreached] scope-gates-models AUTH-7
  if (ctx.defect('scope-gates-models') && !ctx.key?.scopes.has(SCOPE_BRAINS_INVOKE)) throw forbidden(`This API key lacks the scope ${SCOPE_BRAINS_INVOKE}.`);
  const data = listedModels(ctx).map((id) => entry(ctx, id));
  let body: unknown;
  if (ctx.defect('models-bare-array')) body = data;
  else if (ctx.defect('models-object-missing')) body = { data };
  else if (ctx.defect('models-no-list')) body = { object: 'list' };
  else {
    const list: Record<string, unknown> = { object: 'list', data };
    if (ctx.variant('extra-fields')) list.x_reference_total = data.length;
    body = list;
  }
  if (ctx.defect('models-text-plain')) return sendBody(ctx, 200, 'text/plain', JSON.stringify(body));
  return sendJson(ctx, 200, body);
}

// GET /models/{id} is not in the spec (not shown): whether it exists and what it answers
// is the server's choice, so its mutants are legal servers.
// Stryker disable next-line BlockStatement: [not-sent] GET /models/{id}
export async function handleRetrieveModel(ctx: RequestContext, id: string): Promise<void> {
  // Stryker disable next-line BooleanLiteral,ConditionalExpression,BlockStatement: [not-sent] GET /models/{id}
  if (!listedModels(ctx).includes(id)) {
    // Stryker disable next-line StringLiteral,MethodExpression: [msg-free] ERR-3
    throw notFound(`The model '${id.slice(0, 80)}' does not exist or you do not have access to it.`, 'model_not_found', 'model');
  }
  return sendJson(ctx, 200, entry(ctx, id));
}
