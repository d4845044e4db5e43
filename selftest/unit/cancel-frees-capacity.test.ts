// SVC-10's probe (harness/concurrency-probes.ts, the suite's own) against the reference's
// engine model with 8 slots that frees a cancelled stream's: the held streams fill every
// slot (the short stream waits its full 3 s), cancelling them frees the slots, and the
// clause passes, judged. Its failing side is the seeded defect cancelled-stream-keeps-slot
// (selftest/e2e/seeded-defects.test.ts). The reference runs in this process on 127.0.0.1;
// the probe sends 3 + 8 + 2 streams, bounded by its own 3 s waits.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../reference/server.ts';
import { loadConfig } from '../../lib/run/config.ts';
import { runContextOf, writeRunContext } from '../../lib/run/run-context.ts';
import type { Exchange } from '../../lib/http/http-client.ts';

let ref: ReferenceServer;
let dir: string;
const before = { CHATGATE_RUN_DIR: process.env.CHATGATE_RUN_DIR, API_KEY: process.env.API_KEY };

beforeAll(async () => {
  ref = await startReferenceServer({ engine: { maxBatch: 8 } });
  dir = mkdtempSync(join(tmpdir(), 'chatgate-svc10-'));
  process.env.API_KEY = ref.keys.main;
  writeRunContext(dir, runContextOf(loadConfig({ TARGET_URL: ref.url, API_KEY: ref.keys.main }), { phase: 'run', target: { url: ref.url, keys: { main: 'API_KEY' } } }));
  process.env.CHATGATE_RUN_DIR = dir;
});

afterAll(async () => {
  for (const [k, v] of Object.entries(before)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
  await ref?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('SVC-10 against the engine model that frees a cancelled stream\'s slot', () => {
  it('passes, judged: loaded while the 8 streams are held, back near the idle TTFT once they are cancelled', async () => {
    const { cancelFreesCapacity } = await import('../../harness/concurrency-probes.ts');
    const out: { verdict?: string; why?: string; note?: string; checks: number } = { checks: 0 };
    const t = {
      responded(ex: Exchange) { if (ex.status === undefined) throw new Error(`no response: ${ex.error?.message}`); },
      fail(expected: string, seen: string): never { Object.assign(out, { verdict: 'fail', why: `expected ${expected}, got ${seen}` }); throw new Error(out.why); },
      inconclusive(why: string): never { Object.assign(out, { verdict: 'inconclusive', why }); throw new Error(why); },
      check(ok: boolean, expected: string, seen: string) { if (!ok) t.fail(expected, seen); out.checks++; },
      note(text: string) { out.note = text; },
    };
    await cancelFreesCapacity(t as never, 8);
    expect(out).toMatchObject({ checks: 1 });
    expect(out.verdict).toBeUndefined();
    // The figures the note gives: all 8 held and still open when cancelled; the loaded TTFT capped at the 3 s wait.
    expect(out.note).toMatch(/^K = 8 long streams \(8 streaming, 8 still open when cancelled\); TTFT alone \d+ ms, with them held >= 3000 ms, right after cancelling them \d+ ms$/);
  }, 60_000);
});
