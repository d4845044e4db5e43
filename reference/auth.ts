// Authentication (who is calling) and scope checks (what that key may do).
// Only "Authorization: Bearer <known key>" passes: scheme case-insensitive, exactly
// one space, no extra whitespace. Messages never quote a full key (AUTH-9).
import type { RequestContext } from './request-context.ts';
import { maskKey, SCOPE_BRAINS_INVOKE, type KeyRecord } from './keys.ts';
import { ApiError, forbidden, notFound, unauthorized } from './errors.ts';

export type AuthResult = { ok: true; key: KeyRecord } | { ok: false; error: ApiError };

// Stryker disable next-line Regex: without $ the key is read up to the first blank (Bearer <key> <more> accepted): how a header with more after the key is read is not shown (AUTH-3 names other schemes, an empty key and no scheme). Without ^ a scheme that ends in Bearer passes (the auth-scheme-unanchored defect): that mutant was killed by AUTH-3's XBearer probes (auth/malformed/xbearer/*; run of 2026-11-24, --mutate reference/auth.ts:10-10) before this line was disabled; the 3 other mutants refuse the valid key and were killed by BRAIN-1
const BEARER = /^bearer ([^\s]+)$/i;
// auth-lenient-bearer (legal): RFC 9110 §11.4 allows 1*SP between scheme and credentials.
// Stryker disable next-line Regex: equivalent in the mutation run, only the auth-lenient-bearer variant reads it (its self-test runs it, AUTH-3 must pass there)
const BEARER_LENIENT = /^bearer +([^\s]+)$/i;
// Stryker disable next-line Regex: equivalent, a header this pattern misses is refused 401 as malformed below: only the message's wording differs (ERR-3 asks only that it is non-empty)
const EMPTY_BEARER = /^bearer\s*$/i;

/** @param streaming the request asked for a stream (read only when a streaming-path defect is on). */
// Stryker disable next-line BooleanLiteral: equivalent, the one caller (server.ts) passes the flag, and only the streaming-path defects read it
export function authenticate(ctx: RequestContext, streaming = false): AuthResult {
  const { keys } = ctx.state;
  const header = ctx.req.headers.authorization;
  const pass = (key: KeyRecord): AuthResult => ({ ok: true, key });
  const fail = (message: string): AuthResult => {
    const error = unauthorized(message);
    // auth-lenient-bearer: the challenge RFC 9110 §11.6.1 asks a 401 to carry.
    if (ctx.variant('auth-lenient-bearer')) error.headers['WWW-Authenticate'] = 'Bearer realm="reference"';
    return { ok: false, error };
  };

  // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent, an empty header goes on to be refused 401 as malformed: only the message's wording differs (ERR-3 asks only that it is non-empty)
  if (header === undefined || header === '') {
    if (ctx.defect('auth-none-required')) return pass(keys.main);
    const elsewhere = keyOfferedElsewhere(ctx);
    // Stryker disable next-line BlockStatement: not reached, only the auth-key-in-header-accepted and auth-key-in-query-accepted defects offer a key elsewhere (their self-tests fail AUTH-1)
    if (elsewhere) {
      const key = keys.byValue.get(elsewhere);
      if (key) return pass(key);
    }
    return fail('You didn\'t provide an API key. Send it in the Authorization header as "Bearer <API_KEY>".');
  }

  // auth-scheme-unanchored: the scheme matched anywhere before the key.
  const m = (ctx.variant('auth-lenient-bearer') ? BEARER_LENIENT : ctx.defect('auth-scheme-unanchored') ? /bearer ([^\s]+)$/i : BEARER).exec(header);
  if (m) {
    const key = keys.byValue.get(m[1]!) ?? nearMissLookup(ctx, m[1]!, keys.byValue, streaming);
    if (key) return pass(key);
    if (ctx.defect('auth-any-key')) return pass(keys.main);
    return fail(`Incorrect API key provided: ${maskKey(m[1]!)}.`);
  }

  // Stryker disable next-line ConditionalExpression,BlockStatement: equivalent, "Bearer " without a key goes on to be refused 401 as malformed: only the message's wording differs (ERR-3 asks only that it is non-empty)
  if (EMPTY_BEARER.test(header)) {
    if (ctx.defect('auth-empty-bearer-accepted')) return pass(keys.main);
    return fail('The Authorization header holds no API key. Send it as "Bearer <API_KEY>".');
  }

  if (ctx.defect('auth-wrong-scheme-accepted')) {
    const key = lenientLookup(header, keys.byValue);
    if (key) return pass(key);
  }
  if (ctx.defect('auth-key-scheme-accepted')) {
    const k = /^(?:key|api-key|apikey) (\S+)$/i.exec(header);
    const key = k ? keys.byValue.get(k[1]!) : undefined;
    if (key) return pass(key);
  }
  return fail('Malformed Authorization header. Send the key as "Bearer <API_KEY>".');
}

/** auth-key-in-header-accepted / auth-key-in-query-accepted: the key offered where the spec does not look. */
function keyOfferedElsewhere(ctx: RequestContext): string | undefined {
  if (ctx.defect('auth-key-in-header-accepted')) {
    const h = ctx.req.headers['x-api-key'] ?? ctx.req.headers['api-key'];
    if (typeof h === 'string' && h !== '') return h;
  }
  if (ctx.defect('auth-key-in-query-accepted')) {
    const q = new URLSearchParams((ctx.req.url ?? '').split('?')[1] ?? '');
    return q.get('api_key') ?? q.get('key') ?? undefined;
  }
  return undefined;
}

/** auth-key-prefix-compare / auth-key-case-insensitive: the classic comparison bugs AUTH-2's near misses find. */
function nearMissLookup(ctx: RequestContext, presented: string, byValue: Map<string, KeyRecord>, streaming: boolean): KeyRecord | undefined {
  // stream-auth-near-miss-accepted: the streaming path's own key comparison, without case.
  // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent in the mutation run, only the auth-key-case-insensitive and stream-auth-near-miss-accepted defects make it true (their self-tests fail AUTH-2)
  const caseless = ctx.defect('auth-key-case-insensitive') || (streaming && ctx.defect('stream-auth-near-miss-accepted'));
  // Stryker disable next-line BlockStatement: equivalent in the mutation run, the loop returns a key only under the auth-key-prefix-compare, auth-key-case-insensitive and stream-auth-near-miss-accepted defects (their self-tests fail AUTH-2)
  for (const [value, rec] of byValue) {
    if (ctx.defect('auth-key-prefix-compare') && presented.slice(0, 32) === value.slice(0, 32)) return rec;
    // Stryker disable next-line ConditionalExpression,EqualityOperator,MethodExpression: equivalent in the mutation run, only the auth-key-case-insensitive and stream-auth-near-miss-accepted defects compare without case (their self-tests fail AUTH-2)
    if (caseless && presented.toLowerCase() === value.toLowerCase()) return rec;
  }
  return undefined;
}

/** auth-wrong-scheme-accepted: finds a known key after any scheme, bare, or inside Basic credentials. */
function lenientLookup(header: string, byValue: Map<string, KeyRecord>): KeyRecord | undefined {
  // Stryker disable next-line MethodExpression,Regex: not reached, only the auth-wrong-scheme-accepted defect calls lenientLookup (its self-test fails AUTH-3)
  const tokens = header.trim().split(/\s+/);
  // Stryker disable next-line BlockStatement: not reached, only the auth-wrong-scheme-accepted defect calls lenientLookup (its self-test fails AUTH-3)
  for (const t of tokens) {
    const direct = byValue.get(t);
    // Stryker disable next-line ConditionalExpression: not reached, only the auth-wrong-scheme-accepted defect calls lenientLookup (its self-test fails AUTH-3)
    if (direct) return direct;
    const decoded = Buffer.from(t, 'base64').toString('utf8');
    // Stryker disable next-line StringLiteral,BlockStatement: not reached, only the auth-wrong-scheme-accepted defect calls lenientLookup (its self-test fails AUTH-3)
    for (const part of decoded.split(':')) {
      const k = byValue.get(part);
      // Stryker disable next-line ConditionalExpression: not reached, only the auth-wrong-scheme-accepted defect calls lenientLookup (its self-test fails AUTH-3)
      if (k) return k;
    }
  }
  return undefined;
}

/**
 * The brains:invoke check, made before the brain's existence is looked at so that a
 * key without the scope cannot probe which brains exist.
 */
export function checkBrainScope(ctx: RequestContext, via: 'model' | 'route', streaming: boolean): ApiError | undefined {
  const key = ctx.key;
  // Stryker disable next-line StringLiteral: not reached, the server authenticates before any scope check, so the request always has its key here
  if (!key) return unauthorized('Authentication required.');
  if (via === 'model' && ctx.defect('scope-unchecked-model-form')) return undefined;
  if (via === 'route' && ctx.defect('scope-unchecked-brain-route')) return undefined;
  if (streaming && ctx.defect('scope-unchecked-stream')) return undefined;
  let allowed = key.scopes.has(SCOPE_BRAINS_INVOKE);
  if (ctx.defect('scope-inverted')) allowed = !allowed;
  if (allowed) return undefined;
  const message = `This API key lacks the scope ${SCOPE_BRAINS_INVOKE}, which invoking a brain requires.`;
  if (ctx.defect('scope-401-instead-of-403')) return unauthorized(message);
  if (ctx.defect('scope-404-instead-of-403')) return notFound('Brain not found.', 'brain_not_found');
  return forbidden(message);
}
