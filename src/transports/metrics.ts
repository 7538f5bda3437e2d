/**
 * `/metrics` of `--http` in the Prometheus text exposition format, through `prom-client` (one registry per adapter,
 * not the library's global one), and the method label every request is counted under (docs/ARCHITECTURE.md,
 * "Operating"; the metric list: docs/operations.md, "Metrics and access log").
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

import { ROOT_KINDS } from '../roots/kinds.js';
import type { Runtime } from '../runtime.js';
import { registerProcessMetrics } from './process-metrics.js';

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

/**
 * The outcome label of a finished response: by status, and `error` for a JSON-RPC error answered with a 2xx status
 * (the SDK answers most errors of a request it read with 200).
 *
 * @param rpcError the JSON-RPC error code the response carried, if any ({@link jsonRpcErrorCode}).
 */
export function outcomeLabel(status: number, rpcError?: number): string {
  if (status >= 200 && status < 300) return rpcError === undefined ? 'ok' : 'error';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  return status >= 500 ? 'server_error' : 'client_error';
}

/**
 * The JSON-RPC error codes counted under their own value (JSON-RPC 2.0 §5.1, and the MCP SDK's: -32000 transport
 * errors, -32001 unauthorized, -32002 resource not found, -32020 header mismatch, -32021 missing client capability,
 * -32022 unsupported protocol version, -32042 URL elicitation); any other code is `other`, so labels stay few.
 */
const KNOWN_ERROR_CODES = new Set([
  -32700, -32600, -32601, -32602, -32603, -32000, -32001, -32002, -32020, -32021, -32022, -32042,
]);

/** The `code` label of a JSON-RPC error code. */
export function errorCodeLabel(code: number): string {
  return KNOWN_ERROR_CODES.has(code) ? String(code) : 'other';
}

/** How much of a response chunk is looked at for a JSON-RPC error (bytes): its start, where a response's keys are. */
const SNIFF_BYTES = 256;

/**
 * A JSON-RPC error response at the start of a chunk the transport writes: a JSON body, or one server-sent event
 * (`event: message` / `data: {…}`), whose top-level object holds `"error":{"code":N` after at most its `jsonrpc` and
 * `id` members (the order the SDK writes them in). A result never matches: its `"result"` comes first or right after
 * those members, and inside a JSON string every `"` is escaped.
 */
const ERROR_RESPONSE =
  /^(?:(?:event|id|retry):[^\n]*\n)*(?:data: ?)?\{(?:"jsonrpc":"2\.0",|"id":(?:-?\d+|"[^"\\]{0,128}"|null),){0,2}"error":\{"code":(-?\d{1,9})[,}]/u;

/**
 * The JSON-RPC error code a response chunk starts with (a JSON body or one server-sent event), if it is an error
 * response. Looks at the first {@link SNIFF_BYTES} bytes only, so a long string id is not recognized.
 */
export function jsonRpcErrorCode(chunk: string | Uint8Array): number | undefined {
  const head =
    typeof chunk === 'string'
      ? chunk.slice(0, SNIFF_BYTES)
      : Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.byteLength, SNIFF_BYTES)).toString('latin1');
  const match = ERROR_RESPONSE.exec(head);
  return match === null ? undefined : Number(match[1]);
}

/** The metrics of one HTTP adapter. */
export class HttpMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'method' | 'outcome'>;
  readonly latency: Histogram<'method' | 'outcome'>;
  readonly authFailures: Counter<'reason'>;
  readonly jsonRpcErrors: Counter<'method' | 'code'>;
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
    this.jsonRpcErrors = new Counter({
      name: 'skills_serve_jsonrpc_errors_total',
      help: 'JSON-RPC error responses to admitted MCP requests, by method and error code (whatever the HTTP status)',
      labelNames: ['method', 'code'],
      registers,
    });
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
    registerRootMetrics(runtime, registers);
    registerProcessMetrics(registers);
    runtime.on('changed', () => this.rebuilds.inc());
    runtime.on('refreshed', (kind, ok) => this.refreshes.get(kind)?.inc({ outcome: ok ? 'ok' : 'failed' }));
    runtime.on('refused', (rootIndex, kind) => this.refusals.get(kind)?.inc({ root: String(rootIndex) }));
  }
}

/**
 * Per root with versions (`RootSource.status`: a git root), read when scraped: the version served, seconds since it
 * was fetched into the cache, and whether it is a fallback for an unreachable origin. `root` is the root's position on
 * the command line (0 first), so that no URL or path is shown to whoever may read `/metrics`.
 */
function registerRootMetrics(runtime: Runtime, registers: Registry[]): void {
  new Gauge({
    name: 'skills_serve_root_version_info',
    help: 'The version each root serves (a git root: its commit), by root position and kind',
    labelNames: ['root', 'kind', 'version'],
    registers,
    collect() {
      this.reset();
      for (const { rootIndex, kind, status } of runtime.rootStatuses())
        this.set({ root: String(rootIndex), kind, version: status.version }, 1);
    },
  });
  new Gauge({
    name: 'skills_serve_root_version_age_seconds',
    help: 'Seconds since the version a root serves was fetched into the cache',
    labelNames: ['root', 'kind'],
    registers,
    collect() {
      this.reset();
      const now = Date.now();
      for (const { rootIndex, kind, status } of runtime.rootStatuses()) {
        if (status.fetchedAt !== undefined)
          this.set({ root: String(rootIndex), kind }, Math.max(0, (now - status.fetchedAt) / 1000));
      }
    },
  });
  new Gauge({
    name: 'skills_serve_root_stale',
    help: '1 while a root serves its cached version because its origin could not be reached (at start or at its last check)',
    labelNames: ['root', 'kind'],
    registers,
    collect() {
      this.reset();
      for (const { rootIndex, kind, status } of runtime.rootStatuses())
        this.set({ root: String(rootIndex), kind }, status.stale ? 1 : 0);
    },
  });
}
