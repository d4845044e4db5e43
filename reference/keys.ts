// Per-run API keys. They are generated at every start so that no key is ever
// committed or reused between runs; each key has its scopes and its own rate limit.
import { randomBytes } from 'node:crypto';

export type KeyName = 'main' | 'limited' | 'rateLimit';

// Stryker disable next-line StringLiteral: equivalent, the scope's name is never sent (keys and checks share this constant)
export const SCOPE_BRAINS_INVOKE = 'brains:invoke';

export interface KeyRecord {
  name: KeyName;
  value: string;
  scopes: ReadonlySet<string>;
  limit: { limit: number; windowMs: number };
}

export interface KeyRing {
  main: KeyRecord;
  limited: KeyRecord;
  rateLimit: KeyRecord;
  /** Lookup by the full key value. */
  byValue: Map<string, KeyRecord>;
}

export function newKeyValue(): string {
  // Stryker disable next-line StringLiteral: an empty key stops the run before any test (the harness refuses an empty API_KEY, exit 2), which Stryker counts as survived; the key's form is otherwise not shown
  return `sk-ref-${randomBytes(16).toString('hex')}`;
}

export function createKeyRing(limits: { main: { limit: number; windowMs: number }; rateLimit: { limit: number; windowMs: number } }): KeyRing {
  const make = (name: KeyName, scopes: string[], limit: { limit: number; windowMs: number }): KeyRecord => ({
    name,
    value: newKeyValue(),
    scopes: new Set(scopes),
    limit,
  });
  const main = make('main', [SCOPE_BRAINS_INVOKE], limits.main);
  // The limited key shares the main key's generous limit: it exists to test scopes, not throttling.
  // Stryker disable next-line ArrayDeclaration: equivalent, a scope no check reads
  const limited = make('limited', [], limits.main);
  // Stryker disable next-line ArrayDeclaration: legal, the rate-limit key's scopes are not judged (the suite sends it on plain models only)
  const rateLimit = make('rateLimit', [SCOPE_BRAINS_INVOKE], limits.rateLimit);
  const byValue = new Map([main, limited, rateLimit].map((k) => [k.value, k]));
  return { main, limited, rateLimit, byValue };
}

/** OpenAI-style masked form: enough to recognise a key, never enough to use it (AUTH-9). */
export function maskKey(value: string): string {
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: legal, what a 401 shows of a key the server did not issue is free (AUTH-9 forbids echoing a full issued key; ERR-3 asks only for a non-empty message)
  if (value.length < 12) return '***';
  // Stryker disable next-line MethodExpression,StringLiteral: legal, what a 401 shows of a key the server did not issue is free (AUTH-9 forbids echoing a full issued key)
  const prefix = value.startsWith('sk-ref-') ? 'sk-ref-' : value.slice(0, 3);
  // Stryker disable next-line StringLiteral,UnaryOperator: legal, what a 401 shows of a key the server did not issue is free (AUTH-9 forbids echoing a full issued key)
  return `${prefix}...${value.slice(-4)}`;
}
