/**
 * Streamable HTTP serving (`--http [host:]port`): stateless, so any replica answers any request over the same tree
 * (cursors are keyset cursors on URIs, valid on every replica). Both protocol eras through the SDK's
 * `createMcpHandler`; 2026-07-28 clients that keep a `subscriptions/listen` stream open hear about changes.
 * DNS-rebinding protection (Host and Origin checks) for loopback binds; optional bearer token.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { LiveCatalog } from './catalog.js';
import type { Config, HttpEndpoint } from './config.js';
import type { RunOptions } from './lifecycle.js';
import { createServerFactory } from './server/create-server.js';
import { ConnectionRegistry } from './server/subscriptions.js';

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

/**
 * Serves `config.roots` over Streamable HTTP at `http://<host>:<port>/mcp` until SIGINT or SIGTERM, then exits 0.
 *
 * @param config the resolved configuration; `config.http` must be set.
 * @param options logger, version and exit.
 * @returns once the server listens.
 * @throws Error when the port cannot be bound (the CLI exits 1 with the message).
 */
export async function runHttpServer(config: Config & { http: HttpEndpoint }, options: RunOptions): Promise<void> {
  const { logger } = options;
  const { host, port } = config.http;
  const catalog = new LiveCatalog(config, options);
  const factory = createServerFactory({
    source: catalog.source,
    version: options.version,
    logger,
    connections: new ConnectionRegistry(logger),
    compat: catalog.compat,
    stateless: true,
  });
  const handler = createMcpHandler(factory, { legacy: 'stateless', onerror: (error) => logger.debug({ err: error }, 'request error') });
  catalog.onChange(({ previous, next, diff }) => {
    if (previous.generation === 0) return;
    if (diff.listChanged) handler.notify.resourcesChanged();
    for (const uri of diff.updated) handler.notify.resourceUpdated(uri);
    if (catalog.compat.promptsChanged(previous, next)) handler.notify.promptsChanged();
  });
  const serveMcp = toNodeHandler(handler, { onerror: (error) => logger.warn({ err: error }, 'HTTP request failed') });
  const loopback = isLoopbackHost(host);
  const hostGuard = loopback ? localhostHostValidation() : undefined;
  const originGuard = loopback ? localhostOriginValidation() : undefined;
  if (!loopback && config.httpToken === undefined) {
    logger.warn({ host }, `serving on non-loopback address ${host} without --http-token: anyone who can reach the port can read every skill`);
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === HEALTH_PATH || path === READY_PATH) {
      const snapshot = catalog.store.current;
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
    if (config.httpToken !== undefined && !hasBearerToken(req.headers.authorization, config.httpToken)) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="skills-serve"' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Unauthorized: send Authorization: Bearer <token>' } }));
      return;
    }
    void serveMcp(req, res);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address !== null ? address.port : port;
  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  logger.info({ event: 'serving', transport: 'http', url: `http://${shownHost}:${actualPort}${MCP_PATH}`, port: actualPort }, `serving on http://${shownHost}:${actualPort}${MCP_PATH}; indexing`);

  let stopping = false;
  const stop = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'shutting down');
    server.closeAllConnections();
    Promise.allSettled([new Promise((resolve) => server.close(resolve)), handler.close(), catalog.close()]).then(() => options.exit(0));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGHUP', () => stop('SIGHUP'));
  catalog.start().catch((error: unknown) => {
    logger.fatal({ err: error }, 'index build failed');
    options.exit(1);
  });
}
