// scope-skipped-on-route-spelling: the router takes the route in other spellings (any
// case, doubled slashes, a trailing slash, percent-encoded characters), but the scope
// check of the brain route is bound to the exact path, so a spelled request skips it.
import type { RequestContext } from './request-context.ts';
// Stryker disable all: [gate] scope-skipped-on-route-spelling AUTH-6

const spelled = new WeakSet<RequestContext>();

/** The path the router matches: the exact one, or (the defect) its normalised spelling. */
export function routedPath(ctx: RequestContext, path: string): string {
  if (!ctx.defect('scope-skipped-on-route-spelling')) return path;
  const normal = path.toLowerCase().replace(/\/{2,}/g, '/').replace(/(.)\/$/, '$1').split('/')
    .map((s) => { try { return decodeURIComponent(s); } catch { return s; } }).join('/');
  if (normal !== path) spelled.add(ctx);
  return normal;
}

/** The brain route's scope check is skipped for a request routed from another spelling. */
export function scopeSkipped(ctx: RequestContext): boolean {
  return spelled.has(ctx);
}
