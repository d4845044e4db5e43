// The requests every chatgate load tool sends: which route a request takes (plain
// chat, brain by model form, brain by its own route) and its JSON body. Streams ask
// for usage (stream_options.include_usage) so that output tokens come from the
// target's own count, never from counting chunks.
//
// Plain module on purpose (no Node APIs, ES2017 library only): load/k6 bundles it
// for k6's runtime.

import { withExtraBody } from '../workload/extra-body.ts';

export type RouteKind = 'chat' | 'brain-model' | 'brain-route';

export const ROUTE_KINDS: RouteKind[] = ['chat', 'brain-model', 'brain-route'];

export const BRAIN_MODEL_PREFIX = 'brain:';

export const DEFAULT_PROMPT = 'Write one short sentence about load testing.';

export interface BodyOptions {
  model: string;
  prompt: string;
  stream: boolean;
  /** Sent as max_tokens when set. */
  maxTokens?: number;
  /** Needed by the brain routes. */
  brainId?: string;
  /** The workload's messages (load/workload): sent as they are, instead of the prompt. */
  messages?: Array<{ role: string; content: string }>;
  /** --extra-body: request fields the target needs (ignore_eos, ...), merged into every body. */
  extra?: Record<string, unknown>;
}

/**
 * Route of the request with this sequence number. Brain requests are spread evenly
 * (not drawn at random) so a short run holds the asked share exactly, alternating
 * between the model form and the dedicated route.
 */
export function routeAt(seq: number, brainShare: number): RouteKind {
  if (brainShare <= 0) return 'chat';
  const before = Math.floor(seq * brainShare);
  const after = Math.floor((seq + 1) * brainShare);
  if (after === before) return 'chat';
  return before % 2 === 0 ? 'brain-model' : 'brain-route';
}

/** Path relative to the base URL (which ends in /v1). */
export function pathFor(route: RouteKind, brainId?: string): string {
  if (route === 'brain-route') return '/brains/' + requireBrain(brainId) + '/chat';
  return '/chat/completions';
}

/**
 * The JSON body. The sequence number goes into the prompt so that no two requests
 * are identical (a target's response cache would otherwise flatter the figures).
 */
export function bodyFor(route: RouteKind, options: BodyOptions, seq: number): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (route === 'chat') body.model = options.model;
  if (route === 'brain-model') body.model = BRAIN_MODEL_PREFIX + requireBrain(options.brainId);
  body.messages = options.messages ?? [{ role: 'user', content: options.prompt + ' (request ' + seq + ')' }];
  if (options.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  if (options.maxTokens !== undefined) body.max_tokens = options.maxTokens;
  return withExtraBody(body, options.extra);
}

function requireBrain(brainId: string | undefined): string {
  if (!brainId) throw new Error('a brain request needs a brain id (BRAIN_ID)');
  return brainId;
}
