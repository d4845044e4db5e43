// The client registry decides which client SVC-4 judges (the newest official major
// that runs on this Node), which clients cannot run here and why, and which cells a
// client has. Wrong here means a wrong clause or a silently missing matrix row.
import { describe, expect, it } from 'vitest';
import { CLIENTS, clauseFor, clientById, installed, OPERATIONS, operationsOf, unavailable } from '../../harness/clients/registry.ts';

describe('client registry', () => {
  it('lists each client once, official majors 4 to 7 plus the Vercel AI SDK and LangChain', () => {
    expect(CLIENTS.map((c) => c.id)).toEqual(['openai@4', 'openai@5', 'openai@6', 'openai@7', 'ai-sdk@6', 'langchain@1']);
  });

  it('gives SVC-4 to openai 6 on Node 20 and to openai 7 on Node 22+, SVC-4b to every other client', () => {
    const on = (v: string) => Object.fromEntries(CLIENTS.map((c) => [c.id, clauseFor(c, v)]));
    expect(on('20.20.2')).toEqual({ 'openai@4': 'SVC-4b', 'openai@5': 'SVC-4b', 'openai@6': 'SVC-4', 'openai@7': 'SVC-4b', 'ai-sdk@6': 'SVC-4b', 'langchain@1': 'SVC-4b' });
    expect(on('22.12.0')['openai@7']).toBe('SVC-4');
    expect(on('22.12.0')['openai@6']).toBe('SVC-4b');
  });

  it('says why openai 7 does not run on Node 20, and has nothing against it on Node 22', () => {
    expect(unavailable(clientById('openai@7'), '20.20.2')).toBe('openai 7 requires Node >= 22; this is Node 20.20.2');
    expect(unavailable(clientById('openai@7'), '22.0.0')).toBeUndefined();
    for (const c of CLIENTS.filter((c) => c.id !== 'openai@7')) expect(unavailable(c, '20.18.1'), c.id).toBeUndefined();
  });

  it('has a models cell only for clients that can list models', () => {
    expect(operationsOf(clientById('openai@5'))).toEqual([...OPERATIONS]);
    expect(operationsOf(clientById('ai-sdk@6'))).not.toContain('models');
    expect(operationsOf(clientById('langchain@1'))).not.toContain('models');
  });

  it('finds every client library installed (one npm ci installs them all)', () => {
    for (const c of CLIENTS) expect(installed(c.packages), c.id).not.toContain('not installed');
    expect(installed(['openai-v4'])).toMatch(/^openai 4\.\d+\.\d+$/);
  });

  it('rejects an unknown client id with the list of known ones', () => {
    expect(() => clientById('openai@3')).toThrow(/known: openai@4, openai@5/);
  });
});
