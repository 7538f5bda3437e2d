/**
 * Sources: what the roots given on the command line resolve to, for the index (docs/ARCHITECTURE.md, "Sources"). Each
 * root is opened by its kind (`kinds.ts`): a folder is itself; a git root is the directory of a materialized commit in
 * the cache, with its provenance in each entry's `_meta`, and, for a branch, a new directory whenever the branch
 * moves. The index does not know which is which: it serves directories.
 */
import { EventEmitter } from 'node:events';

import type { RootSpec } from '../index/types.js';
import type { RootLogger, RootRefusal, RootSource, RootStatus } from './kind.js';
import { kindOf, type RootKindSettings, settingsOf, type SourceSpec } from './kinds.js';

/** How long a replaced directory stays on disk after the swap, for reads that began before it (ms). */
export const RELEASE_GRACE_MS = 5000;

/** What opening the sources needs besides the sources. */
export interface SourcesContext {
  /** The cache directory (`cache-dir.ts`), resolved once. */
  readonly cacheDir: string;
  /** Each kind's settings (`Config.rootKinds`). */
  readonly settings: RootKindSettings;
  readonly logger: RootLogger | undefined;
  /** Follow new versions (a server); `false` for one-shot commands, which open each root once. */
  readonly follow: boolean;
}

/** The resolved sources of a server or a command. */
export class Sources extends EventEmitter<{
  /** Root `rootIndex` is served from `root` from now on: index it, then call `done` (the old one goes after a grace) */
  replaced: [rootIndex: number, root: RootSpec, done: () => void];
  /** A check of a root of kind `kind` for a new version ended: whether it went through. */
  refreshed: [kind: string, ok: boolean];
  /** The root at `rootIndex`, of kind `kind`, refused a newer version and serves the one before. */
  refused: [rootIndex: number, kind: string, refusal: RootRefusal];
}> {
  readonly #sources: readonly RootSource[];
  /** Each root's kind name, in command-line order. */
  readonly #kinds: readonly string[];
  #roots: RootSpec[] = [];

  private constructor(sources: readonly RootSource[], kinds: readonly string[]) {
    super();
    this.#sources = sources;
    this.#kinds = kinds;
  }

  /**
   * Opens every source with its kind (`RootKind.source`, `RootSource.start`), all at once.
   *
   * @throws SkillsServeError naming the first root that cannot be served; every root is stopped first.
   */
  static async open(specs: readonly SourceSpec[], context: SourcesContext): Promise<Sources> {
    const { cacheDir, logger } = context;
    const sources = new Sources(
      specs.map((spec) => {
        const kind = kindOf(spec);
        return kind.source(spec, { cacheDir, settings: settingsOf(kind, context.settings), logger });
      }),
      specs.map((spec) => spec.kind),
    );
    try {
      sources.#roots = await Promise.all(sources.#sources.map((source) => source.start()));
    } catch (error) {
      await sources.stop();
      throw error;
    }
    if (!context.follow) {
      await sources.stop();
      return sources;
    }
    for (const [rootIndex, source] of sources.#sources.entries()) {
      const kind = specs[rootIndex]?.kind ?? '';
      source.follow({
        refreshed: (ok) => sources.emit('refreshed', kind, ok),
        refused: (refusal) => sources.emit('refused', rootIndex, kind, refusal),
        replaced: (root, release) => {
          sources.#roots[rootIndex] = root;
          // The listener indexes the new directory and calls `done` once it is served; the old one goes after a grace.
          sources.emit('replaced', rootIndex, root, () => {
            setTimeout(() => void release(), RELEASE_GRACE_MS).unref();
          });
        },
      });
    }
    return sources;
  }

  /** The roots to index, in command-line order (a replaced root's directory changes with each new version). */
  get roots(): readonly RootSpec[] {
    return this.#roots;
  }

  /**
   * Whether root `rootIndex` changes in place, so that it is watched, rather than being replaced by a new directory
   * that {@link Sources} announces (`RootSource.changesInPlace`).
   */
  changesInPlace(rootIndex: number): boolean {
    return this.#sources[rootIndex]?.changesInPlace ?? false;
  }

  /** Whether nothing served can change, even after a restart (every root pinned: `RootSource.pinned`). */
  get pinned(): boolean {
    return this.#sources.every((source) => source.pinned);
  }

  /** Milliseconds until the soonest check of a root for a new version; `undefined` when none is scheduled. */
  msUntilNextRefresh(now = Date.now()): number | undefined {
    const due = this.#sources.flatMap((source) => (source.nextRefreshAt === undefined ? [] : [source.nextRefreshAt]));
    return due.length === 0 ? undefined : Math.max(0, Math.min(...due) - now);
  }

  /**
   * The newer versions refused now, with their root's position and kind (`RootSource.refusal`): those refused at
   * start included, which no listener heard.
   */
  get refusals(): readonly { readonly rootIndex: number; readonly kind: string; readonly refusal: RootRefusal }[] {
    return this.#sources.flatMap((source, rootIndex) => {
      const { refusal } = source;
      return refusal === undefined ? [] : [{ rootIndex, kind: this.#kinds[rootIndex] ?? '', refusal }];
    });
  }

  /**
   * What each root with versions serves now (`RootSource.status`): its position on the command line, its kind's name
   * and its status; roots of kinds without versions (folders) are left out.
   */
  statuses(): { readonly rootIndex: number; readonly kind: string; readonly status: RootStatus }[] {
    return this.#sources.flatMap((source, rootIndex) => {
      const status = source.status?.();
      return status === undefined ? [] : [{ rootIndex, kind: this.#kinds[rootIndex] ?? '', status }];
    });
  }

  /** Stops following every root. Idempotent. */
  async stop(): Promise<void> {
    await Promise.all(this.#sources.map((source) => source.stop()));
  }
}
