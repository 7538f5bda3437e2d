/**
 * One build for a one-shot command (`check`, `manifest`): the sources resolved once (git roots fetched, not
 * followed), indexed, then let go.
 */
import { exitCodeOf, SkillsServeError } from '../errors.js';
import { buildSnapshot } from '../index/build.js';
import type { SymlinkPolicy } from '../index/policy.js';
import type { Snapshot } from '../index/types.js';
import type { Logger } from '../log.js';
import type { GitSettings } from '../roots/git/settings.js';
import type { SourceSpec } from '../roots/root-arg.js';
import { Sources } from '../roots/sources.js';

/** What every one-shot command is given. */
export interface CommandOptions {
  readonly symlinks: SymlinkPolicy;
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
  try {
    return await buildSnapshot(resolved.roots, { symlinks: options.symlinks });
  } finally {
    await resolved.stop();
  }
}
