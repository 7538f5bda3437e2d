/**
 * The per-connection server factory: one `McpServer` per connection (and per `server/discover` probe), each with a
 * `SkillsExtension` over the one shared source, watched by the compat surfaces (a client that uses the extension is
 * offered no compat tools or prompts). All catalog state lives outside the factory (DESIGN §7).
 * Implements SEP-2640 "Capability": `extensions["io.modelcontextprotocol/skills"] = { directoryRead: true }` plus
 * the `resources` capability; with `--compat auto|on` also `instructions`, `tools` and `prompts` (see `compat.ts`).
 */
import { McpServer } from '@modelcontextprotocol/server';
import { SkillsExtension, type SkillSource } from '@modelcontextprotocol/server/ext/skills';
import { serveResourceRead } from './resource-read.js';
import type { Logger } from '../log.js';
import type { CompatSurfaces } from './compat.js';
import type { ConnectionRegistry } from './subscriptions.js';

/** Server name announced in `initialize` / `server/discover`. */
export const SERVER_NAME = 'skills-serve';

/** What every connection's server is built from. */
export interface ServerContext {
  readonly source: SkillSource;
  readonly version: string;
  readonly logger: Logger;
  /** Tracks connections for change notifications and serves `resources/subscribe` on 2025-era ones. */
  readonly connections: ConnectionRegistry;
  /** Instructions, tools and prompts for hosts without the extension (nothing in `--compat off`). */
  readonly compat: CompatSurfaces;
  /**
   * Stateless HTTP: a 2025-era exchange has no channel for server notifications, so those servers declare neither
   * `resources.subscribe` nor `resources.listChanged`.
   */
  readonly stateless?: boolean;
}

/**
 * Returns the factory `serveStdio` calls for each connection.
 *
 * @param context the shared source, the version string, the logger, the connection registry and the compat surfaces.
 * @returns an async factory producing a fresh, unconnected `McpServer` with the extension (and the compat surfaces)
 *   attached, for the era the serving entry asks for. It resolves within `COMPAT_CATALOG_WAIT_MS` (waiting for the
 *   first index build only for the instructions catalog; at once in `--compat off`).
 */
export function createServerFactory(context: ServerContext): (request: { era: 'legacy' | 'modern' }) => Promise<McpServer> {
  const onWarning = (warning: { path: string; message: string }): void => context.logger.warn({ path: warning.path }, warning.message);
  return async ({ era }) => {
    const instructions = await context.compat.instructions();
    const notifies = !(context.stateless === true && era === 'legacy');
    const server = new McpServer(
      { name: SERVER_NAME, version: context.version },
      {
        capabilities: { resources: notifies ? { listChanged: true, subscribe: true } : {}, logging: {} },
        ...(instructions === undefined ? {} : { instructions }),
      },
    );
    context.compat.attach(server, era);
    const source = context.compat.observe(server, context.source);
    new SkillsExtension({ source, onWarning }).attach(server);
    serveResourceRead(server, source);
    if (notifies) context.connections.register(server, era);
    return server;
  };
}
