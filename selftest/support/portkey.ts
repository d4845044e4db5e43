// Portkey's open-source AI gateway (@portkey-ai/gateway, a devDependency), started as a
// child process on 127.0.0.1 through selftest/support/loopback-guard.mjs: its CLI takes
// a port but no host, so the preload binds it to loopback, and it logs (and refuses)
// every outbound connection beyond loopback, so telemetry would show up in outbound().
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './daemons.ts';
import { ROOT } from './run-suite.ts';

export const PORTKEY_BIN = join(ROOT, 'node_modules/@portkey-ai/gateway/build/start-server.js');
export const LOOPBACK_GUARD = join(ROOT, 'selftest/support/loopback-guard.mjs');

export interface Gateway {
  /** http://127.0.0.1:PORT/v1 */
  url: string;
  port: number;
  /** host:port of every outbound connection the gateway opened. */
  outbound(): string[];
  /** What the gateway printed (stdout and stderr). */
  output(): string;
  close(): Promise<void>;
}

/** The headers that route a request through the gateway to `upstream` (an OpenAI-compatible base URL). */
export function portkeyHeaders(upstream: string): string {
  return `x-portkey-provider: openai\nx-portkey-custom-host: ${upstream}`;
}

export async function startPortkey(): Promise<Gateway> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'chatgate-portkey-'));
  const log = join(dir, 'outbound.log');
  const child = spawn(process.execPath, ['--import', LOOPBACK_GUARD, PORTKEY_BIN, `--port=${port}`, '--headless'], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: dir, LOOPBACK_GUARD_LOG: log } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const until = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the Portkey gateway exited with ${child.exitCode}: ${output}`);
    const up = await new Promise<boolean>((r) => {
      const s = connect(port, '127.0.0.1', () => { s.destroy(); r(true); });
      s.on('error', () => r(false));
    });
    if (up) break;
    if (Date.now() > until) { child.kill('SIGKILL'); throw new Error(`the Portkey gateway did not listen on 127.0.0.1:${port} within 30 s: ${output}`); }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    outbound: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { outbound: string }).outbound) : []),
    output: () => output,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((r) => {
          const hard = setTimeout(() => child.kill('SIGKILL'), 5_000);
          child.once('exit', () => { clearTimeout(hard); r(); });
          child.kill('SIGTERM');
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
