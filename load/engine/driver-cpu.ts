// The driver's own cost, measured so a report can say whether the numbers are the
// target's or the load generator's: CPU time (in cores), event-loop utilisation and
// event-loop delay. A busy or late loop delays every timestamp the driver takes.
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';

const RESOLUTION_MS = 10;
const RSS_EVERY_S = 5;
const MAX_RSS_SAMPLES = 240;

export interface DriverStats {
  cpu_user_s: number;
  cpu_system_s: number;
  /** CPU time / wall time: 1 = one core busy all the time. */
  cpu_cores: number;
  event_loop_utilization: number;
  event_loop_delay_p99_ms: number;
  max_rss_mib: number;
  /** Resident memory every RSS_EVERY_S seconds of the run (MiB): flat in a healthy long run. At most MAX_RSS_SAMPLES, thinned evenly. */
  rss_mib_samples: number[];
  rss_sample_every_s: number;
  node_version: string;
  /** Set when the driver itself may have limited or skewed the run. */
  warning?: string;
}

export class CpuMeter {
  private readonly cpu0 = process.cpuUsage();
  private readonly wall0 = performance.now();
  private readonly elu0: EventLoopUtilization = performance.eventLoopUtilization();
  private readonly delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private rss: number[] = [];
  private ticks = 0;
  /** Samples kept every `stride` ticks (doubles each time the cap is reached). */
  private stride = 1;
  private readonly sampler: NodeJS.Timeout;

  constructor() {
    this.delay.enable();
    this.sampler = setInterval(() => this.sampleRss(), RSS_EVERY_S * 1000);
    this.sampler.unref();
  }

  private sampleRss(): void {
    if (++this.ticks % this.stride !== 0) return;
    this.rss.push(Math.round(process.memoryUsage.rss() / 1048576));
    // Bounded however long the run: at the cap, keep every other sample and keep half as many from then on.
    if (this.rss.length >= MAX_RSS_SAMPLES) {
      this.rss = this.rss.filter((_, i) => i % 2 === 1);
      this.stride *= 2;
    }
  }

  stop(): DriverStats {
    this.delay.disable();
    clearInterval(this.sampler);
    const cpu = process.cpuUsage(this.cpu0);
    const wall = Math.max(1, performance.now() - this.wall0) / 1000;
    const elu = performance.eventLoopUtilization(this.elu0).utilization;
    // The histogram holds whole timer intervals: the resolution itself is not delay.
    const delayP99 = this.delay.count > 0 ? Math.max(0, this.delay.percentile(99) / 1e6 - RESOLUTION_MS) : 0;
    const cores = (cpu.user + cpu.system) / 1e6 / wall;
    const stats: DriverStats = {
      cpu_user_s: r3(cpu.user / 1e6),
      cpu_system_s: r3(cpu.system / 1e6),
      cpu_cores: r3(cores),
      event_loop_utilization: r3(elu),
      event_loop_delay_p99_ms: r3(delayP99),
      max_rss_mib: Math.round(process.resourceUsage().maxRSS / 1024),
      rss_mib_samples: this.rss,
      rss_sample_every_s: RSS_EVERY_S * this.stride,
      node_version: process.version,
    };
    if (elu > 0.85 || delayP99 > 50) {
      stats.warning = `the driver's event loop was busy (utilisation ${(elu * 100).toFixed(0)} %, delay p99 ${delayP99.toFixed(0)} ms): latencies include its own lag; use fewer streams per process or a faster machine`;
    }
    return stats;
  }
}

function r3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
