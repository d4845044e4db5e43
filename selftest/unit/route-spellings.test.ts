// harness/route-spellings.ts: the spellings a router may take for a route, each a
// different request path that RFC 3986 leaves to the server or makes equal.
import { describe, expect, it } from 'vitest';
import { ROUTE_SPELLINGS } from '../../harness/route-spellings.ts';

const spell = (id: string, path: string) => ROUTE_SPELLINGS.find((s) => s.id === id)!.spell(path);
const BRAIN = '/brains/2d115ba1-137f-469e-92df-867368213c0c/chat';

describe('route spellings', () => {
  it('spell both chat routes', () => {
    expect(spell('trailing-slash', BRAIN)).toBe(`${BRAIN}/`);
    expect(spell('doubled-slash', BRAIN)).toBe('/brains/2d115ba1-137f-469e-92df-867368213c0c//chat');
    expect(spell('capitalised', BRAIN)).toBe('/Brains/2d115ba1-137f-469e-92df-867368213c0c/Chat');
    expect(spell('percent-encoded', BRAIN)).toBe('/brains/%32d115ba1-137f-469e-92df-867368213c0c/chat');
    expect(decodeURIComponent(spell('percent-encoded', BRAIN))).toBe(BRAIN);
    expect(spell('doubled-slash', '/chat/completions')).toBe('/chat//completions');
    expect(spell('capitalised', '/chat/completions')).toBe('/Chat/Completions');
    expect(spell('percent-encoded', '/chat/completions')).toBe('/chat/%63ompletions');
  });
  it('every spelling differs from the route and has a test-id part', () => {
    for (const s of ROUTE_SPELLINGS) {
      expect(s.spell(BRAIN), s.id).not.toBe(BRAIN);
      expect(s.id).toMatch(/^[a-z-]+$/);
    }
  });
});
