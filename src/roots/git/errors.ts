/**
 * Why a git root cannot be served (docs/git-roots.md, "Versions", "Safety"). Each is a {@link SkillsServeError} with
 * code `ROOT_UNUSABLE` (exit 1), except a refused URL (`CONFIG_INVALID`, exit 2), so the CLI maps them without knowing
 * git; `reason` tells them apart. Messages name the remote by its credential-free display form and the ref, never a
 * token, and carry no stack trace worth showing: the CLI prints `message` alone.
 */
import { SkillsServeError } from '../../errors.js';

/** What went wrong. */
export type GitFailure =
  /** The `git` binary is missing or too old. */
  | 'git-unavailable'
  /** The URL is not on the `--git-allow` list. */
  | 'not-allowed'
  /** The remote has no branch, tag or commit of that name. */
  | 'unknown-ref'
  /** The subdirectory does not exist at that commit, or is a file. */
  | 'unknown-subdir'
  /** The remote cannot be reached (or refuses us) and nothing is cached. */
  | 'unreachable'
  /** The tree (or its download) is over the file or byte limits. */
  | 'over-limits'
  /** The commit is not signed by a key of `--git-allowed-signers`. */
  | 'unverified'
  /** Git failed in another way (a corrupt cache, a full disk, …). */
  | 'git-failed';

/** A git root that cannot be served. */
export class GitSourceError extends SkillsServeError {
  constructor(
    readonly reason: GitFailure,
    message: string,
  ) {
    super(reason === 'not-allowed' ? 'CONFIG_INVALID' : 'ROOT_UNUSABLE', message);
    this.name = 'GitSourceError';
  }
}
