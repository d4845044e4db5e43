// The rules a base address (TARGET_URL) must meet, and their one-line messages. The
// runner and the load harness parse it with Node's URL class, the k6 scripts with a
// pattern (k6 has no URL class); both hand the parts here. No imports: k6 bundles it.

export interface UrlParts {
  /** The scheme, lower case, without the colon. */
  scheme: string;
  /** scheme://host[:port], lower case. */
  origin: string;
  /** The path as written ('' or '/' for none). */
  pathname: string;
  hasCredentials: boolean;
  hasQueryOrFragment: boolean;
}

/** The normalised base (no trailing slash) or what is wrong with it and the fix (VER-1: the base ends with /v1). */
export function checkTargetUrl(raw: string, p: UrlParts | undefined): { base: string } | { problem: string } {
  if (!p) return { problem: `"${raw}" is not a URL; set it to the API base, e.g. https://staging.example/v1` };
  if (p.scheme !== 'http' && p.scheme !== 'https') return { problem: `scheme ${p.scheme}: is not supported; use http:// or https://` };
  if (p.hasCredentials) return { problem: 'credentials in the URL are not allowed; pass the key in API_KEY' };
  if (p.hasQueryOrFragment) return { problem: 'a query or fragment is not allowed; give only the base, e.g. https://staging.example/v1' };
  const path = p.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/v1')) return { problem: `path "${p.pathname || '/'}" does not end with /v1 (VER-1); use the base address including /v1, e.g. ${p.origin}/v1` };
  return { base: `${p.origin}${path}` };
}
