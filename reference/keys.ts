// Per-run API keys. They are generated at every start so that no key is ever
// committed or reused between runs; each key has its scopes and its own rate limit.
import { randomBytes } from 'node:crypto';

export type KeyName = 'main' | 'limited' | 'rateLimit';

// Stryker disable next-line StringLiteral: [equiv] never sent
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
  // Stryker disable next-line StringLiteral: [key-form] empty key: exit 2
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
  // Stryker disable next-line ArrayDeclaration: [equiv] never read
  const limited = make('limited', [], limits.main);
  // Stryker disable next-line ArrayDeclaration: [key-form] scopes
  const rateLimit = make('rateLimit', [SCOPE_BRAINS_INVOKE], limits.rateLimit);
  const byValue = new Map([main, limited, rateLimit].map((k) => [k.value, k]));
  return { main, limited, rateLimit, byValue };
}

/** OpenAI-style masked form: enough to recognise a key, never enough to use it (AUTH-9). */
export function maskKey(value: string): string {
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: [key-form] AUTH-9
  if (value.length < 12) return '***';
  // Stryker disable next-line MethodExpression,StringLiteral: [key-form] AUTH-9
  const prefix = value.startsWith('sk-ref-') ? 'sk-ref-' : value.slice(0, 3);
  // Stryker disable next-line StringLiteral,UnaryOperator: [key-form] AUTH-9
  return `${prefix}...${value.slice(-4)}`;
}
