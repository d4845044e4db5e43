// Runs the load harness (npm run load's entry point) as a child process with only the
// environment given (plus PATH and HOME), and reads back its exit code and output.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './run-suite.ts';

export function runLoad(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/load.mjs'), ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
