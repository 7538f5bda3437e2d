/**
 * `/metrics` of `--http` in the Prometheus text exposition format, through `prom-client` (one registry per adapter,
 * not the library's global one), and the method label every request is counted under (docs/ARCHITECTURE.md,
 * "Operating").
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

import { ROOT_KINDS } from '../roots/kinds.js';
import type { Runtime } from '../runtime.js';

/** The path metrics are served on. */
export const METRICS_PATH = '/metrics';

/** Request latency buckets (seconds): from 100 µs, where fast-path reads sit, to 10 s. */
const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5, 10];

/** The JSON-RPC methods counted under their own name; anything else is `other` (labels stay few). */
const KNOWN_METHODS = new Set([
  'initialize',
  'ping',
  'server/discover',
  'skills/list',
  'skills/get',
  'resources/read',
  'resources/list',
  'resources/templates/list',
  'resources/directory/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'subscriptions/listen',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'notifications/initialized',
  'notifications/cancelled',
]);

/**
 * The method label of a request: the `mcp-method` header (2026-07-28 clients send it), else the first `"method"`
 * of the body when one was read, else `unknown`; a name not in the known set is `other`.
 */
export function methodLabel(header: string | string[] | undefined, body: Buffer | undefined): string {
  let method = typeof header === 'string' ? header : undefined;
  if (method === undefined && body !== undefined)
    method = /"method"\s*:\s*"([^"\\]{1,64})"/u.exec(body.subarray(0, 4096).toString('latin1'))?.[1];
  if (method === undefined) return 'unknown';
  return KNOWN_METHODS.has(method) ? method : 'other';
}

/** The outcome label of a finished response: by status. */
export function outcomeLabel(status: number): string {
  if (status >= 200 && status < 300) return 'ok';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  return status >= 500 ? 'server_error' : 'client_error';
}

/** The metrics of one HTTP adapter. */
export class HttpMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'method' | 'outcome'>;
  readonly latency: Histogram<'method' | 'outcome'>;
  readonly authFailures: Counter<'reason'>;
  readonly listenStreams: Gauge;
  readonly rebuilds: Counter;
  /** Refreshes of roots by kind name (`skills_serve_git_polls_total` for git roots: `RootKind.refreshMetric`). */
  readonly refreshes = new Map<string, Counter<'outcome'>>();
  /** Refused versions by kind name, labelled by root (`skills_serve_git_signature_refusals_total`). */
  readonly refusals = new Map<string, Counter<'root'>>();

  /**
   * @param runtime read for the catalog gauges when scraped; its `changed` and `refreshed` events are counted.
   * @param views how many distinct views exist now (tokens files and claims).
   * @param reasons every reason a request can be refused for in this configuration: each series starts at 0, so a
   *   rate or an alert on it works before the first refusal.
   */
  constructor(runtime: Runtime, views: () => number, reasons: readonly string[]) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'skills_serve_http_requests_total',
      help: 'MCP requests over HTTP, by JSON-RPC method and outcome',
      labelNames: ['method', 'outcome'],
      registers,
    });
    this.latency = new Histogram({
      name: 'skills_serve_http_request_duration_seconds',
      help: 'Time from a request arriving to its response finishing (listen streams: how long they stayed open)',
      labelNames: ['method', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.authFailures = new Counter({
      name: 'skills_serve_auth_failures_total',
      help: 'Refused requests to /mcp, by reason',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of reasons) this.authFailures.inc({ reason }, 0);
    this.listenStreams = new Gauge({
      name: 'skills_serve_listen_streams',
      help: 'Open subscriptions/listen streams',
      registers,
    });
    this.rebuilds = new Counter({
      name: 'skills_serve_rebuilds_total',
      help: 'Snapshots swapped in after the first (watch batches and new git commits)',
      registers,
    });
    for (const { name, refreshMetric, refusalMetric } of ROOT_KINDS) {
      if (refreshMetric !== undefined)
        this.refreshes.set(name, new Counter({ ...refreshMetric, labelNames: ['outcome'], registers }));
      if (refusalMetric !== undefined)
        this.refusals.set(name, new Counter({ ...refusalMetric, labelNames: ['root'], registers }));
    }
    new Gauge({
      name: 'skills_serve_catalog_skills',
      help: 'Skills served',
      registers,
      collect() {
        this.set(runtime.store.current.ordered.length);
      },
    });
    new Gauge({
      name: 'skills_serve_catalog_generation',
      help: 'Generation of the snapshot served (0 until the first build)',
      registers,
      collect() {
        this.set(runtime.store.current.generation);
      },
    });
    new Gauge({
      name: 'skills_serve_views',
      help: 'Distinct views (sets of visible prefixes) with a handler',
      registers,
      collect() {
        this.set(views());
      },
    });
    runtime.on('changed', () => this.rebuilds.inc());
    runtime.on('refreshed', (kind, ok) => this.refreshes.get(kind)?.inc({ outcome: ok ? 'ok' : 'failed' }));
    runtime.on('refused', (kind, refusal) => this.refusals.get(kind)?.inc({ root: refusal.root }));
  }
}
