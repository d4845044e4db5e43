// One child process to its end: its exit code and output, killed (SIGKILL) after a
// deadline so a hung k6 fails its test instead of the run. The k6 self-tests use it.
import { spawn } from 'node:child_process';

export interface ProcessRun { code: number | null; stdout: string; stderr: string }

/** Runs `bin` with exactly `env` in `cwd`; resolves when it exits, rejects if it cannot start. */
export function runProcess(bin: string, args: string[], env: Record<string, string>, cwd: string, killAfterMs: number): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env, cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
