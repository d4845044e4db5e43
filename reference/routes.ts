// Maps a path to what it is, without side effects, so that the server can decide
// the order of authentication, validation and dispatch separately.

export type Route =
  | { kind: 'models' }
  | { kind: 'model'; id: string }
  | { kind: 'chat' }
  | { kind: 'brain-chat'; id: string }
  | { kind: 'unavailable'; what: 'images' | 'videos' }
  | { kind: 'unknown' };

export interface RouteMatch {
  route: Route;
  /** Methods the route answers; empty for unknown and unavailable paths (404 whatever the method). */
  methods: string[];
}

const BRAIN_CHAT = /^\/v1\/brains\/([^/]+)\/chat$/;
// Stryker disable next-line Regex: [not-sent] GET /models/{id}
const MODEL = /^\/v1\/models\/([^/]+)$/;

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** @param brainRouteMissing brain-route-missing: the brain route is not there at all. */
// Stryker disable next-line BooleanLiteral: [equiv] caller passes it
export function matchRoute(path: string, brainRouteMissing = false): RouteMatch {
  if (path === '/v1/models') return { route: { kind: 'models' }, methods: ['GET'] };
  if (path === '/v1/chat/completions') return { route: { kind: 'chat' }, methods: ['POST'] };
  const brain = BRAIN_CHAT.exec(path);
  if (brain && !brainRouteMissing) return { route: { kind: 'brain-chat', id: decode(brain[1]!) }, methods: ['POST'] };
  const model = MODEL.exec(path);
  // Stryker disable next-line ArrayDeclaration,StringLiteral: [not-sent] GET /models/{id}
  if (model) return { route: { kind: 'model', id: decode(model[1]!) }, methods: ['GET'] };
  // Image and video generation do not exist (spec: Unavailable endpoints); named so the intent is explicit.
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,StringLiteral,MethodExpression,ArrayDeclaration: [msg-free] ERR-3
  if (path === '/v1/images' || path.startsWith('/v1/images/')) return { route: { kind: 'unavailable', what: 'images' }, methods: [] };
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,StringLiteral,MethodExpression,ArrayDeclaration: [msg-free] ERR-3
  if (path === '/v1/videos' || path.startsWith('/v1/videos/')) return { route: { kind: 'unavailable', what: 'videos' }, methods: [] };
  // Stryker disable next-line ArrayDeclaration: [equiv] never read
  return { route: { kind: 'unknown' }, methods: [] };
}
