// How a proxy URL is shown: its credentials masked. Imports nothing, so the k6 bundles
// record their runners' proxy with the rule the curl lines and messages use (proxy.ts).

/** A proxy URL for display: the password (and a lone user token) masked. */
export function maskProxyUrl(raw: string): string {
  return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)?([^/@\s]*)@/i, (_m, scheme = '', cred: string) => {
    const user = cred.includes(':') ? cred.slice(0, cred.indexOf(':')) : '';
    return `${scheme}${user ? `${user}:***` : '***'}@`;
  });
}

/** The variables a proxy is read from (proxy.ts reads them; k6 reads the same, as Go does). */
export const PROXY_VARIABLES = ['https_proxy', 'HTTPS_PROXY', 'http_proxy', 'HTTP_PROXY', 'no_proxy', 'NO_PROXY'] as const;
