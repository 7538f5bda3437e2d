/**
 * Start and stop order of the stdio server (DESIGN §7 "Lifecycle"): serve at once, start watching, build the index
 * in the background, follow changes, and shut down idempotently when stdin ends or the transport closes (for
 * instance after an oversized line), and on SIGINT and SIGTERM.
 */
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { LiveCatalog } from './catalog.js';
import type { Config } from './config.js';
import type { Logger } from './log.js';
import { createServerFactory } from './server/create-server.js';
import { publicDiagnostic } from './server/diagnostics.js';
import { createJsonRpcGate } from './server/jsonrpc-gate.js';
import { ConnectionRegistry } from './server/subscriptions.js';

/** What `run` needs besides the config. */
export interface RunOptions {
  readonly logger: Logger;
  readonly version: string;
  /** Ends the process (`process.exit` in the CLI). */
  readonly exit: (code: number) => void;
}

/**
 * Serves `config.roots` over stdio until stdin ends or a signal arrives, then exits 0.
 * `initialize` is answered at once; `skills/list` and reads wait for the first index build. With `config.watch`,
 * changes on disk are applied incrementally and announced to connected hosts; every new diagnostic is also sent to
 * them as a `notifications/message` (level warning), without host paths.
 */
export function runStdioServer(config: Config, options: RunOptions): void {
  const { logger } = options;
  const catalog = new LiveCatalog(config, options);
  const connections = new ConnectionRegistry(logger, () =>
    catalog.store.current.diagnostics.map((diagnostic) => publicDiagnostic(diagnostic, config.roots)),
  );
  catalog.onChange(({ previous, next, diff, newDiagnostics }) => {
    connections.log(newDiagnostics.map((diagnostic) => publicDiagnostic(diagnostic, config.roots)));
    if (previous.generation === 0) return; // the first build: nothing was announced before it
    connections.notify(diff);
    if (catalog.compat.promptsChanged(previous, next)) connections.notifyPromptsChanged((server, era) => catalog.compat.offeredTo(server, era));
  });

  const gate = createJsonRpcGate((verdict, line) => {
    logger.warn({ code: verdict.code, id: verdict.id, line: line.slice(0, 200) }, `rejected a message from the client: ${verdict.message}`);
    // JSON-RPC 2.0 answers an unidentifiable request with `id: null`, which the SDK's message type does not model.
    void transport.send({ jsonrpc: '2.0', id: verdict.id, error: { code: verdict.code, message: verdict.message } } as never).catch(() => undefined);
  });
  process.stdin.pipe(gate);
  const transport = new StdioServerTransport(gate, process.stdout);
  const handle = serveStdio(createServerFactory({ source: catalog.source, version: options.version, logger, connections, compat: catalog.compat }), {
    transport,
    onerror: (error) => logger.warn({ err: error }, 'transport error'),
  });

  let stopping = false;
  const stop = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'shutting down');
    Promise.allSettled([catalog.close(), handle.close()]).then(() => options.exit(0));
  };
  // The transport closes itself on stdin EOF, and also on errors it cannot recover from (a line over its buffer
  // limit); either way no request can arrive any more, so the process must not linger.
  const closed = transport.onclose;
  transport.onclose = () => {
    closed?.();
    stop('transport closed');
  };
  process.stdin.once('end', () => stop('stdin ended'));
  process.stdin.once('close', () => stop('stdin closed'));
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGHUP', () => stop('SIGHUP'));

  logger.info({ event: 'serving', transport: 'stdio', roots: config.roots.map((root) => root.dir), watch: config.watch, pollMs: config.pollMs }, 'serving on stdio; indexing');
  catalog.start().catch((error: unknown) => {
    logger.fatal({ err: error }, 'index build failed');
    options.exit(1);
  });
}
