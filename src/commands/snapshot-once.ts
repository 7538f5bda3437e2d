/**
 * One build for a one-shot command (`check`, `manifest`): the sources opened once (not followed), indexed, then let
 * go.
 */
import { exitCodeOf, SkillsServeError } from '../errors.js';
import type { SymlinkPolicy } from '../index/policy.js';
import type { RootSpec, Snapshot } from '../index/types.js';
import type { Logger } from '../log.js';
import { type OpenedIndex, openIndex } from '../open-index.js';
import type { RootKindSettings, SourceSpec } from '../roots/kinds.js';

/** What every one-shot command is given. */
export interface CommandOptions {
  readonly symlinks: SymlinkPolicy;
  /** Trust the digests of files unchanged since the last build (the persistent digest cache), and write them. */
  readonly digestCache: boolean;
  /** The cache directory (`cache-dir.ts`), resolved once by the command line. */
  readonly cacheDir: string;
  /** Each kind of root's settings. */
  readonly rootKinds: RootKindSettings;
  /** Where opening the roots is logged (stderr). */
  readonly logger: Logger;
  readonly write: (text: string) => void;
}

/**
 * Opens `sources` and builds one snapshot.
 *
 * @returns the snapshot, or the exit code of a source that cannot be served (its message logged).
 */
export async function snapshotOf(sources: readonly SourceSpec[], options: CommandOptions): Promise<Snapshot | number> {
  const built = await buildOnce(sources, options);
  return typeof built === 'number' ? built : built.snapshot;
}

/**
 * Opens `sources` and builds one snapshot, with the directories the roots were opened as.
 *
 * @returns the snapshot and the roots (`RootSpec`s, in command-line order), or the exit code of a source that cannot
 *   be served (its message logged).
 */
export async function buildOnce(
  sources: readonly SourceSpec[],
  options: CommandOptions,
): Promise<{ readonly snapshot: Snapshot; readonly roots: readonly RootSpec[] } | number> {
  let index: OpenedIndex;
  try {
    index = await openIndex({ ...options, sources, follow: false });
  } catch (error) {
    if (!(error instanceof SkillsServeError)) throw error;
    options.logger.fatal({ event: 'start-failed', code: error.code }, error.message);
    return exitCodeOf(error.code);
  }
  try {
    const snapshot = await index.builder.buildAll();
    index.digests?.schedule(0);
    index.digests?.flush();
    return { snapshot, roots: index.sources.roots };
  } finally {
    await index.sources.stop();
  }
}
