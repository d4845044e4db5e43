// The spellings of a route a router may treat as the route itself (RFC 3986 leaves the
// path's case and a trailing slash to the server, and makes a percent-encoded
// unreserved character equal to the character): a probe declared with `spellings`
// (harness/clause-test.ts) runs once more per spelling, so a router that reaches the
// handler on a spelling but skips a check bound to the exact path is seen. Each spelling
// takes a path relative to the base URL ("/brains/<id>/chat", "/chat/completions").

export interface RouteSpelling {
  /** In the test id ("spelled-<id>"). */
  id: string;
  /** In the title ("(route spelled <title>)"). */
  title: string;
  spell(path: string): string;
}

const segments = (path: string) => path.split('/').slice(1);

export const ROUTE_SPELLINGS: readonly RouteSpelling[] = [
  { id: 'trailing-slash', title: 'with a trailing slash', spell: (p) => `${p}/` },
  { id: 'doubled-slash', title: 'with a doubled slash', spell: (p) => p.replace(/\/(?=[^/]*$)/, '//') },
  // The literal segments in another case; an id (a uuid) stays as it is.
  { id: 'capitalised', title: 'with capitalised segments', spell: (p) => `/${segments(p).map((s) => (/^[a-z]+$/.test(s) ? s[0]!.toUpperCase() + s.slice(1) : s)).join('/')}` },
  // The second segment's first character percent-encoded: the id of /brains/{id}/chat, a letter of /chat/completions.
  {
    id: 'percent-encoded', title: 'with a percent-encoded character',
    spell: (p) => `/${segments(p).map((s, i) => (i === 1 && s ? `%${s.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}${s.slice(1)}` : s)).join('/')}`,
  },
];
