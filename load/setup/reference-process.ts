// The embedded reference server of a load run, in a child process: the driver's
// figures (its CPU, its event loop, the latencies it measures) then reflect the driver
// alone, and the server can be paused (SIGSTOP) to prove a stall is not hidden.
import { fileURLToPath } from 'node:url';
import type { ReferenceOptions } from '../../reference/server.ts';
import { addSecret } from '../../lib/run/redact.ts';
import { forkTs } from './ts-child.ts';

export interface EmbeddedReference {
  url: string;
  keys: { main: string; limited: string; rateLimit: string };
  brainId: string;
  models: string[];
  pid: number;
  /** The engine model's control port (run-time changes), when the model is on. */
  controlUrl?: string;
  options: ReferenceOptions;
  /** The server process's CPU time so far. */
  cpu(): Promise<{ user_s: number; system_s: number }>;
  close(): Promise<void>;
}

const CHILD = fileURLToPath(new URL('./reference-child.ts', import.meta.url));

export async function startReferenceProcess(options: ReferenceOptions): Promise<EmbeddedReference> {
  const env = { ...process.env, CHATGATE_REFERENCE_OPTIONS: JSON.stringify(options) };
  const c = await forkTs<{ url: string; keys: EmbeddedReference['keys']; brainId: string; models: string[]; pid: number; controlUrl?: string }>(CHILD, env);
  // Per-run keys, but keys all the same: never in a report or on the console.
  for (const [label, value] of Object.entries(c.ready.keys)) addSecret(value, `reference ${label} key`);
  return {
    ...c.ready,
    options,
    cpu: () => c.ask<{ user_s: number; system_s: number }>({ type: 'cpu' }, 'cpu'),
    close: () => c.close(),
  };
}
