// The live progress line on stderr: elapsed time, send rate, answers, errors and the
// running p50/p95. On a terminal it rewrites one line every second; in a log (CI) it
// prints a line every 5 seconds instead of flooding it.

export interface ProgressSnapshot {
  phase: string;
  elapsedS: number;
  totalS?: number;
  sent: number;
  ok: number;
  errors: number;
  inFlight: number;
  /** Which latency p50/p95 show (ttft, latency). */
  metric: string;
  p50Ms: number;
  p95Ms: number;
  /** Answers behind p50/p95 (0: none yet, and no figure to show). */
  samples?: number;
}

export class Progress {
  private timer: NodeJS.Timeout | undefined;
  private lastSent = 0;
  private lastAt = 0;
  private ticks = 0;
  private lineShown = false;
  private readonly tty: boolean;

  constructor(private readonly enabled: boolean, private readonly out: NodeJS.WriteStream = process.stderr) {
    this.tty = Boolean(out.isTTY);
  }

  start(snapshot: () => ProgressSnapshot): void {
    if (!this.enabled) return;
    this.stopTimer();
    this.lastSent = 0;
    this.lastAt = performance.now();
    this.ticks = 0;
    this.timer = setInterval(() => this.tick(snapshot()), 1000);
    this.timer.unref();
  }

  stop(): void {
    this.stopTimer();
    this.clearLine();
  }

  /** A line of its own (phase changes, warnings), printed above the progress line. */
  note(text: string): void {
    if (!this.enabled) return;
    this.clearLine();
    this.out.write(`${text}\n`);
  }

  private tick(s: ProgressSnapshot): void {
    const now = performance.now();
    const rate = ((s.sent - this.lastSent) * 1000) / Math.max(1, now - this.lastAt);
    this.lastSent = s.sent;
    this.lastAt = now;
    this.ticks++;
    const line = formatProgress(s, rate);
    if (this.tty) {
      this.out.write(`\r\x1b[2K${line}`);
      this.lineShown = true;
    } else if (this.ticks % 5 === 0) {
      this.out.write(`${line}\n`);
    }
  }

  private clearLine(): void {
    if (this.tty && this.lineShown) this.out.write('\r\x1b[2K');
    this.lineShown = false;
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

export function formatProgress(s: ProgressSnapshot, ratePerS: number): string {
  const elapsed = s.totalS ? `${s.elapsedS.toFixed(0)}/${s.totalS.toFixed(0)} s` : `${s.elapsedS.toFixed(0)} s`;
  return `[${s.phase}] ${elapsed}  ${ratePerS.toFixed(1)} req/s  sent ${s.sent}  ok ${s.ok}  errors ${s.errors}  in flight ${s.inFlight}  ` +
    (s.samples === 0 ? `${s.metric}: no answer yet` : `${s.metric} p50 ${fmtMs(s.p50Ms)} p95 ${fmtMs(s.p95Ms)}`);
}

function fmtMs(ms: number): string {
  return ms >= 100 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(1)} ms`;
}
