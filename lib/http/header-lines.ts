// The rules for the extra request headers a run sends (HEADERS, HEADERS_FILE): how
// the text is split into headers, which names are refused, and which values are
// secrets. One module for the suite, the load harness and the k6 scripts, so it
// imports nothing (k6 has no Node modules).
//
// Format: one "Name: value" per line (LF or CRLF). Lines are the only separator:
// a field value may legally hold ";" and "," (cookies, lists, JSON), never a line
// break, so splitting on lines cannot cut a value in two. Blank lines and lines
// starting with "#" are ignored. On one shell line: HEADERS=$'a: 1\nb: 2'.

export interface ExtraHeader {
  /** As written (case kept); HTTP names are case-insensitive. */
  name: string;
  value: string;
  /** Masked wherever shown, and searched for in responses (AUTH-9): every name not on HARMLESS_HEADERS. */
  secret: boolean;
}

/**
 * Names whose values are shown as they are: routing, tracing and tenancy headers of
 * gateways that carry no credential. Every other extra header is treated as a secret
 * (CF-Access-Client-Secret, x-portkey-api-key, x-api-key, cookies, anything unknown).
 */
export const HARMLESS_HEADERS: readonly string[] = [
  'user-agent',
  'x-request-id', 'x-correlation-id', 'traceparent',
  'x-tenant', 'x-tenant-id',
  'x-portkey-provider', 'x-portkey-custom-host', 'x-portkey-trace-id',
];

// Hop-by-hop headers (RFC 9110 7.6.1) belong to one connection, not to the request; the
// others are set by each request itself: the key (the auth probes' subject), the body's
// type and length, the host of TARGET_URL, and what answer the request reads (JSON or a
// stream, decoded how).
const REFUSED: Record<string, string> = {
  authorization: 'the key goes in API_KEY (the auth probes set Authorization themselves)',
  'content-type': 'each request sets its own (the CHAT probes send other types on purpose)',
  'content-length': 'the HTTP client frames each body itself',
  host: 'it comes from TARGET_URL',
  accept: 'each request asks for JSON or a stream itself',
  'accept-encoding': 'each client decodes only the encodings it asks for',
  connection: 'it is a hop-by-hop header',
  'keep-alive': 'it is a hop-by-hop header',
  te: 'it is a hop-by-hop header',
  trailer: 'it is a hop-by-hop header',
  'transfer-encoding': 'it is a hop-by-hop header',
  upgrade: 'it is a hop-by-hop header',
};

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Visible ASCII, space and tab: what every client of the run (undici, k6, curl) sends as-is.
const VALUE = /^[\t\x20-\x7e]*$/;

export function isHarmlessHeader(name: string): boolean {
  return HARMLESS_HEADERS.includes(name.toLowerCase());
}

/** Why an extra header may not have this name, or undefined when it may. */
export function refusedName(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (lower.startsWith('proxy-')) return 'it is a hop-by-hop header (proxy credentials go in the proxy URL, HTTPS_PROXY=http://user:password@host:port)';
  return REFUSED[lower];
}

/**
 * Parses "Name: value" lines. Returns the
 * headers, or the one problem that makes the text unusable (the caller turns it into its
 * own configuration error). Values are never quoted in messages: they may be secrets.
 */
export function parseHeaderLines(text: string): { headers: ExtraHeader[] } | { problem: string } {
  const headers: ExtraHeader[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const where = lines.length > 1 ? `line ${i + 1}` : 'the header';
    if (/^\s*(#|$)/.test(line)) continue;
    const colon = line.indexOf(':');
    if (colon <= 0) return { problem: `${where} is not "Name: value" (one header a line; on one shell line use HEADERS=$'a: 1\\nb: 2')` };
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    if (!TOKEN.test(name)) return { problem: `${where}: "${printable(name)}" is not a header name (letters, digits and !#$%&'*+.^_\`|~- only, no space before the colon)` };
    const refused = refusedName(name);
    if (refused) return { problem: `${where}: ${name} may not be set here: ${refused}` };
    if (value === '') return { problem: `${where}: ${name} has no value` };
    if (!VALUE.test(value)) return { problem: `${where}: the value of ${name} holds a control or non-ASCII character; give visible ASCII only` };
    if (headers.some((h) => h.name.toLowerCase() === name.toLowerCase())) {
      return { problem: `${where}: ${name} is given twice; give it once (combine list values with ", ")` };
    }
    headers.push({ name, value, secret: !isHarmlessHeader(name) });
  }
  return { headers };
}

/**
 * Warnings for values that look like several headers written on one line with ";" or ","
 * ("x-a: 1; x-b: 2"): legal as one value, so not refused, but most likely meant as two
 * lines. Names only: a value may be a secret.
 */
export function oneLineWarnings(headers: readonly ExtraHeader[]): string[] {
  return headers
    .filter((h) => /[;,]\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+:\s/.test(h.value))
    .map((h) => `the value of ${h.name} looks like more headers ("; Name: value"): sent as one value; one header a line is the only separator, e.g. HEADERS=$'a: 1\\nb: 2'`);
}

/** The headers of both sources, or why they clash (a name given in both). */
export function mergeHeaderSources(a: ExtraHeader[], b: ExtraHeader[], bSource: string): { headers: ExtraHeader[] } | { problem: string } {
  for (const h of b) {
    if (a.some((x) => x.name.toLowerCase() === h.name.toLowerCase())) return { problem: `${h.name} is given in HEADERS and in ${bSource}; give it once` };
  }
  return { headers: [...a, ...b] };
}

/** The headers as a plain object for an HTTP client, names in lower case. */
export function headerRecord(headers: readonly ExtraHeader[]): Record<string, string> {
  const out: Record<string, string> = {};
  // Lower case, so a header of the run replaces a client's default of the same name (HTTP names are case-insensitive).
  for (const h of headers) out[h.name.toLowerCase()] = h.value;
  return out;
}

function printable(s: string): string {
  return s.replace(/[^\x20-\x7e]/g, '?').slice(0, 60);
}
