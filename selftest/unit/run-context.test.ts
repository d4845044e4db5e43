// The run context (lib/run/run-context.ts): what the runner tells its workers, written
// once in the run directory; keys only by the name of the variable holding them; reading
// it never throws for want of one, and neither does importing the harness's target.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/run/config.ts';
import { RUN_CONTEXT_FILE, keyFrom, keyVariables, runContext, runContextOf, writeRunContext } from '../../lib/run/run-context.ts';
import { replayPrefix } from '../../fuzz/replay.ts';

const dirs: string[] = [];
const runDir = () => { const d = mkdtempSync(join(tmpdir(), 'chatgate-ctx-test-')); dirs.push(d); return d; };
const before = process.env.CHATGATE_RUN_DIR;
afterEach(() => {
  if (before === undefined) delete process.env.CHATGATE_RUN_DIR; else process.env.CHATGATE_RUN_DIR = before;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const KEY = 'sk-ctx-test-0123456789abcdef0123456789';
const external = loadConfig({ TARGET_URL: 'https://staging.example/v1/', API_KEY: KEY, RATE_LIMIT_API_KEY: `${KEY}-rl`, BRAIN_ID: '1ab29d64-1b2b-4504-821e-cfe1857ed3f8', MODELS: 'm1,m2', FUZZ_SEED: '7' });

describe('run context', () => {
  it('is written once with the key variables named, never the keys', () => {
    const dir = runDir();
    writeRunContext(dir, runContextOf(external, { phase: 'run', target: { url: external.targetUrl!, keys: keyVariables(external) } }));
    const text = readFileSync(join(dir, RUN_CONTEXT_FILE), 'utf8');
    expect(text).not.toContain(KEY);
    const ctx = runContext({ CHATGATE_RUN_DIR: dir });
    expect(ctx.target).toEqual({ url: 'https://staging.example/v1', keys: { main: 'API_KEY', rateLimit: 'RATE_LIMIT_API_KEY' } });
    expect(ctx).toMatchObject({ phase: 'run', brainId: '1ab29d64-1b2b-4504-821e-cfe1857ed3f8', models: ['m1', 'm2'], fuzz: { seed: 7 } });
    expect(keyFrom(ctx.target!.keys.main, { API_KEY: KEY })).toBe(KEY);
    expect(keyFrom(ctx.target!.keys.limited, {})).toBeUndefined();
    expect(() => keyFrom('API_KEY', {})).toThrow(/names API_KEY for a key, but API_KEY is not set/);
  });

  it('outside a run (no directory, or no file in it) is the defaults with no target', () => {
    for (const env of [{}, { CHATGATE_RUN_DIR: runDir() }]) {
      const ctx = runContext(env);
      expect(ctx.target).toBeUndefined();
      expect(ctx).toMatchObject({ phase: 'collect', models: ['svc-auto', 'svc'], timeoutMs: 30000, mode: { strict: false } });
    }
  });

  it('a context of another version is a defect of the runner, said with its path', () => {
    const dir = runDir();
    writeFileSync(join(dir, RUN_CONTEXT_FILE), JSON.stringify({ version: 99 }));
    expect(() => runContext({ CHATGATE_RUN_DIR: dir })).toThrow(/has version 99/);
  });

  it('replay commands name the target from the context: the embedded defect and variants, or the URL with the key masked', () => {
    const embedded = runContextOf(loadConfig({}), { phase: 'run', target: { url: 'http://127.0.0.1:1/v1', keys: { main: 'X' }, embedded: { defect: 'auth-any-key', variants: ['sse-crlf', 'charset'] } } });
    expect(replayPrefix({}, embedded)).toBe('REFERENCE_DEFECT=auth-any-key REFERENCE_VARIANTS=sse-crlf,charset ');
    const staging = runContextOf(external, { phase: 'run', target: { url: external.targetUrl!, keys: keyVariables(external) } });
    const line = replayPrefix({ API_KEY: KEY }, staging);
    expect(line).toBe('TARGET_URL=https://staging.example/v1 API_KEY=*** BRAIN_ID=1ab29d64-1b2b-4504-821e-cfe1857ed3f8 MODELS=m1,m2 ');
    expect(line).not.toContain(KEY);
  });

  it('the harness target imports without a context, and only sending needs the target', async () => {
    delete process.env.CHATGATE_RUN_DIR;
    const target = await import('../../harness/target.ts');
    expect(target.models).toEqual(['svc-auto', 'svc']);
    expect(target.config.timeoutMs).toBe(30000);
    expect(() => target.config.targetUrl).toThrow(/no target in the run context/);
    expect(() => target.http.send).toThrow(/no target in the run context/);
    // With a context, the target and keys come from it and the environment by name.
    const dir = runDir();
    writeRunContext(dir, runContextOf(external, { phase: 'run', target: { url: 'http://127.0.0.1:9/v1', keys: { main: 'CHATGATE_CTX_TEST_KEY' } } }));
    process.env.CHATGATE_RUN_DIR = dir;
    process.env.CHATGATE_CTX_TEST_KEY = KEY;
    try {
      expect(target.config.targetUrl).toBe('http://127.0.0.1:9/v1');
      expect(target.keys.main).toEqual({ key: KEY });
      expect(target.keys.limited).toBeUndefined();
    } finally {
      delete process.env.CHATGATE_CTX_TEST_KEY;
    }
  });
});
