// reference/request-leniency.ts: the almost-json-accepted defect reads every almost-JSON
// form the suite sends (and only those), keeping the strings inside whole.
import { describe, expect, it } from 'vitest';
import { parseAlmostJson } from '../../reference/request-leniency.ts';

const JSON_TEXT = JSON.stringify({ model: 'svc-auto', messages: [{ role: 'user', content: "it's, // not /* a */ comment" }], stream: true });
const FORMS: Record<string, string> = {
  nan: `${JSON_TEXT.slice(0, -1)},"x":NaN}`,
  infinity: `${JSON_TEXT.slice(0, -1)},"x":-Infinity}`,
  'single-quotes': JSON_TEXT.replace(/"/g, "'").replace("it's", "it\\'s"),
  'trailing-comma-object': `${JSON_TEXT.slice(0, -1)},}`,
  'trailing-comma-array': JSON_TEXT.replace(/}\]/, '},]'),
  'line-comment': `{// a comment\n${JSON_TEXT.slice(1)}`,
  'block-comment': `/* a comment */${JSON_TEXT}`,
};

describe('almost-JSON, as a lenient parser reads it', () => {
  it('every form is not JSON, and the lenient reading gets the request back', () => {
    for (const [form, text] of Object.entries(FORMS)) {
      expect(() => JSON.parse(text), form).toThrow();
      expect(parseAlmostJson(text), form).toMatchObject(JSON.parse(JSON_TEXT));
    }
    expect(parseAlmostJson(FORMS.nan!)).toMatchObject({ x: null });
  });

  it('what even a lenient parser cannot read stays unread', () => {
    expect(parseAlmostJson(JSON_TEXT.slice(0, 20))).toBeUndefined();
    expect(parseAlmostJson('hello')).toBeUndefined();
  });
});
