// What a k6 VU keeps of an SVC-9 finding so the merge can print curl lines for it: the
// request's body and the other request's (its body when this VU sent it, else its
// canary), carried as k6 metadata on the finding's chatgate_cross_talk point, which
// `--out json` writes. Never a key: bodies only; the merge builds the lines with
// lib/http/curl.ts and the key masked. No k6 import: the bundles and merge.ts share it.

/** The metadata key of a finding's point. */
export const WITNESS_KEY = 'chatgate_svc9';
/** Findings a VU carries bodies for (the rest are counted only). */
export const MAX_WITNESSED = 3;
/** A body longer than this is cut (the curl line cuts at 4000 characters anyway). */
export const MAX_BODY = 4001;

export interface Witness {
  /** What broke SVC-9, as the VU logged it. */
  why: string;
  /** This request's body (JSON, cut at MAX_BODY). */
  body: string;
  /** The body of the earlier request of this VU whose reply carried the same id. */
  other_body?: string;
  /** The canary of the request whose reply this one got (another VU's). */
  other_canary?: string;
}

export const cutBody = (body: string): string => (body.length > MAX_BODY ? body.slice(0, MAX_BODY) : body);

/** A witness from a point's metadata value; undefined when it is none. */
export function parseWitness(raw: unknown): Witness | undefined {
  if (typeof raw !== 'string') return undefined;
  try {
    const w = JSON.parse(raw) as Witness;
    return typeof w.why === 'string' && typeof w.body === 'string' ? w : undefined;
  } catch {
    return undefined;
  }
}
