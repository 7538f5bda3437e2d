/**
 * The stdio adapter: one host over stdin/stdout through the SDK's `serveStdio` entry (both eras, the
 * `server/discover` probe) on our {@link StdioWire}. It announces the runtime's changes to the connection and sends
 * diagnostics as log messages. It ends when stdin ends or stdout fails (the host went away).
 */
import { serveStdio } from '@modelcontextprotocol/server/stdio';

import { describeSource } from '../roots/root-arg.js';
import type { Adapter, Runtime } from '../runtime.js';
import { createServerFactory } from '../server/create-server.js';
import { publicDiagnostic } from '../server/diagnostics.js';
import { ConnectionRegistry } from '../server/subscriptions.js';
import { takeAhead } from './answer-ahead.js';
import { type AheadEvent, StdioWire } from './stdio-wire.js';

/** Serves one host on this process's stdin and stdout. */
export class StdioAdapter implements Adapter {
  readonly ended: Promise<string>;
  #end!: (reason: string) => void;
  #wire: StdioWire | undefined;
  #handle: { close(): Promise<void> } | undefined;

  constructor() {
    this.ended = new Promise((resolve) => {
      this.#end = resolve;
    });
  }

  async start(runtime: Runtime): Promise<void> {
    const { logger, config } = runtime;
    const connections = new ConnectionRegistry(logger, () =>
      runtime.store.current.diagnostics.map((diagnostic) => publicDiagnostic(diagnostic, runtime.roots)),
    );
    runtime.on('ready', (snapshot) =>
      connections.log(snapshot.diagnostics.map((diagnostic) => publicDiagnostic(diagnostic, runtime.roots))),
    );
    runtime.on('changed', ({ diff, newDiagnostics }) => {
      connections.log(newDiagnostics.map((diagnostic) => publicDiagnostic(diagnostic, runtime.roots)));
      connections.notify(diff);
      runtime.compat.refresh();
    });
    const ahead = takeAhead();
    const wire = new StdioWire(
      process.stdin,
      process.stdout,
      (rejection, preview) =>
        logger.warn(
          { event: 'rejected', code: rejection.code, id: rejection.id, line: preview },
          `rejected a message from the client: ${rejection.message}`,
        ),
      ahead === undefined ? undefined : { ahead, onEvent: (event) => logAhead(logger, event) },
    );
    this.#wire = wire;
    this.#handle = serveStdio(createServerFactory(runtime, { connections }), {
      transport: wire,
      onerror: (error) => {
        // Once the wire is closed (the host went away), failed sends are expected: noted at debug level only.
        if (wire.closed)
          logger.debug({ event: 'transport-error', message: error.message }, 'transport error after close');
        else logger.warn({ event: 'transport-error', err: error }, 'transport error');
      },
    });
    const closed = wire.onclose;
    wire.onclose = () => {
      closed?.();
      this.#end('transport closed');
    };
    logger.info(
      {
        event: 'serving',
        transport: 'stdio',
        roots: config.sources.map(describeSource),
        watch: config.watch,
        pollMs: config.pollMs,
      },
      'serving on stdio; indexing',
    );
  }

  /** Stops reading, answers what was read, closes listen streams with their final result, flushes stdout. */
  async stop(timeoutMs: number): Promise<void> {
    const wire = this.#wire;
    if (wire === undefined) return;
    const deadline = Date.now() + timeoutMs;
    wire.stopReading();
    await wire.whenAnswered(timeoutMs);
    const timer = new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())).unref());
    await Promise.race([this.#handle?.close().catch(() => undefined), timer]);
    await Promise.race([wire.flushed(), timer]);
  }
}

/** Logs what answering ahead did: `debug` when it worked, `warn` when the recorded answer was not the SDK's. */
function logAhead(logger: Runtime['logger'], event: AheadEvent): void {
  if (event.kind === 'answered')
    logger.debug({ event: 'initialize-answered-ahead', id: event.id }, 'initialize answered from the last start');
  else if (event.kind === 'differs')
    logger.warn(
      { event: 'initialize-ahead-differs', id: event.id },
      "the initialize answer sent from the last start's record differs from this start's; recorded again",
    );
  else
    logger.debug(
      { event: 'initialize-record-failed', message: event.error.message },
      'the initialize answer could not be recorded in the cache directory',
    );
}
