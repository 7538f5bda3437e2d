/**
 * Streamable HTTP serving (`--http [host:]port`): stateless, so any replica answers any request over the same tree
 * (cursors are keyset cursors on URIs, valid on every replica). Both protocol eras through the SDK's
 * `createMcpHandler`; 2026-07-28 clients that keep a `subscriptions/listen` stream open hear about changes.
 * DNS-rebinding protection (Host and Origin checks) for loopback binds; optional bearer token.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { HttpEndpoint } from '../config.js';
import type { Adapter, Runtime } from '../runtime.js';
import { createServerFactory } from '../server/create-server.js';
import { replayRequest, tryFastPath } from './http-fast.js';

/** The path MCP is served on. */
export const MCP_PATH = '/mcp';
/** Liveness (always 200 while the process runs) and readiness (200 once the first index build is served). */
export const HEALTH_PATH = '/healthz';
export const READY_PATH = '/readyz';

/** Whether a bind address only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/u.test(host);
}

/**
 * Whether an `Authorization` header carries the bearer token (compared in constant time).
 *
 * @param header the request's `Authorization` value.
 * @param token the configured token.
 */
export function hasBearerToken(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/iu.exec(header ?? '');
  if (match === null) return false;
  const given = Buffer.from(match[1] as string, 'utf8');
  const expected = Buffer.from(token, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Serves the runtime over Streamable HTTP at `http://<host>:<port>/mcp`; `/healthz` and `/readyz` beside it. */
export class HttpAdapter implements Adapter {
  readonly ended: Promise<string> = new Promise(() => undefined); // only a signal ends an HTTP server
  readonly #endpoint: HttpEndpoint;
  readonly #token: string | undefined;
  #server: Server | undefined;
  #handler: McpHttpHandler | undefined;
  #logger: Runtime['logger'] | undefined;
  /** MCP requests served, and how many of them the fast path answered (logged when the server stops). */
  #requests = 0;
  #fastAnswers = 0;

  constructor(endpoint: HttpEndpoint, token: string | undefined) {
    this.#endpoint = endpoint;
    this.#token = token;
  }

  /** @throws Error when the port cannot be bound. */
  async start(runtime: Runtime): Promise<void> {
    const { logger } = runtime;
    this.#logger = logger;
    const { host, port } = this.#endpoint;
    const token = this.#token;
    const factory = createServerFactory(runtime, { stateless: true });
    const handler = createMcpHandler(factory, { legacy: 'stateless', onerror: (error) => logger.debug({ event: 'request-error', err: error }, 'request error') });
    this.#handler = handler;
    runtime.on('changed', ({ diff, promptsChanged }) => {
      if (diff.listChanged) handler.notify.resourcesChanged();
      for (const uri of diff.updated) handler.notify.resourceUpdated(uri);
      if (promptsChanged) handler.notify.promptsChanged();
    });
    const serveMcp = toNodeHandler(handler, { onerror: (error) => logger.warn({ event: 'request-failed', err: error }, 'HTTP request failed') });
    const loopback = isLoopbackHost(host);
    const hostGuard = loopback ? localhostHostValidation() : undefined;
    const originGuard = loopback ? localhostOriginValidation() : undefined;
    if (!loopback && token === undefined) {
      logger.warn({ event: 'http-open', host }, `serving on non-loopback address ${host} without --http-token: anyone who can reach the port can read every skill`);
    }
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === HEALTH_PATH || path === READY_PATH) {
        const snapshot = runtime.store.current;
        const ready = snapshot.generation > 0;
        res.writeHead(path === READY_PATH && !ready ? 503 : 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: ready ? 'ready' : 'indexing', skills: snapshot.ordered.length, generation: snapshot.generation }));
        return;
      }
      if (path !== MCP_PATH) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: `not found; MCP is served at ${MCP_PATH}` }));
        return;
      }
      if (hostGuard !== undefined && !hostGuard(req, res)) return;
      if (originGuard !== undefined && !originGuard(req, res)) return;
      if (token !== undefined && !hasBearerToken(req.headers.authorization, token)) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="skills-serve"' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Unauthorized: send Authorization: Bearer <token>' } }));
        return;
      }
      this.#requests++;
      void tryFastPath(req, res, runtime.handlers).then(
        (declined) => {
          if (declined === undefined) {
            this.#fastAnswers++;
            return undefined;
          }
          return declined.body === undefined ? serveMcp(req, res) : serveMcp(replayRequest(req, declined.body), res);
        },
        (error: unknown) => {
          logger.warn({ event: 'request-failed', err: error }, 'HTTP request failed');
          if (!res.headersSent) res.writeHead(500).end();
        },
      );
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => {
        const reason = error.code === 'EADDRINUSE' ? 'the port is in use' : error.message;
        reject(Object.assign(new Error(`cannot serve HTTP on ${host}:${port}: ${reason}`), { code: error.code }));
      });
      server.listen(port, host, () => resolve());
    });
    const address = server.address();
    const actualPort = typeof address === 'object' && address !== null ? address.port : port;
    const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
    const url = `http://${shownHost}:${actualPort}${MCP_PATH}`;
    logger.info({ event: 'serving', transport: 'http', url, port: actualPort }, `serving on ${url}; indexing`);
  }

  /** Stops accepting connections, finishes requests in flight, closes listen streams, within `timeoutMs`. */
  async stop(timeoutMs: number): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    const timer = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await Promise.race([Promise.allSettled([this.#handler?.close(), closed]), timer]);
    server.closeAllConnections();
    this.#logger?.info({ event: 'http-stopped', requests: this.#requests, fastAnswers: this.#fastAnswers }, `served ${this.#requests} MCP requests`);
  }
}
