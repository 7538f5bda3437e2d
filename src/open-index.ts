/**
 * The index, set up in one place for `serve` (`runtime.ts`) and for the one-shot commands
 * (`commands/snapshot-once.ts`): the sources opened by their kinds, the persistent digest cache in the cache
 * directory, and the builder over the roots (docs/ARCHITECTURE.md, "Data flow").
 */
import { IndexBuilder, type IndexObserver } from './index/build.js';
import { DigestCacheKeeper } from './index/digest-cache.js';
import type { SymlinkPolicy } from './index/policy.js';
import type { FileNode } from './index/types.js';
import type { Logger } from './log.js';
import type { RootKindSettings, SourceSpec } from './roots/kinds.js';
import { Sources } from './roots/sources.js';

/** What setting the index up takes. */
export interface IndexSetup {
  /** The roots in command-line order. */
  readonly sources: readonly SourceSpec[];
  /** Each kind's settings (`Config.rootKinds`). */
  readonly rootKinds: RootKindSettings;
  /** The cache directory (`cache-dir.ts`), resolved once by the command line. */
  readonly cacheDir: string;
  readonly symlinks: SymlinkPolicy;
  /** `--withhold-executables`: skills bundling executable content are not published (docs/security.md). */
  readonly withholdExecutables?: boolean;
  /** Trust the digests of files unchanged since the last build (the persistent digest cache), and write them. */
  readonly digestCache: boolean;
  /** Follow new versions of the roots (a server); `false` for one-shot commands. */
  readonly follow: boolean;
  readonly logger: Logger;
  /**
   * Made once the sources are open and before the builder: told about every directory walked (the watcher).
   *
   * @param files every file the index holds for a root (for polling).
   */
  readonly observer?: (
    sources: Sources,
    files: (rootIndex: number) => Iterable<{ rel: string; real: string; node: FileNode }>,
  ) => IndexObserver | undefined;
}

/** The index over opened sources, not built yet. */
export interface OpenedIndex {
  readonly sources: Sources;
  readonly builder: IndexBuilder;
  /** The persistent digest cache, unless `--no-digest-cache`: the caller schedules its writes. */
  readonly digests: DigestCacheKeeper | undefined;
}

/**
 * Opens the sources and makes the index over them.
 *
 * @throws SkillsServeError when a root cannot be served (`RootSource.start`): the caller logs `start-failed` and
 *   exits with its code.
 */
export async function openIndex(setup: IndexSetup): Promise<OpenedIndex> {
  const { cacheDir, logger } = setup;
  const sources = await Sources.open(setup.sources, {
    cacheDir,
    settings: setup.rootKinds,
    logger,
    follow: setup.follow,
  });
  // eslint-disable-next-line prefer-const -- assigned after the observer and the keeper, which read it
  let builder: IndexBuilder | undefined;
  const observer = setup.observer?.(sources, (rootIndex) => builder?.files(rootIndex) ?? []);
  const digests = setup.digestCache
    ? new DigestCacheKeeper({
        cacheDir,
        roots: () => builder?.roots() ?? [],
        note: (event, fields) => logger.debug({ event, ...fields }, event),
        wrote: (fields) => logger.debug({ event: 'digest-cache-written', ...fields }, 'digest cache written'),
      })
    : undefined;
  builder = new IndexBuilder(sources.roots, {
    symlinks: setup.symlinks,
    ...(setup.withholdExecutables === true ? { withholdExecutables: true } : {}),
    ...(observer === undefined ? {} : { observer }),
    ...(digests === undefined ? {} : { storedDigests: digests.load }),
  });
  return { sources, builder, digests };
}
