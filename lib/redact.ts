// Keeps API keys out of everything chatgate writes: reports, console, curl lines,
// error messages that quote a response. Every key the run knows is registered
// here (in each process) and replaced by *** wherever it appears.

// value -> label (the variable it came from, e.g. API_KEY): reports name the key, never show it.
const secrets = new Map<string, string>();

/** Registers a secret. Very short strings are ignored: masking them would mangle ordinary text. */
export function addSecret(value: string | undefined, label = 'secret'): void {
  if (value && value.length >= 8 && !secrets.has(value)) secrets.set(value, label);
}

export function knownSecrets(): Array<{ value: string; label: string }> {
  return [...secrets].map(([value, label]) => ({ value, label }));
}

export function redact(text: string): string {
  let out = text;
  for (const s of secrets.keys()) {
    if (out.includes(s)) out = out.split(s).join('***');
  }
  return out;
}

/** Redacts every string inside a JSON-able value (used on whole result documents). */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map(redactDeep) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[redact(k)] = redactDeep(v);
    return out as T;
  }
  return value;
}

/** Masks an Authorization header value whatever it holds: the scheme stays, the credential never does. */
export function maskAuthorization(value: string): string {
  const m = /^(\S+)\s+(.*)$/.exec(value);
  if (!m) return value === '' ? '' : '***';
  return m[2] === '' ? `${m[1]} ` : `${m[1]} ***`;
}
