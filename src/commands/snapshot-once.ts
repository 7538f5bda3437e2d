/**
 * One build for a one-shot command (`check`, `manifest`): the sources resolved once (git roots fetched, not
 * followed), indexed, then let go.
 */
import { exitCodeOf, SkillsServeError } from '../errors.js';
import { IndexBuilder } from '../index/build.js';
import { DigestCacheKeeper } from '../index/digest-cache.js';
import type { SymlinkPolicy } from '../index/policy.js';
import type { Snapshot } from '../index/types.js';
import type { Logger } from '../log.js';
import type { GitSettings } from '../roots/git/settings.js';
import type { SourceSpec } from '../roots/root-arg.js';
import { Sources } from '../roots/sources.js';

/** What every one-shot command is given. */
export interface CommandOptions {
  readonly symlinks: SymlinkPolicy;
  /** Trust the digests of files unchanged since the last build (the persistent digest cache), and write them. */
  readonly digestCache: boolean;
  readonly git: GitSettings;
  /** Where fetching git roots is logged (stderr). */
  readonly logger: Logger;
  readonly write: (text: string) => void;
}

/**
 * Resolves `sources` and builds one snapshot.
 *
 * @returns the snapshot, or the exit code of a source that cannot be served (its message logged).
 */
export async function snapshotOf(sources: readonly SourceSpec[], options: CommandOptions): Promise<Snapshot | number> {
  let resolved: Sources;
  try {
    resolved = await Sources.open(sources, options.git, options.logger, false);
  } catch (error) {
    if (!(error instanceof SkillsServeError)) throw error;
    options.logger.fatal({ event: 'start-failed', code: error.code }, error.message);
    return exitCodeOf(error.code);
  }
  const { logger } = options;
  // eslint-disable-next-line prefer-const -- assigned after the keeper, whose `roots` reads it
  let builder: IndexBuilder;
  const keeper: DigestCacheKeeper | undefined = options.digestCache
    ? new DigestCacheKeeper({
        cacheDir: options.git.cacheDir,
        roots: () => builder.roots(),
        note: (event, fields) => logger.debug({ event, ...fields }, event),
        wrote: (fields) => logger.debug({ event: 'digest-cache-written', ...fields }, 'digest cache written'),
      })
    : undefined;
  builder = new IndexBuilder(resolved.roots, {
    symlinks: options.symlinks,
    ...(keeper === undefined ? {} : { storedDigests: keeper.load }),
  });
  try {
    const snapshot = await builder.buildAll();
    keeper?.schedule(0);
    keeper?.flush();
    return snapshot;
  } finally {
    await resolved.stop();
  }
}
