/**
 * Process metrics on `/metrics` under the usual names (`process_*`, `nodejs_*`), computed when scraped
 * (docs/operations.md, "Metrics and access log").
 */
import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

import { Counter, Gauge, type Registry } from 'prom-client';

/** How often the event-loop delay is sampled once someone scrapes (ms): 100 timer wakeups a second. */
const EVENT_LOOP_SAMPLE_MS = 10;

/**
 * Process metrics under the usual names (`process_*`, `nodejs_*`), computed when scraped. Not prom-client's
 * `collectDefaultMetrics`: it keeps an event-loop delay timer firing every 10 ms and a GC observer running whether
 * anyone scrapes or not. Here the event-loop delay histogram starts at the first scrape, and reports (then resets)
 * what it saw since the previous one.
 */
export function registerProcessMetrics(registers: Registry[]): void {
  new Counter({
    name: 'process_cpu_seconds_total',
    help: 'User and system CPU time spent, in seconds',
    registers,
    collect() {
      const { user, system } = process.cpuUsage();
      this.reset();
      this.inc((user + system) / 1e6);
    },
  });
  new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident set size, in bytes',
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  const memoryGauge = (name: string, help: string, read: (usage: NodeJS.MemoryUsage) => number): void =>
    void new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read(process.memoryUsage()));
      },
    });
  memoryGauge('nodejs_heap_size_total_bytes', 'V8 heap size, in bytes', (usage) => usage.heapTotal);
  memoryGauge('nodejs_heap_size_used_bytes', 'V8 heap used, in bytes', (usage) => usage.heapUsed);
  memoryGauge(
    'nodejs_external_memory_bytes',
    'Memory of C++ objects bound to JavaScript, in bytes',
    (usage) => usage.external,
  );
  if (process.platform === 'linux') {
    new Gauge({
      name: 'process_open_fds',
      help: 'Open file descriptors',
      registers,
      collect() {
        // Less the one the listing itself held.
        this.set(readdirSync('/proc/self/fd').length - 1);
      },
    });
  }
  let delay: ReturnType<typeof monitorEventLoopDelay> | undefined;
  new Gauge({
    name: 'nodejs_eventloop_delay_seconds',
    help: 'Event-loop delay since the previous scrape, in seconds (sampled every 10 ms from the first scrape on)',
    labelNames: ['quantile'],
    registers,
    collect() {
      if (delay === undefined) {
        delay = monitorEventLoopDelay({ resolution: EVENT_LOOP_SAMPLE_MS });
        delay.enable();
        return;
      }
      // The histogram holds the time between samples: the sampling interval itself is no delay.
      const seconds = (ns: number): number => Math.max(0, ns / 1e6 - EVENT_LOOP_SAMPLE_MS) / 1000;
      if (delay.count > 0) {
        this.set({ quantile: '0.5' }, seconds(delay.percentile(50)));
        this.set({ quantile: '0.99' }, seconds(delay.percentile(99)));
        this.set({ quantile: '1' }, seconds(delay.max));
      }
      delay.reset();
    },
  });
}
