// The two chat routes: POST /chat/completions (plain models and "brain:<uuid>") and
// POST /brains/{id}/chat. Order of checks: body, scope (before the brain's existence,
// so existence doesn't leak), brain id, existence, then the reply.
import { sendBody, sendJson, type RequestContext } from './request-context.ts';
import { parseChatRequest, readJsonBody, rtlStreamDefect, type ChatRequest } from './chat-request.ts';
import { checkBrainScope } from './auth.ts';
import { BRAIN_MODEL_PREFIX, resolveBrain } from './brains.ts';
import { badRequest, forbidden, notFound, overloaded, serverError } from './errors.ts';
import { completionBody, planReply } from './completion.ts';
import { planStream } from './stream-plan.ts';
import { DONE, SseWriter } from './sse-writer.ts';
import { contentDropped, nullContent, withoutContent } from './capped-content.ts';
import { scopeSkipped } from './route-spelling.ts';
import { sleep } from './latency.ts';
import { SCOPE_BRAINS_INVOKE } from './keys.ts';
import { engineDone, playEngineStream } from './engine-reply.ts';
import { engineSheds } from './engine-changes.ts';
import { RESOLVED_SVC_AUTO, SERVICE_MODELS } from './models.ts';
import { crossTalk } from './cross-talk.ts';
import { BufferedSseWriter } from './buffered-stream.ts';

/** 'prevalidate' runs the request checks only, before authentication (auth-after-validation). */
export type ChatMode = 'serve' | 'prevalidate';

interface Target {
  replyModel: string;
  brain: boolean;
}

/** Plain replies sent under concurrency, per server (empty-200-under-concurrency). */
const concurrentReplies = new WeakMap<object, number>();

/** The overload defects misbehave on every 5th authenticated chat request. */
// Stryker disable next-line BlockStatement: [overload] overload count
function countChatRequest(ctx: RequestContext): void {
  // Stryker disable next-line UpdateOperator: [overload] overload count
  const n = ++ctx.state.counters.chatRequests;
  // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: [overload] ERR-4
  if (n % 5 !== 0) return;
  if (ctx.defect('overload-503-no-body')) throw overloaded().withForm('empty');
  if (ctx.defect('overload-500')) throw serverError('Internal error: the service is overloaded.');
}

function serviceModels(ctx: RequestContext): string[] {
  return ctx.defect('model-svc-unusable') ? ['svc-auto'] : [...SERVICE_MODELS];
}

function resolveModel(ctx: RequestContext, req: ChatRequest, mode: ChatMode): Target {
  const model = req.model;
  if (model.startsWith(BRAIN_MODEL_PREFIX) && !ctx.defect('brain-model-form-missing')) {
    // Stryker disable next-line ConditionalExpression: [gate] auth-after-validation stream-validated-before-auth AUTH-4; killed: AUTH-6
    if (mode === 'serve') {
      const denied = checkBrainScope(ctx, 'model', req.stream);
      if (denied) throw denied;
    }
    // Stryker disable next-line StringLiteral: [msg-free] ERR-3
    resolveBrain(ctx, model.slice(BRAIN_MODEL_PREFIX.length), 'model', req.stream);
    // Stryker disable next-line BooleanLiteral: [gate] brain-stream-ignored scope-overrestrictive +2
    return { replyModel: ctx.variant('resolved-model') ? 'svc' : model, brain: true };
  }
  if (serviceModels(ctx).includes(model)) {
    const replyModel = ctx.variant('resolved-model') && model === 'svc-auto' ? RESOLVED_SVC_AUTO : model;
    // Stryker disable next-line BooleanLiteral: [gate] brain-stream-ignored scope-overrestrictive +2
    return { replyModel, brain: false };
  }
  if (ctx.defect('unknown-model-200')) return { replyModel: model, brain: false };
  // stream-unknown-model-accepted: the streaming handler looks no model up.
  if (req.stream && ctx.defect('stream-unknown-model-accepted')) return { replyModel: model, brain: false };
  if (ctx.defect('unknown-model-500')) throw serverError('Internal error while loading the model.');
  // Stryker disable next-line MethodExpression: [msg-free] ERR-3
  const message = `The model '${model.slice(0, 80)}' does not exist or you do not have access to it.`;
  if (ctx.variant('unknown-model-400') || (req.stream && ctx.variant('stream-refusals-400'))) throw badRequest(message, 'model_not_found', 'model');
  // Stryker disable next-line StringLiteral: [msg-free] ERR-3; killed: ERR-3
  throw notFound(message, 'model_not_found', 'model');
}

export async function handleChatCompletions(ctx: RequestContext, mode: ChatMode = 'serve'): Promise<void> {
  // Stryker disable next-line ConditionalExpression,EqualityOperator: [overload] overload count
  if (mode === 'serve') countChatRequest(ctx);
  const body = await readJsonBody(ctx);
  const req = parseChatRequest(ctx, body);
  const target = resolveModel(ctx, req, mode);
  // Stryker disable next-line ConditionalExpression: [gate] auth-after-validation stream-validated-before-auth AUTH-4; killed: BRAIN-1+BRAIN-2
  if (mode === 'prevalidate') return;
  // scope-overrestrictive: the scope gate wrongly covers plain models too (stream-scope-on-plain-model: on the streaming path only).
  const overrestrictive = ctx.defect('scope-overrestrictive') || (req.stream && ctx.defect('stream-scope-on-plain-model'));
  if (!target.brain && overrestrictive && !ctx.key?.scopes.has(SCOPE_BRAINS_INVOKE)) {
    throw forbidden(`This API key lacks the scope ${SCOPE_BRAINS_INVOKE}.`);
  }
  await reply(ctx, req, target);
}

export async function handleBrainChat(ctx: RequestContext, brainId: string, mode: ChatMode = 'serve'): Promise<void> {
  // Stryker disable next-line ConditionalExpression,EqualityOperator: [overload] overload count
  if (mode === 'serve') countChatRequest(ctx);
  const body = await readJsonBody(ctx);
  // Stryker disable next-line LogicalOperator,ConditionalExpression: [msg-free] ERR-3
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    // Stryker disable next-line StringLiteral: [unreached] the mutation run's fuzz budget
    throw badRequest('The request body must be a JSON object with messages.', 'invalid_type');
  }
  // Stryker disable next-line ConditionalExpression,EqualityOperator,BooleanLiteral: [gate] stream flag
  const streaming = (body as { stream?: unknown }).stream === true;
  // Stryker disable next-line ConditionalExpression: [gate] auth-after-validation stream-validated-before-auth AUTH-4; killed: AUTH-6
  // Stryker disable next-line ConditionalExpression: [gate] scope-skipped-on-route-spelling AUTH-6
  if (mode === 'serve' && !scopeSkipped(ctx)) {
    const denied = checkBrainScope(ctx, 'route', streaming);
    if (denied) throw denied;
  }
  // The route names the brain; a model in the body would be meaningless here.
  const parsed = parseChatRequest(ctx, { ...body, model: `${BRAIN_MODEL_PREFIX}${brainId}` });
  // brain-route-stream-json (legal): the route answers stream: true with plain JSON.
  const req = ctx.variant('brain-route-stream-json') ? { ...parsed, stream: false } : parsed;
  resolveBrain(ctx, brainId, null, streaming);
  // Stryker disable next-line ConditionalExpression: [gate] auth-after-validation stream-validated-before-auth AUTH-4; killed: BRAIN-1+BRAIN-2
  if (mode === 'prevalidate') return;
  const replyModel = ctx.variant('resolved-model') ? 'svc' : `${BRAIN_MODEL_PREFIX}${brainId}`;
  if (ctx.defect('brain-route-different-shape')) {
    const plan = planReply(ctx, { ...req, stream: false }, replyModel);
    await sendJson(ctx, 200, { reply: plan.choices[0]?.text ?? '' });
    return;
  }
  // Stryker disable next-line BooleanLiteral: [gate] brain-stream-ignored brain-route-201
  await reply(ctx, req, { replyModel, brain: true });
}

async function reply(ctx: RequestContext, req: ChatRequest, target: Target): Promise<void> {
  let streaming = req.stream;
  if (streaming && target.brain && ctx.defect('brain-stream-ignored')) streaming = false;
  if (streaming && ctx.defect('stream-ignored')) streaming = false;
  if (!streaming && req.streamExplicitFalse && ctx.defect('stream-false-sse')) streaming = true;

  const plan = planReply(ctx, req, target.replyModel);
  await crossTalk(ctx, plan);
  const latency = ctx.state.opts.latency;
  // The engine model (rehearsal only) times the reply instead of the fixed delays.
  // Stryker disable next-line all: [unreached] rehearsal control
  if (engineSheds(ctx.state)) throw overloaded();
  // Stryker disable next-line all: [unreached]
  const job = ctx.state.engine?.model.submit(plan.usage.prompt_tokens, Math.max(1, ...plan.choices.map((c) => c.pieces?.length ?? 0)), ctx.signal);
  if (streaming) {
    // Stryker disable next-line UpdateOperator: [delay-0] delays
    const n = ++ctx.state.counters.streams;
    // Stryker disable next-line all: [delay-0] delays
    const stalls = latency.stallEvery > 0 && n % latency.stallEvery === 0;
    let steps = planStream(ctx, plan);
    // Fuzz-only defect: right-to-left text in the request loses the [DONE].
    // Stryker disable next-line all: [gate] fuzz-rtl-stream-no-done EV-6; killed: BRAIN-5
    if (rtlStreamDefect(ctx, req)) steps = steps.filter((s) => !(s.kind === 'data' && s.payload === DONE));
    // Stryker disable next-line all: [gate] capped-content-null EV-4
    if (contentDropped(ctx, req)) steps = withoutContent(steps);
    // Stryker disable next-line all: [unreached]
    if (job) return playEngineStream(ctx, steps, job, plan.choices.length);
    await (ctx.defect('stream-buffered-until-end') ? new BufferedSseWriter(ctx) : new SseWriter(ctx)).play(steps, {
      ttftMs: latency.ttftMs,
      itlMs: latency.itlMs,
      stallMs: stalls ? latency.stallMs : 0,
    });
    return;
  }
  // Stryker disable next-line all: [unreached]
  if (job) await engineDone(job);
  else await sleep(latency.jsonMs, ctx.signal);
  // Stryker disable next-line ConditionalExpression: [equiv] client gone; killed: BRAIN-1
  if (ctx.aborted) return;
  // empty-200-under-concurrency: an upstream that takes 25 ms, and every 20th plain reply
  // sent while another request is in flight is a 200 with an empty body.
  // Stryker disable next-line all: [unreached] empty-200-under-concurrency SVC-1
  if (ctx.defect('empty-200-under-concurrency')) await sleep(25, ctx.signal);
  // Stryker disable next-line all: [unreached] empty-200-under-concurrency SVC-1
  if (ctx.defect('empty-200-under-concurrency') && ctx.state.counters.inFlight > 1) {
    const n = (concurrentReplies.get(ctx.state) ?? 0) + 1;
    concurrentReplies.set(ctx.state, n);
    if (n % 20 === 0) return sendBody(ctx, 200, 'application/json', '');
  }
  const body = completionBody(ctx, plan);
  // Stryker disable next-line all: [gate] capped-content-null RES-MSG-1
  if (contentDropped(ctx, req)) nullContent(body);
  if (ctx.defect('cc-json-as-text')) {
    await sendBody(ctx, 200, 'text/plain', JSON.stringify(body));
    return;
  }
  // brain-route-201 (legal): any 2xx answers the brain route.
  await sendJson(ctx, target.brain && ctx.path.includes('/brains/') && ctx.variant('brain-route-201') ? 201 : 200, body);
}

