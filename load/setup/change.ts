// The change during a load run: an operator's command started at a set time (--at,
// --run; through the shell, its exit status and the tail of its output kept with every
// secret masked), and marks from outside for changes made by hand (SIGUSR2, or a line
// on stdin with --mark-stdin). The run goes on through all of it; at its end whatever
// the command started is stopped with it (its process group).
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
  /** Settles when the shell has exited and its output pipes have closed. */
  private closed: Promise<void> | undefined;
  private readonly out = { stdout: '', stderr: '' };
  private timer: NodeJS.Timeout | undefined;
  private readline: Interface | undefined;
  private readonly onSignal = () => this.mark('signal', 'SIGUSR2');
  // Detached, the group no longer gets the terminal's Ctrl-C: if this process exits first, it takes the group down.
  private readonly onExit = () => { if (this.child) signalGroup(this.child, 'SIGKILL'); };

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

  /**
   * Stops listening; waits up to `graceMs` for the command and what it started, then
   * ends its whole process group (SIGTERM, then SIGKILL): a shell's children outlive it.
   */
  async stop(graceMs: number): Promise<void> {
    clearTimeout(this.timer);
    process.off('SIGUSR2', this.onSignal);
    this.readline?.close();
    const rec = this.command;
    if (!this.child || !this.closed || !rec) return;
    try {
      await this.stopGroup(rec, graceMs);
    } finally {
      process.off('exit', this.onExit);
    }
  }

  private async stopGroup(rec: CommandRecord, graceMs: number): Promise<void> {
    if (!this.child || !this.closed) return;
    if ((await settles(this.closed, graceMs)) && !groupAlive(this.child.pid)) return;
    const shellRunning = rec.ended_s === null;
    signalGroup(this.child, 'SIGTERM');
    if (!(await settles(this.closed, TERM_GRACE_MS)) || groupAlive(this.child.pid)) {
      signalGroup(this.child, 'SIGKILL');
      await settles(this.closed, TERM_GRACE_MS);
    }
    rec.note = shellRunning
      ? `still running ${graceMs / 1000} s after the load ended: its process group was stopped`
      : 'processes it started were still running when the run ended: its process group was stopped';
    this.keepOutput();
  }

  private nowS(): number {
    return Math.round((performance.now() - this.t0)) / 1000;
  }

  private runCommand(command: string): void {
    const started = this.nowS();
    this.marks.push({ t_s: started, source: 'run', label: redact(command).slice(0, 200) });
    const rec: CommandRecord = { command: redact(command), started_s: started, ended_s: null, exit_code: null, signal: null, stdout: '', stderr: '' };
    this.command = rec;
    // detached: the shell leads a process group of its own, so everything it starts can be stopped with it.
    const child = spawn(command, { shell: true, detached: process.platform !== 'win32', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...this.spec.env } });
    this.child = child;
    process.on('exit', this.onExit);
    const keep = (which: 'stdout' | 'stderr') => (b: Buffer) => {
      this.out[which] = (this.out[which] + b.toString('utf8')).slice(-KEEP_BYTES);
    };
    child.stdout!.on('data', keep('stdout'));
    child.stderr!.on('data', keep('stderr'));
    // The exit status is the shell's; the output is whole once every process holding its pipes is gone.
    const exited = (code: number | null, signal: NodeJS.Signals | null) => {
      if (rec.ended_s !== null) return;
      rec.ended_s = this.nowS();
      rec.exit_code = code;
      rec.signal = signal;
      this.keepOutput();
    };
    child.once('exit', exited);
    this.closed = new Promise<void>((resolve) => {
      child.once('error', (e) => {
        this.out.stderr += `\n${e.message}`;
        exited(null, null);
        resolve();
      });
      child.once('close', (code, signal) => {
        exited(code, signal);
        this.keepOutput();
        resolve();
      });
    });
  }

  private keepOutput(): void {
    if (!this.command) return;
    this.command.stdout = redact(this.out.stdout);
    this.command.stderr = redact(this.out.stderr);
  }
}

const TERM_GRACE_MS = 2000;

/** True when `p` settled within `ms`. */
async function settles(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), ms); });
  try {
    return await Promise.race([p.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether any process of the group led by `pid` is left (the shell itself may be gone). */
function groupAlive(pid: number | undefined): boolean {
  if (pid === undefined || process.platform === 'win32') return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch {
    // the group is gone already
  }
}
