// A stream's chunk payloads, parsed with the result JSON.parse gives, for less. Within
// one stream nearly every payload is the one before it with only the delta's text
// changed (same id, created, model, fields in the same order), so once a payload's
// text field has been located, a payload that starts and ends as that one did and has a
// valid JSON string in between is that payload with another string in that place: the
// previous parse is reused with the new text put in. Anything else is JSON.parse'd.
//
// Why it is exact: JSON reads left to right, so the same bytes before the string read the
// same; `"<new>"` is one whole string token (checked: no unescaped quote, backslash or
// control character, or JSON.parse of that token alone); the same bytes after it read
// the same. Where the string is, is not guessed: the located text is replaced by a
// sentinel once and parsed, and must land in choices[0].delta.<field>.
//
// The object handed out is reused for the next matching payload: a caller reads what it
// needs from a chunk before it asks for the next one (lean-client.ts does).

const FIELDS = ['content', 'reasoning', 'reasoning_content'] as const;
type Field = (typeof FIELDS)[number];
const SENTINEL = '\u0001chatgate\u0002';
/** In a string token's body: what needs JSON's own reading (escapes) or makes it invalid (a quote ends it, raw controls are illegal). */
const NOT_PLAIN = /["\\\u0000-\u001f]/;
/** Locating a payload's text costs a second parse: a stream whose shape keeps changing stops trying after this many. */
const MAX_LOCATES = 4;

export class ChunkParser {
  // The template (the last located payload: its text's place, the bytes around it, its parse),
  // in this object's own fields: one object less for each event to touch (a cache miss when
  // a thousand streams take turns). `head` is '' while there is none.
  private head = '';
  private tail = '';
  private chunk: unknown;
  private delta: Record<string, unknown> | undefined;
  private field: Field = 'content';
  private locates = 0;
  /** Payloads read from the template (for the bench and the self-tests). */
  reused = 0;

  /** The payload as JSON.parse reads it; throws where JSON.parse throws. */
  parse(data: string): unknown {
    const head = this.head;
    const tail = this.tail;
    // slice and === (a memory compare) cost a third of startsWith/endsWith here (measured).
    if (head !== '' && data.length >= head.length + tail.length && data.slice(0, head.length) === head && data.slice(data.length - tail.length) === tail) {
      const body = data.slice(head.length, data.length - tail.length);
      let text: unknown = body;
      if (NOT_PLAIN.test(body)) {
        try {
          text = JSON.parse(`"${body}"`);
        } catch {
          text = undefined; // not one string token: the whole payload is read (and judged) below
        }
      }
      if (typeof text === 'string') {
        this.delta![this.field] = text;
        this.reused++;
        return this.chunk;
      }
    }
    const chunk = JSON.parse(data) as unknown;
    if (this.locates < MAX_LOCATES) this.locate(data, chunk);
    return chunk;
  }

  /** Makes `chunk` (parsed from `data`) the template, when its one choice's delta has a text field found exactly once in `data`. */
  private locate(data: string, chunk: unknown): void {
    const delta = deltaOf(chunk);
    if (!delta) return;
    let field: Field | undefined;
    for (const f of FIELDS) {
      const v = delta[f];
      if (typeof v === 'string' && (field === undefined || v.length > 0)) {
        field = f;
        if (v.length > 0) break;
      }
    }
    if (field === undefined) return; // a finish or usage chunk: the template, if any, stays
    this.locates++;
    const key = `"${field}":`;
    const needle = key + JSON.stringify(delta[field]);
    const at = data.indexOf(needle);
    if (at === -1 || data.indexOf(needle, at + 1) !== -1) return;
    const start = at + key.length;
    const end = at + needle.length;
    // A text that is the sentinel already gets another one, so the probe's answer cannot come from elsewhere.
    const mark = delta[field] === SENTINEL ? `${SENTINEL}\u0003` : SENTINEL;
    let probe: unknown;
    try {
      probe = JSON.parse(data.slice(0, start) + JSON.stringify(mark) + data.slice(end));
    } catch {
      return;
    }
    if (deltaOf(probe)?.[field] !== mark) return;
    this.head = data.slice(0, start + 1);
    this.tail = data.slice(end - 1);
    this.chunk = chunk;
    this.delta = delta;
    this.field = field;
  }
}

/** choices[0].delta of a chunk with exactly one choice. */
function deltaOf(chunk: unknown): Record<string, unknown> | undefined {
  if (chunk === null || typeof chunk !== 'object') return undefined;
  const choices = (chunk as { choices?: unknown }).choices;
  if (!Array.isArray(choices) || choices.length !== 1) return undefined;
  const c = choices[0] as { delta?: unknown } | null;
  if (c === null || typeof c !== 'object' || c.delta === null || typeof c.delta !== 'object' || Array.isArray(c.delta)) return undefined;
  return c.delta as Record<string, unknown>;
}
