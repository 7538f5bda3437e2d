/**
 * The live catalog both transports serve: the snapshot store, the live index and its watcher, the `SkillSource`
 * and the compat surfaces, plus the reporting every transport shares (each diagnostic logged once, `--strict`, the
 * diff of every swap). DESIGN §4 "Data flow"; the transports (`lifecycle.ts`, `http.ts`) only add their wire.
 */
import type { Config } from './config.js';
import { IndexBuilder } from './index/build.js';
import { diffSnapshots, type SnapshotDiff } from './index/diff.js';
import { SnapshotStore } from './index/store.js';
import type { Diagnostic, Snapshot } from './index/types.js';
import type { Logger } from './log.js';
import { CompatSurfaces } from './server/compat.js';
import { createSkillSource } from './server/source.js';
import { LiveIndex } from './watch/live-index.js';
import { RootsWatcher } from './watch/watcher.js';

/** What a transport hears after each swap (not after the first build). */
export interface CatalogChange {
  readonly previous: Snapshot;
  readonly next: Snapshot;
  readonly diff: SnapshotDiff;
  /** Diagnostics that appeared with this swap (also for the first build). */
  readonly newDiagnostics: readonly Diagnostic[];
}

export interface CatalogOptions {
  readonly logger: Logger;
  /** Ends the process (`--strict` failures). */
  readonly exit: (code: number) => void;
}

export class LiveCatalog {
  readonly store = new SnapshotStore();
  readonly source;
  readonly compat: CompatSurfaces;
  readonly #live: LiveIndex;
  readonly #watcher: RootsWatcher | undefined;
  readonly #listeners = new Set<(change: CatalogChange) => void>();
  readonly #logger: Logger;

  /**
   * Wires the catalog; nothing runs until {@link LiveCatalog.start}.
   *
   * @param config the resolved configuration (roots, symlinks, watch, poll, strict, page size, compat).
   * @param options logger and exit.
   */
  constructor(config: Config, options: CatalogOptions) {
    const { logger } = options;
    this.#logger = logger;
    this.#live = new LiveIndex(new IndexBuilder(config.roots, 0, { symlinks: config.symlinks }), this.store, (snapshot, elapsedMs, events) =>
      logBuild(logger, snapshot, elapsedMs, events),
    );
    this.source = createSkillSource({
      store: this.store,
      pageSize: config.pageSize,
      resources: config.resources,
      reindex: async (file) => {
        logger.info({ uri: file.uri }, 'file changed on disk since it was indexed; re-indexing its skill before serving it');
        await this.#live.reindexFile(file);
      },
      warn: (message, path) => logger.warn({ path }, message),
    });
    this.compat = new CompatSurfaces({
      mode: config.compat,
      store: this.store,
      source: this.source,
      pageSize: config.pageSize,
      instructionsMax: config.instructionsMax,
      logger,
    });
    this.#watcher = config.watch
      ? new RootsWatcher({
          roots: config.roots,
          pollMs: config.pollMs,
          logger,
          onBatch: (events) => {
            this.#live.apply(events).catch((error: unknown) => logger.error({ err: error }, 'incremental rebuild failed'));
          },
        })
      : undefined;
    this.store.onSwap((previous, next) => {
      // Each diagnostic is reported once: when it first appears (a skill broken later is reported when it breaks).
      const known = new Set(previous.diagnostics.map(diagnosticKey));
      const newDiagnostics = next.diagnostics.filter((diagnostic) => !known.has(diagnosticKey(diagnostic)));
      for (const diagnostic of newDiagnostics) logDiagnostic(logger, diagnostic);
      if (config.strict && previous.generation === 0 && next.diagnostics.length > 0) {
        logger.fatal({ diagnostics: next.diagnostics.length }, `--strict: the index has ${next.diagnostics.length} diagnostic(s) (listed above); not serving`);
        options.exit(1);
        return;
      }
      const diff = diffSnapshots(previous, next);
      if (previous.generation !== 0) {
        logger.debug({ listChanged: diff.listChanged, updated: diff.updated.length, skillsChanged: diff.skillsChanged }, 'snapshot swapped');
      }
      for (const listener of this.#listeners) listener({ previous, next, diff, newDiagnostics });
    });
  }

  /** Registers a listener for every swap (the first build included: `previous.generation === 0`). */
  onChange(listener: (change: CatalogChange) => void): void {
    this.#listeners.add(listener);
  }

  /** Starts the watcher (so no change made during the first build is missed), then builds. */
  async start(): Promise<void> {
    await this.#watcher?.start();
    await this.#live.buildAll();
  }

  /** Stops watching. Idempotent. */
  async close(): Promise<void> {
    await this.#watcher?.close();
  }

  get logger(): Logger {
    return this.#logger;
  }
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
  // Errors leave a skill out; warnings (a skipped link or file, a hygiene finding, overlapping roots) do not.
  logger.warn({ ...fields, severity: diagnostic.severity, ...(diagnostic.severity === 'error' ? { skipped: 'skill' } : {}) }, text);
}
