/**
 * Start and stop order of the stdio server (DESIGN §7 "Lifecycle"): serve at once, start watching, build the index
 * in the background, follow changes, and shut down idempotently on stdin end, SIGINT and SIGTERM.
 */
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Config } from './config.js';
import { IndexBuilder } from './index/build.js';
import { diffSnapshots } from './index/diff.js';
import { SnapshotStore } from './index/store.js';
import type { Diagnostic, Snapshot } from './index/types.js';
import type { Logger } from './log.js';
import { CompatSurfaces } from './server/compat.js';
import { createServerFactory } from './server/create-server.js';
import { createSkillSource } from './server/source.js';
import { ConnectionRegistry } from './server/subscriptions.js';
import { LiveIndex } from './watch/live-index.js';
import { RootsWatcher } from './watch/watcher.js';

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
 * changes on disk are applied incrementally and announced to connected hosts.
 */
export function runStdioServer(config: Config, options: RunOptions): void {
  const { logger } = options;
  const store = new SnapshotStore();
  const connections = new ConnectionRegistry(logger);
  const live = new LiveIndex(new IndexBuilder(config.roots, 0, { symlinks: config.symlinks }), store, (snapshot, elapsedMs, events) => logBuild(logger, snapshot, elapsedMs, events));
  store.onSwap((previous, next) => {
    // Each diagnostic is reported once: when it first appears (a skill broken later is reported when it breaks).
    const known = new Set(previous.diagnostics.map(diagnosticKey));
    for (const diagnostic of next.diagnostics) if (!known.has(diagnosticKey(diagnostic))) logDiagnostic(logger, diagnostic);
    if (config.strict && previous.generation === 0 && next.diagnostics.length > 0) {
      logger.fatal({ diagnostics: next.diagnostics.length }, `--strict: the index has ${next.diagnostics.length} diagnostic(s) (listed above); not serving`);
      options.exit(1);
      return;
    }
    if (previous.generation === 0) return; // the first build: nothing was announced before it
    const diff = diffSnapshots(previous, next);
    logger.debug({ listChanged: diff.listChanged, updated: diff.updated.length, skillsChanged: diff.skillsChanged }, 'snapshot swapped');
    connections.notify(diff);
    if (compat.promptsChanged(previous, next)) connections.notifyPromptsChanged((server, era) => compat.offeredTo(server, era));
  });

  const source = createSkillSource({
    store,
    pageSize: config.pageSize,
    reindex: async (file) => {
      logger.info({ uri: file.uri }, 'file changed on disk since it was indexed; re-indexing its skill before serving it');
      await live.reindexFile(file);
    },
    warn: (message, path) => logger.warn({ path }, message),
  });

  const compat = new CompatSurfaces({ mode: config.compat, store, source, pageSize: config.pageSize, logger });
  const handle = serveStdio(createServerFactory({ source, version: options.version, logger, connections, compat }), {
    onerror: (error) => logger.warn({ err: error }, 'transport error'),
  });

  const watcher = config.watch
    ? new RootsWatcher({
        roots: config.roots,
        pollMs: config.pollMs,
        logger,
        onBatch: (events) => {
          live.apply(events).catch((error: unknown) => logger.error({ err: error }, 'incremental rebuild failed'));
        },
      })
    : undefined;

  let stopping = false;
  const stop = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'shutting down');
    Promise.allSettled([watcher?.close(), handle.close()]).then(() => options.exit(0));
  };
  process.stdin.once('end', () => stop('stdin ended'));
  process.stdin.once('close', () => stop('stdin closed'));
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));

  logger.info({ roots: config.roots.map((root) => root.dir), watch: config.watch, pollMs: config.pollMs }, 'serving on stdio; indexing');
  // The watcher starts first, so that no change made while the first build runs is missed.
  (watcher?.start() ?? Promise.resolve())
    .then(() => live.buildAll())
    .catch((error: unknown) => {
      logger.fatal({ err: error }, 'index build failed');
      options.exit(1);
    });
}

function logBuild(logger: Logger, snapshot: Snapshot, elapsedMs: number, events: number): void {
  const fields = {
    skills: snapshot.ordered.length,
    files: snapshot.files.size,
    diagnostics: snapshot.diagnostics.length,
    generation: snapshot.generation,
    ms: Math.round(elapsedMs),
  };
  if (snapshot.generation === 1) {
    logger.info(fields, `index built: ${snapshot.ordered.length} skills, ${snapshot.diagnostics.length} diagnostics`);
  } else {
    logger.info({ ...fields, events }, `index updated: ${snapshot.ordered.length} skills, ${snapshot.diagnostics.length} diagnostics`);
  }
}

function diagnosticKey(diagnostic: Diagnostic): string {
  return `${diagnostic.rule}\0${diagnostic.file}\0${diagnostic.message}`;
}

/** One stderr line per diagnostic: file[:line], what is wrong, the rule and the fix. */
export function logDiagnostic(logger: Logger, diagnostic: Diagnostic): void {
  const where = diagnostic.line === undefined ? diagnostic.file : `${diagnostic.file}:${diagnostic.line}`;
  const text = `${where}: ${diagnostic.message} [${diagnostic.rule}]; fix: ${diagnostic.hint}`;
  const fields = { rule: diagnostic.rule, file: diagnostic.file, line: diagnostic.line, hint: diagnostic.hint };
  logger.warn({ ...fields, skipped: diagnostic.severity === 'error' ? 'skill' : 'file' }, text);
}
