// The change during a load run: an operator's command started at a set time (--at,
// --run; through the shell, its exit status and the tail of its output kept with every
// secret masked), and marks from outside for changes made by hand (SIGUSR2, or a line
// on stdin with --mark-stdin). The run goes on through all of it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import { redact } from '../../lib/run/redact.ts';

export interface ChangeMark {
  /** Seconds from the start of the run. */
  t_s: number;
  source: 'run' | 'at' | 'signal' | 'stdin';
  label: string;
}

export interface CommandRecord {
  command: string;
  started_s: number;
  ended_s: number | null;
  exit_code: number | null;
  signal: string | null;
  /** The last KiB of each stream, secrets masked. */
  stdout: string;
  stderr: string;
  note?: string;
}

const KEEP_BYTES = 4096;

export class ChangeRunner {
  readonly marks: ChangeMark[] = [];
  command: CommandRecord | undefined;
  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readline: Interface | undefined;
  private readonly onSignal = () => this.mark('signal', 'SIGUSR2');

  constructor(private readonly t0: number, private readonly spec: { atS?: number; run?: string; markStdin: boolean; env?: Record<string, string>; input?: NodeJS.ReadableStream }) {}

  start(): void {
    process.on('SIGUSR2', this.onSignal);
    if (this.spec.markStdin) {
      this.readline = createInterface({ input: this.spec.input ?? process.stdin });
      this.readline.on('line', (line) => this.mark('stdin', line.trim() || 'mark'));
    }
    const { atS } = this.spec;
    if (atS !== undefined) {
      this.timer = setTimeout(() => {
        if (this.spec.run !== undefined) this.runCommand(this.spec.run);
        else this.mark('at', `--at ${atS} s`);
      }, Math.max(0, this.t0 + atS * 1000 - performance.now()));
    }
  }

  mark(source: ChangeMark['source'], label: string): void {
    this.marks.push({ t_s: this.nowS(), source, label: redact(label).slice(0, 200) });
  }

  /** Stops listening; waits up to `graceMs` for the command, then ends it (it is the run's child, by its pid). */
  async stop(graceMs: number): Promise<void> {
    clearTimeout(this.timer);
    process.off('SIGUSR2', this.onSignal);
    this.readline?.close();
    if (this.child && this.exited && this.command?.ended_s === null) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), graceMs); });
      if ((await Promise.race([this.exited, late])) === 'late') {
        this.command.note = `still running ${graceMs / 1000} s after the load ended: sent SIGTERM`;
        this.child.kill('SIGTERM');
        await Promise.race([this.exited, new Promise((r) => setTimeout(r, 2000))]);
      }
      clearTimeout(timer);
    }
  }

  private nowS(): number {
    return Math.round((performance.now() - this.t0)) / 1000;
  }

  private runCommand(command: string): void {
    const started = this.nowS();
    this.marks.push({ t_s: started, source: 'run', label: redact(command).slice(0, 200) });
    const rec: CommandRecord = { command: redact(command), started_s: started, ended_s: null, exit_code: null, signal: null, stdout: '', stderr: '' };
    this.command = rec;
    const out = { stdout: '', stderr: '' };
    const child = spawn(command, { shell: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...this.spec.env } });
    this.child = child;
    const keep = (which: 'stdout' | 'stderr') => (b: Buffer) => {
      out[which] = (out[which] + b.toString('utf8')).slice(-KEEP_BYTES);
    };
    child.stdout!.on('data', keep('stdout'));
    child.stderr!.on('data', keep('stderr'));
    this.exited = new Promise<void>((resolve) => {
      const finish = (code: number | null, signal: NodeJS.Signals | null, err?: Error) => {
        if (rec.ended_s !== null) return;
        rec.ended_s = this.nowS();
        rec.exit_code = code;
        rec.signal = signal;
        rec.stdout = redact(out.stdout);
        rec.stderr = redact(out.stderr + (err ? `\n${err.message}` : ''));
        resolve();
      };
      child.once('error', (e) => finish(null, null, e));
      child.once('close', (code, signal) => finish(code, signal));
    });
  }
}
