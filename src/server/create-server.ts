/**
 * The per-connection server factory: one `McpServer` per connection (and per `server/discover` probe), each with
 * the one shared `SkillsExtension` attached and the compat surfaces watching its Skills-extension requests (a client
 * that uses the extension is offered no compat tools or prompts). All catalog state lives outside the factory
 * (docs/ARCHITECTURE.md, "Serving").
 * Implements SEP-2640 "Capability": `extensions["io.modelcontextprotocol/skills"] = { directoryRead: true }` plus
 * the `resources` capability; with `--compat auto|on` also `instructions`, `tools` and `prompts`
 * (`compat/surfaces.ts`).
 */
import { McpServer } from '@modelcontextprotocol/server';
import { SkillsExtension, type SkillSource } from '@modelcontextprotocol/server/ext/skills';

import type { Logger } from '../log.js';
import type { CompatSurfaces } from './compat/surfaces.js';
import type { PublicDiagnostic } from './diagnostics.js';
import { installSkillsHandlers, type SkillsHandlerContext } from './skills-handlers.js';
import type { ConnectionRegistry } from './subscriptions.js';
import { isVisibleUri, type Visibility } from './visibility.js';

/** Server name announced in `initialize` / `server/discover`. */
export const SERVER_NAME = 'skills-serve';

/** What every connection's server is built from (the runtime is one). */
export interface ServingContext {
  /** What the SDK's `SkillsExtension` is built over (capability, template, `resources/list`). */
  readonly source: SkillSource;
  /** What `skills/list`, `skills/get`, `resources/read` and `resources/directory/read` are answered from. */
  readonly handlers: SkillsHandlerContext;
  readonly version: string;
  readonly logger: Logger;
  /** Instructions, tools and prompts for hosts without the extension (nothing in `--compat off`). */
  readonly compat: CompatSurfaces;
}

/** How a transport serves its connections. */
export interface FactoryOptions {
  /** Tracks connections for change notifications and serves `resources/subscribe` on 2025-era ones. */
  readonly connections?: ConnectionRegistry;
  /**
   * Stateless HTTP: a 2025-era exchange has no channel for server notifications, so those servers declare neither
   * `resources.subscribe` nor `resources.listChanged`.
   */
  readonly stateless?: boolean;
  /** The view of the clients these servers serve (`--http-tokens`); `undefined` sees everything. */
  readonly visibility?: Visibility;
  /** Stateless HTTP: the diagnostics sent with each first `skills/list` page (`SkillsHandlerContext.diagnostics`). */
  readonly diagnostics?: () => readonly PublicDiagnostic[];
}

/**
 * Returns the factory the serving entries (`serveStdio`, `createMcpHandler`) call for each connection or request.
 *
 * @param context the shared source, handlers, version, logger and compat surfaces.
 * @returns an async factory producing a fresh, unconnected `McpServer` with the extension (and the compat surfaces)
 *   attached, for the era the serving entry asks for. It resolves at once: the instructions are fixed, and nothing
 *   waits for the first index build but the requests that read it.
 */
export function createServerFactory(
  context: ServingContext,
  options: FactoryOptions = {},
): (request: { era: 'legacy' | 'modern' }) => Promise<McpServer> {
  const view = options.visibility;
  const handlers: SkillsHandlerContext = {
    ...context.handlers,
    ...(view === undefined ? {} : { visibility: view }),
    ...(options.diagnostics === undefined ? {} : { diagnostics: options.diagnostics }),
  };
  const extension = new SkillsExtension({
    source: view === undefined ? context.source : viewSource(context.source, view),
    onWarning: (warning) => context.logger.warn({ path: warning.path }, warning.message),
  });
  return async ({ era }) => {
    const instructions = context.compat.instructions;
    const notifies = !(options.stateless === true && era === 'legacy');
    const server = new McpServer(
      { name: SERVER_NAME, version: context.version },
      {
        capabilities: { resources: notifies ? { listChanged: true, subscribe: true } : {}, logging: {} },
        ...(instructions === undefined ? {} : { instructions }),
      },
    );
    extension.attach(server);
    const observer = context.compat.attach(server, era, view, options.stateless !== true);
    installSkillsHandlers(server, era, handlers, observer);
    if (notifies) options.connections?.register(server, era);
    return server;
  };
}

/** A source whose `resources/list` holds only what `view` may see (the other methods are answered by the handlers). */
function viewSource(source: SkillSource, view: Visibility): SkillSource {
  const listResources = source.listResources?.bind(source);
  return {
    ...source,
    ...(listResources === undefined
      ? {}
      : {
          listResources: async (ctx) =>
            (await listResources.call(source, ctx)).filter((resource) => isVisibleUri(view, resource.uri)),
        }),
  };
}
