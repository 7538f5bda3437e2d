/**
 * Connected servers and what each asked to hear: `resources/subscribe` bookkeeping on 2025-era connections, and
 * the notifications one snapshot swap calls for (live updates).
 *
 * - `notifications/resources/list_changed` goes to every connection when the diff says so.
 * - `notifications/resources/updated` goes, per changed or appeared file URI, to 2025-era connections subscribed to
 *   that URI, and to every 2026-07-28 connection (the SDK's listen router delivers it only to listeners that asked).
 */
import { type McpServer, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';

import type { SnapshotDiff } from '../index/diff.js';
import { canonicalSkillUri } from '../index/uri.js';
import type { Logger } from '../log.js';
import { DIAGNOSTICS_LOGGER, echo, type Era, URI_PARAMS } from '../wire/protocol.js';
import { logLevelOf, type PublicDiagnostic } from './diagnostics.js';

/** Most URIs one 2025-era connection may subscribe to. */
export const MAX_SUBSCRIPTIONS = 10_000;

interface Connection {
  readonly server: McpServer;
  readonly era: Era;
  /** The 2025-era handshake is complete (always true on 2026-07-28, which has none): notifications may flow. */
  initialized: boolean;
  /** Canonical URIs this 2025-era connection subscribed to. */
  readonly subscriptions: Set<string>;
}

export class ConnectionRegistry {
  readonly #connections = new Set<Connection>();
  readonly #logger: Logger;
  readonly #currentDiagnostics: () => readonly PublicDiagnostic[];

  /**
   * @param logger where delivery failures are logged (debug).
   * @param currentDiagnostics the diagnostics of the snapshot being served, sent to each 2025-era host as soon as its
   *   handshake completes (so problems found before it connected reach it too).
   */
  constructor(logger: Logger, currentDiagnostics: () => readonly PublicDiagnostic[] = () => []) {
    this.#logger = logger;
    this.#currentDiagnostics = currentDiagnostics;
  }

  /**
   * Tracks `server` until its transport closes; on 2025-era connections also serves `resources/subscribe` and
   * `resources/unsubscribe` (a well-formed `skill://` URI, served or not yet; anything else gets -32602, as does
   * a subscription beyond {@link MAX_SUBSCRIPTIONS}).
   *
   * @param server a freshly built, not yet connected server.
   * @param era the era the factory was asked for.
   */
  register(server: McpServer, era: Era): void {
    const connection: Connection = { server, era, initialized: era === 'modern', subscriptions: new Set() };
    this.#connections.add(connection);
    const low = server.server;
    const initialized = low.oninitialized;
    low.oninitialized = () => {
      initialized?.();
      connection.initialized = true;
      this.#logTo(connection, this.#currentDiagnostics());
    };
    if (era === 'legacy') {
      low.setRequestHandler('resources/subscribe', { params: URI_PARAMS }, ({ uri }) => {
        const canonical = canonicalSkillUri(uri);
        if (canonical === undefined)
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${echo(uri)} is not a skill:// URI`);
        if (connection.subscriptions.size >= MAX_SUBSCRIPTIONS && !connection.subscriptions.has(canonical)) {
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `subscription limit reached (${MAX_SUBSCRIPTIONS} URIs); unsubscribe first`,
          );
        }
        connection.subscriptions.add(canonical);
        return {};
      });
      low.setRequestHandler('resources/unsubscribe', { params: URI_PARAMS }, ({ uri }) => {
        connection.subscriptions.delete(canonicalSkillUri(uri) ?? uri);
        return {};
      });
    }
    const previous = low.onclose;
    low.onclose = () => {
      this.#connections.delete(connection);
      previous?.();
    };
  }

  /**
   * Sends what `diff` calls for to every connected server. Never throws; failures are logged.
   *
   * @param diff the swap's diff.
   */
  notify(diff: SnapshotDiff): void {
    for (const connection of this.#connections) {
      if (!connection.server.isConnected()) continue;
      if (diff.listChanged) this.#send(connection, () => connection.server.server.sendResourceListChanged());
      for (const uris of [diff.updated, diff.appeared])
        for (const uri of uris) {
          if (connection.era === 'legacy' && !connection.subscriptions.has(uri)) continue;
          this.#send(connection, () => connection.server.server.sendResourceUpdated({ uri }));
        }
    }
  }

  /**
   * Sends each diagnostic to every connected host as `notifications/message` (level `warning`, `info` for an
   * info-level diagnostic: `logLevelOf`; logger `skills-serve`); the SDK drops messages below the level a host set
   * with `logging/setLevel`.
   */
  log(diagnostics: readonly PublicDiagnostic[]): void {
    if (diagnostics.length === 0) return;
    for (const connection of this.#connections) if (connection.initialized) this.#logTo(connection, diagnostics);
  }

  #logTo(connection: Connection, diagnostics: readonly PublicDiagnostic[]): void {
    if (!connection.server.isConnected()) return;
    for (const data of diagnostics) {
      this.#send(connection, () =>
        connection.server.sendLoggingMessage({ level: logLevelOf(data), logger: DIAGNOSTICS_LOGGER, data }),
      );
    }
  }

  #send(connection: Connection, send: () => Promise<void>): void {
    try {
      send().catch((error: unknown) =>
        this.#logger.debug({ err: error, era: connection.era }, 'notification not delivered'),
      );
    } catch (error) {
      this.#logger.debug({ err: error, era: connection.era }, 'notification not delivered');
    }
  }
}
