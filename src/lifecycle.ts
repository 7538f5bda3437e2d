/**
 * Start and stop order of the stdio server (DESIGN §7 "Lifecycle"): serve at once, build the index in the background,
 * shut down idempotently on stdin end, SIGINT and SIGTERM.
 */
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Config } from './config.js';
import { buildSnapshot } from './index/build.js';
import { SnapshotStore } from './index/store.js';
import type { Diagnostic, Snapshot } from './index/types.js';
import type { Logger } from './log.js';
import { createServerFactory } from './server/create-server.js';
import { createSkillSource } from './server/source.js';

/** What `run` needs besides the config. */
export interface RunOptions {
  readonly logger: Logger;
  readonly version: string;
  /** Ends the process (`process.exit` in the CLI). */
  readonly exit: (code: number) => void;
}

/**
 * Serves `config.roots` over stdio until stdin ends or a signal arrives, then exits 0.
 * `initialize` is answered at once; `skills/list` and reads wait for the first index build.
 *
 * @returns once serving has started (the process keeps running).
 */
export function runStdioServer(config: Config, options: RunOptions): void {
  const { logger } = options;
  const store = new SnapshotStore();
  let generation = 0;
  let rebuilding: Promise<void> | undefined;

  const rebuild = (): Promise<void> => {
    rebuilding ??= (async () => {
      const started = performance.now();
      const next = await buildSnapshot(config.roots, ++generation);
      store.swap(next, (error) => logger.error({ err: error }, 'snapshot listener failed'));
      logBuild(logger, next, performance.now() - started);
    })().finally(() => {
      rebuilding = undefined;
    });
    return rebuilding;
  };

  const source = createSkillSource({
    store,
    pageSize: config.pageSize,
    reindex: async (file) => {
      logger.info({ uri: file.uri }, 'file changed on disk since it was indexed; re-indexing before serving it');
      await rebuild();
    },
    warn: (message, path) => logger.warn({ path }, message),
  });

  const handle = serveStdio(createServerFactory({ source, version: options.version, logger }), {
    onerror: (error) => logger.warn({ err: error }, 'transport error'),
  });

  let stopping = false;
  const stop = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'shutting down');
    handle.close().then(
      () => options.exit(0),
      (error: unknown) => {
        logger.warn({ err: error }, 'error while closing the transport');
        options.exit(0);
      },
    );
  };
  process.stdin.once('end', () => stop('stdin ended'));
  process.stdin.once('close', () => stop('stdin closed'));
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));

  logger.info({ roots: config.roots.map((root) => root.dir) }, 'serving on stdio; indexing');
  rebuild().catch((error: unknown) => {
    logger.fatal({ err: error }, 'index build failed');
    options.exit(1);
  });
}

function logBuild(logger: Logger, snapshot: Snapshot, elapsedMs: number): void {
  for (const diagnostic of snapshot.diagnostics) logDiagnostic(logger, diagnostic);
  logger.info(
    {
      skills: snapshot.ordered.length,
      files: snapshot.files.size,
      diagnostics: snapshot.diagnostics.length,
      generation: snapshot.generation,
      ms: Math.round(elapsedMs),
    },
    `index built: ${snapshot.ordered.length} skills, ${snapshot.diagnostics.length} diagnostics`,
  );
}

/** One stderr line per diagnostic: file[:line], what is wrong, the rule and the fix. */
export function logDiagnostic(logger: Logger, diagnostic: Diagnostic): void {
  const where = diagnostic.line === undefined ? diagnostic.file : `${diagnostic.file}:${diagnostic.line}`;
  const text = `${where}: ${diagnostic.message} [${diagnostic.rule}]; fix: ${diagnostic.hint}`;
  const fields = { rule: diagnostic.rule, file: diagnostic.file, line: diagnostic.line, hint: diagnostic.hint };
  if (diagnostic.severity === 'error') logger.warn({ ...fields, skipped: 'skill' }, text);
  else logger.warn({ ...fields, skipped: 'file' }, text);
}
