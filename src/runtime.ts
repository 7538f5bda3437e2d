/**
 * The serving runtime: the one place that owns the catalog (snapshot store, builder, live index, watcher, reads,
 * compat surfaces), its start and graceful stop, the signals, and the reporting every transport shares (each
 * diagnostic logged once, `--strict`). Transports are thin adapters (`transports/stdio.ts`, `transports/http.ts`)
 * that announce the runtime's typed events to their clients (docs/ARCHITECTURE.md, "Runtime").
 */
import type { SkillSource } from '@modelcontextprotocol/server/ext/skills';

import type { Config } from './config.js';
import { exitCodeOf, SkillsServeError } from './errors.js';
import { diffSnapshots, type SnapshotDiff } from './index/diff.js';
import { type DigestCacheKeeper, FIRST_WRITE_DELAY_MS, REWRITE_DELAY_MS } from './index/digest-cache.js';
import type { ServedFile } from './index/snapshot.js';
import { SnapshotStore } from './index/store.js';
import type { Diagnostic, RootSpec, Snapshot } from './index/types.js';
import type { Logger } from './log.js';
import { openIndex } from './open-index.js';
import type { RootRefusal } from './roots/kind.js';
import type { Sources } from './roots/sources.js';
import { CompatSurfaces } from './server/compat/surfaces.js';
import { logDiagnostics } from './server/diagnostics.js';
import { createFileReader, type FileReader } from './server/read.js';
import { createSkillSource } from './server/sdk-source.js';
import type { CacheHint, SkillsHandlerContext } from './server/skills-handlers.js';
import { LiveIndex } from './watch/live-index.js';
import { TreeWatcher } from './watch/watcher.js';

/** What adapters hear after every swap but the first. */
export interface RuntimeChange {
  readonly previous: Snapshot;
  readonly next: Snapshot;
  readonly diff: SnapshotDiff;
  /** Diagnostics that appeared with this swap. */
  readonly newDiagnostics: readonly Diagnostic[];
}

/** The runtime's events, typed. */
export interface RuntimeEvents {
  /** The first index build is served (with its diagnostics). */
  ready: (snapshot: Snapshot) => void;
  /** A later swap. */
  changed: (change: RuntimeChange) => void;
  /** A check of a root of kind `kind` for a new version ended (for metrics): whether it went through. */
  refreshed: (kind: string, ok: boolean) => void;
  /**
   * The root at `rootIndex` (command-line position), of kind `kind`, refused a newer version (for metrics); also told
   * for those refused at start.
   */
  refused: (rootIndex: number, kind: string, refusal: RootRefusal) => void;
}

/** A transport serving the runtime. */
export interface Adapter {
  /** Starts serving (answers `initialize` at once; the first build runs meanwhile). */
  start(runtime: Runtime): Promise<void>;
  /**
   * Stops: answers what was read before, finishes requests in flight, closes open streams, within `timeoutMs`.
   * Idempotent.
   */
  stop(timeoutMs: number): Promise<void>;
  /** Resolves (with a reason) when the transport ended by itself: stdin closed, the host went away. */
  readonly ended: Promise<string>;
}

/** What running needs besides the config. */
export interface RunOptions {
  readonly logger: Logger;
  readonly version: string;
  /** Ends the process (`process.exit` in the CLI). */
  readonly exit: (code: number) => void;
}

/** The default `ttlMs` when every root is pinned (`RootSource.pinned`) (ms): a day. */
export const PINNED_TTL_MS = 86_400_000;

/** Longest a graceful stop waits for requests in flight and open streams (ms). */
export const STOP_TIMEOUT_MS = 5000;

/** The catalog and its life. */
export class Runtime {
  readonly config: Config;
  readonly logger: Logger;
  readonly version: string;
  readonly store: SnapshotStore;
  readonly reader: FileReader;
  readonly source: SkillSource;
  readonly compat: CompatSurfaces;
  readonly handlers: SkillsHandlerContext;
  #live: LiveIndex | undefined;
  #watcher: TreeWatcher | undefined;
  #digests: DigestCacheKeeper | undefined;
  #sources: Sources | undefined;
  readonly #listeners: { [K in keyof RuntimeEvents]: Set<RuntimeEvents[K]> } = {
    ready: new Set(),
    changed: new Set(),
    refreshed: new Set(),
    refused: new Set(),
  };
  readonly #exit: (code: number) => void;

  constructor(config: Config, options: RunOptions) {
    this.config = config;
    this.logger = options.logger;
    this.version = options.version;
    this.#exit = options.exit;
    const { logger } = options;
    // No error vanishes: a swap listener that throws (announcing, logging diagnostics, --strict) is logged.
    this.store = new SnapshotStore((error) =>
      logger.error(
        { event: 'listener-failed', err: error, on: 'swap' },
        'announcing a new snapshot failed; serving goes on',
      ),
    );
    this.reader = createFileReader(
      this.store,
      (file) => this.#reindex(file),
      (code, path) => logger.warn({ event: 'read-failed', path, code }, `read failed: ${code}`),
    );
    this.source = createSkillSource(this.store, config.pageSize, this.reader);
    this.compat = new CompatSurfaces({
      mode: config.compat,
      store: this.store,
      source: this.source,
      pageSize: config.pageSize,
      catalogMax: config.catalogMax,
      logger,
    });
    this.handlers = {
      store: this.store,
      pageSize: config.pageSize,
      resources: config.resources,
      reader: this.reader,
      cacheHint: () => this.#cacheHint(),
      onUnexpected: (error) =>
        logger.error(
          { event: 'request-failed', err: error },
          'a request failed unexpectedly; answered "Internal error"',
        ),
    };
    this.store.onSwap((previous, next) => this.#announce(previous, next));
  }

  /** The newer versions roots refuse now while serving the ones before (`/readyz` tells them). */
  get refusals(): readonly RootRefusal[] {
    return (this.#sources?.refusals ?? []).map((entry) => entry.refusal);
  }

  /** The roots being indexed, once the sources are resolved (a replaced root's directory changes with each version). */
  get roots(): readonly RootSpec[] {
    return this.#sources?.roots ?? [];
  }

  /** What each root with versions (a git root) serves now: `Sources.statuses`; empty before the sources are open. */
  rootStatuses(): ReturnType<Sources['statuses']> {
    return this.#sources?.statuses() ?? [];
  }

  /**
   * The cache hint of 2026-07-28 results: `--ttl` and `--cache-scope` when given; by default a day when every root is
   * pinned, 0 when a root changes in place (any time, watched or not), else the time until the soonest check of a root
   * for a new version (0 when none is scheduled, `--no-watch`: the next start may serve a newer version).
   */
  #cacheHint(): CacheHint {
    const { ttlMs, cacheScope } = this.config;
    if (ttlMs !== undefined) return { ttlMs, cacheScope };
    const resolved = this.#sources;
    if (resolved === undefined) return { ttlMs: 0, cacheScope };
    if (resolved.pinned) return { ttlMs: PINNED_TTL_MS, cacheScope };
    if (resolved.roots.some((_, index) => resolved.changesInPlace(index))) return { ttlMs: 0, cacheScope };
    return { ttlMs: resolved.msUntilNextRefresh() ?? 0, cacheScope };
  }

  /** Registers a listener for one of the runtime's events. */
  on<K extends keyof RuntimeEvents>(event: K, listener: RuntimeEvents[K]): void {
    (this.#listeners[event] as Set<RuntimeEvents[K]>).add(listener);
  }

  /**
   * Opens the sources (`roots/kinds.ts`), then builds the index; once its first snapshot is served, the directories
   * the walk listed are watched (`TreeWatcher.watchListed`, logged `watching`). Resolves when they are.
   *
   * @throws SkillsServeError when a root cannot be served (the CLI exits with its code's exit code).
   */
  async start(): Promise<void> {
    const { config, logger } = this;
    const { sources, builder, digests } = await openIndex({
      sources: config.sources,
      rootKinds: config.rootKinds,
      cacheDir: config.cacheDir,
      symlinks: config.symlinks,
      withholdExecutables: config.withholdExecutables === true,
      digestCache: config.digestCache,
      follow: config.watch,
      logger,
      observer: (opened, files) => {
        if (!config.watch) return undefined;
        this.#watcher = new TreeWatcher({
          // A root that is replaced rather than changed in place is announced by its source: it is not watched.
          roots: opened.roots.flatMap((spec, index) => (opened.changesInPlace(index) ? [{ index, spec }] : [])),
          pollMs: config.pollMs,
          logger,
          files,
          onBatch: (events) => {
            this.#live?.apply(events).catch((error: unknown) => {
              logger.error({ event: 'rebuild-failed', err: error }, 'incremental rebuild failed');
              // What the failed walk listed is watched all the same: a later change there is still heard.
              this.#watchListed();
            });
          },
        });
        return this.#watcher;
      },
    });
    this.#sources = sources;
    this.#digests = digests;
    const live = new LiveIndex(
      builder,
      this.store,
      (snapshot, elapsedMs, events) => {
        this.#logBuild(snapshot, elapsedMs, events);
        // The snapshot is served: now the directories its walk listed are watched, off the answer's path.
        this.#watchListed();
      },
      (reasons, delayMs) =>
        logger.warn(
          { event: 'retry', reasons, delayMs },
          `out of file descriptors while indexing (${reasons[0] ?? ''}); what was served stays served, trying again in ${delayMs} ms. Raise \`ulimit -n\` if this persists.`,
        ),
    );
    this.#live = live;
    sources.on('refreshed', (kind, ok) => this.#emit('refreshed', kind, ok));
    sources.on('refused', (rootIndex, kind, refusal) => this.#emit('refused', rootIndex, kind, refusal));
    for (const { rootIndex, kind, refusal } of sources.refusals) this.#emit('refused', rootIndex, kind, refusal);
    // A root is served from a new directory (its new version): index it, swap it in, then let the old one go.
    sources.on('replaced', (rootIndex, root, done) => {
      builder.setRoot(rootIndex, root);
      live.apply([{ rootIndex, kind: 'rescan', rel: '' }]).then(done, (error: unknown) => {
        logger.error({ event: 'rebuild-failed', err: error }, "indexing a root's new version failed");
        done();
      });
    });
    this.#watcher?.start();
    await live.buildAll();
    if (this.#watcher !== undefined) {
      const started = performance.now();
      await this.#watcher.watchListed();
      this.logger.info(
        {
          event: 'watching',
          mode: this.#watcher.mode,
          directories: this.#watcher.directories,
          ms: Math.round(performance.now() - started),
        },
        'watching roots for changes',
      );
    }
  }

  /** Sets the watches of the directories walks listed since the last call (`TreeWatcher.watchListed`). */
  #watchListed(): void {
    this.#watcher
      ?.watchListed()
      .catch((error: unknown) =>
        this.logger.error({ event: 'watch-failed', err: error }, 'setting directory watches failed'),
      );
  }

  /** Stops watching and following the roots, and writes the digest cache if it is due. Idempotent. */
  close(): void {
    this.#digests?.flush();
    this.#digests?.close();
    this.#watcher?.close();
    this.#live?.close();
    void this.#sources?.stop();
  }

  async #reindex(file: ServedFile): Promise<void> {
    this.logger.info(
      { event: 'reindex', uri: file.uri },
      'file changed on disk since it was indexed; re-indexing its skill before serving it',
    );
    await this.#live?.reindexFile(file);
  }

  /**
   * Refuses to serve a configuration `--strict` holds to be wrong, found once the first catalog is known (a view
   * prefix under which nothing is served): logged at fatal level, then exit 2 (`CONFIG_INVALID`).
   *
   * @param message what is wrong, for the operator.
   */
  refuse(message: string): void {
    this.logger.fatal({ event: 'strict-failed', code: 'CONFIG_INVALID' }, message);
    this.#exit(exitCodeOf('CONFIG_INVALID'));
  }

  /** After each swap: logs new diagnostics, enforces `--strict` on the first build, tells the adapters. */
  #announce(previous: Snapshot, next: Snapshot): void {
    // Each diagnostic is reported once: when it first appears (a skill broken later is reported when it breaks).
    const known = new Set(previous.diagnostics.map(diagnosticKey));
    const newDiagnostics = next.diagnostics.filter((diagnostic) => !known.has(diagnosticKey(diagnostic)));
    const failing = next.diagnostics.filter((diagnostic) => diagnostic.severity !== 'info').length;
    const refused = previous.generation === 0 && this.config.strict && failing > 0;
    logDiagnostics(this.logger, newDiagnostics, refused ? 'error' : 'info');
    if (previous.generation === 0) {
      if (refused) {
        this.logger.fatal(
          { event: 'strict-failed', diagnostics: failing },
          `--strict: the index has ${failing} diagnostic(s) (listed above); not serving`,
        );
        this.#exit(1);
        return;
      }
      this.#emit('ready', next);
      return;
    }
    const diff = diffSnapshots(previous, next);
    this.logger.debug(
      {
        event: 'swapped',
        listChanged: diff.listChanged,
        updated: diff.updated.length,
        skillsChanged: diff.skillsChanged,
      },
      'snapshot swapped',
    );
    this.#emit('changed', {
      previous,
      next,
      diff,
      newDiagnostics,
    });
  }

  #emit<K extends keyof RuntimeEvents>(event: K, ...args: Parameters<RuntimeEvents[K]>): void {
    for (const listener of this.#listeners[event]) {
      try {
        (listener as (...values: Parameters<RuntimeEvents[K]>) => void)(...args);
      } catch (error) {
        // No error vanishes: an adapter failing to announce a change is logged, and serving goes on.
        this.logger.error(
          { event: 'listener-failed', err: error, on: event },
          `announcing "${event}" failed; serving goes on`,
        );
      }
    }
  }

  #logBuild(snapshot: Snapshot, elapsedMs: number, events: number): void {
    this.#digests?.schedule(snapshot.generation === 1 ? FIRST_WRITE_DELAY_MS : REWRITE_DELAY_MS);
    const digests = this.#digests?.takeCounts();
    const fields = {
      ...(digests === undefined || digests.stored === 0
        ? {}
        : { digestsStored: digests.stored, digestsTrusted: digests.trusted }),
      skills: snapshot.ordered.length,
      files: snapshot.fileCount,
      diagnostics: snapshot.diagnostics.length,
      generation: snapshot.generation,
      ms: Math.round(elapsedMs),
    };
    const summary = `${snapshot.ordered.length} skills, ${snapshot.diagnostics.length} diagnostics`;
    if (snapshot.generation === 1) this.logger.info({ event: 'index-built', ...fields }, `index built: ${summary}`);
    else this.logger.info({ event: 'index-updated', ...fields, events }, `index updated: ${summary}`);
  }
}

function diagnosticKey(diagnostic: Diagnostic): string {
  return `${diagnostic.rule}\0${diagnostic.file}\0${diagnostic.message}`;
}

/**
 * Serves `config` through `adapter` until a signal arrives or the transport ends, then stops gracefully and exits 0.
 * SIGINT, SIGTERM and SIGHUP are handled (Node as PID 1 in a container has no default SIGTERM handler); a second
 * signal during the stop exits at once.
 *
 * @throws nothing: a failed start (the port is in use, the first build failed) is logged and exits 1.
 */
export async function run(config: Config, options: RunOptions, adapter: Adapter): Promise<void> {
  const { logger } = options;
  const runtime = new Runtime(config, options);
  let stopping = false;
  const stop = (reason: string): void => {
    if (stopping) {
      if (reason.startsWith('SIG')) options.exit(0);
      return;
    }
    stopping = true;
    logger.info({ event: 'stopping', reason }, 'shutting down');
    adapter
      .stop(STOP_TIMEOUT_MS)
      .catch((error: unknown) =>
        logger.warn({ event: 'stop-failed', err: error }, 'the transport did not stop cleanly'),
      )
      .finally(() => {
        runtime.close();
        options.exit(0);
      });
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
  try {
    await adapter.start(runtime);
  } catch (error) {
    // A bad option or an unusable port is the operator's to fix: one line saying what, no stack trace.
    const code = (error as NodeJS.ErrnoException).code;
    if (error instanceof SkillsServeError) logger.fatal({ event: 'start-failed', code: error.code }, error.message);
    else if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')
      logger.fatal({ event: 'start-failed', code }, (error as Error).message);
    else logger.fatal({ event: 'start-failed', err: error }, (error as Error).message);
    options.exit(error instanceof SkillsServeError ? exitCodeOf(error.code) : 1);
    return;
  }
  void adapter.ended.then(stop);
  runtime.start().catch((error: unknown) => {
    if (error instanceof SkillsServeError) {
      logger.fatal({ event: 'start-failed', code: error.code }, error.message);
      options.exit(exitCodeOf(error.code));
      return;
    }
    logger.fatal({ event: 'build-failed', err: error }, 'index build failed');
    options.exit(1);
  });
}
