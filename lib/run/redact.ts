// Keeps API keys out of everything chatgate writes: reports, console, curl lines,
// error messages that quote a response. Every key the run knows is registered
// here (in each process) and replaced by *** wherever it appears.

// value -> label (the variable it came from, e.g. API_KEY): reports name the key, never show it.
const secrets = new Map<string, string>();
// Near misses of a key (AUTH-2 sends them): almost the key, so masked like it, but not keys (no AUTH-9 echo).
const nearMisses = new Set<string>();
// Every masked value, longest first, so a key inside a longer near miss never leaves a tail.
let masked: string[] = [];

/** Registers a secret, and its near misses. Very short strings are ignored: masking them would mangle ordinary text. */
export function addSecret(value: string | undefined, label = 'secret'): void {
  if (!value || value.length < 8 || secrets.has(value)) return;
  secrets.set(value, label);
  for (const m of nearMissKeys(value)) nearMisses.add(m.value);
  masked = [...new Set([...secrets.keys(), ...nearMisses])].sort((a, b) => b.length - a.length);
}

/**
 * The valid key with its last character changed, with characters appended, and
 * upper-cased (when that differs): a server comparing keys by prefix, or without
 * case, accepts them (AUTH-2).
 */
export function nearMissKeys(key: string): Array<{ what: string; value: string; /** Short and stable: part of the probe's test id. */ id: string }> {
  const last = key.slice(-1);
  const changed = /[0-8]/.test(last) ? String(Number(last) + 1) : last === '9' ? '0'
    : /[a-yA-Y]/.test(last) ? String.fromCharCode(last.charCodeAt(0) + 1) : /[zZ]/.test(last) ? 'a' : 'x';
  const out = [
    { what: 'the valid key with its last character changed', value: key.slice(0, -1) + changed, id: 'last-char-changed' },
    { what: 'the valid key with characters appended', value: `${key}0a`, id: 'appended' },
  ];
  if (key.toUpperCase() !== key) out.push({ what: 'the valid key upper-cased', value: key.toUpperCase(), id: 'upper-cased' });
  return out;
}

// Names of the run's secret extra headers (HEADERS, lib/http/extra-headers.ts), lower case.
const secretHeaderNames = new Set<string>();

/** A header whose value is a secret of this run: shown as *** wherever request headers are shown. */
export function addSecretHeaderName(name: string): void {
  secretHeaderNames.add(name.toLowerCase());
}

/** Header names that carry a credential: their value is never shown, whatever it holds. */
export function isCredentialHeader(name: string): boolean {
  return /^(authorization|proxy-authorization|x-api-key|api-key|x-goog-api-key|cookie)$/i.test(name) || secretHeaderNames.has(name.toLowerCase());
}

/** Query parameters that carry a credential (?api_key=, ?key=): masked in every URL shown. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return redact(url);
  const masks = url.slice(q + 1).replace(/(^|&)((?:api[_-]?key|key|access_token|token)=)[^&#]*/gi, '$1$2***');
  return redact(url.slice(0, q + 1) + masks);
}

/**
 * Labels of the known secrets in a response's headers or body (AUTH-9's evidence). A key
 * the request carried in its URL and not in Authorization is left out: a server whose
 * 404 or 401 names the request URL echoes what we put there, not a credential it received.
 */
export function echoedSecretLabels(headers: Record<string, string>, text: string, request?: { url: string; authorization?: string }): string[] {
  const hay = [JSON.stringify(headers), text];
  const urlBorne = (v: string) => !!request && request.url.includes(v) && !(request.authorization ?? '').includes(v);
  return knownSecrets().filter((s) => !urlBorne(s.value) && hay.some((h) => h.includes(s.value))).map((s) => s.label);
}

export function knownSecrets(): Array<{ value: string; label: string }> {
  return [...secrets].map(([value, label]) => ({ value, label }));
}

export function redact(text: string): string {
  let out = text;
  for (const s of masked) {
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
