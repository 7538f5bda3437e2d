/**
 * The per-connection server factory: one `McpServer` per connection (and per `server/discover` probe), each with
 * the one shared `SkillsExtension` attached. All state lives outside the factory (DESIGN §7).
 * Implements SEP-2640 "Capability": `extensions["io.modelcontextprotocol/skills"] = { directoryRead: true }` plus
 * the `resources` capability.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { SkillsExtension, type SkillSource } from '@modelcontextprotocol/server/ext/skills';
import type { Logger } from '../log.js';
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
}

/**
 * Returns the factory `serveStdio` calls for each connection.
 *
 * @param context the shared source, the version string and the logger.
 * @returns a factory producing a fresh, unconnected `McpServer` with the extension attached, for the era the serving
 *   entry asks for.
 */
export function createServerFactory(context: ServerContext): (request: { era: 'legacy' | 'modern' }) => McpServer {
  const extension = new SkillsExtension({
    source: context.source,
    onWarning: (warning) => context.logger.warn({ path: warning.path }, warning.message),
  });
  return ({ era }) => {
    const server = new McpServer(
      { name: SERVER_NAME, version: context.version },
      { capabilities: { resources: { listChanged: true, subscribe: true } } },
    );
    extension.attach(server);
    context.connections.register(server, era);
    return server;
  };
}
