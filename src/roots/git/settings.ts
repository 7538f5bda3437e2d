/**
 * How git roots are fetched and followed (`--git-*`, `SKILLS_SERVE_GIT_TOKEN`), with the defaults the command line
 * starts from (docs/git-roots.md). The parsers of those flags are in `cli/options.ts`; the cache directory comes from
 * `cache-dir.ts`, like every kind's. Pure.
 */
import type { GitAllowEntry } from './url.js';

/** How often a branch is looked up by default (ms): 5 minutes. */
export const DEFAULT_GIT_POLL_MS = 300_000;

/** Limits on what one git root may fetch and materialize. */
export interface GitLimits {
  /** Most files (regular files and symlinks) in the served tree. */
  readonly maxFiles: number;
  /** Most bytes of regular files in the served tree. */
  readonly maxBytes: number;
  /** Most bytes one fetch may download. */
  readonly maxFetchBytes: number;
}

/**
 * The default limits: 50,000 files and 512 MiB a tree, 1 GiB a download (a shallow pack holds the whole commit, not
 * just the subdirectory).
 */
export const DEFAULT_GIT_LIMITS: GitLimits = Object.freeze({
  maxFiles: 50_000,
  maxBytes: 512 * 1024 * 1024,
  maxFetchBytes: 1024 * 1024 * 1024,
});

/** How long one network operation (ls-remote, fetch) may take (ms). */
export const GIT_NETWORK_TIMEOUT_MS = 300_000;

/** How git roots are fetched, resolved once by the command line. */
export interface GitSettings {
  /** How often followed branches are looked up (ms; `--git-poll`). */
  readonly pollMs: number;
  /** `--git-allow` entries; empty: every remote. */
  readonly allow: readonly GitAllowEntry[];
  readonly limits: GitLimits;
  readonly token: string | undefined;
  /**
   * Absolute path of the allowed signers file (`--git-allowed-signers`, git's `gpg.ssh.allowedSignersFile` format):
   * only commits signed by its keys are served. `undefined`: commits are served signed or not.
   */
  readonly allowedSigners?: string | undefined;
  /** The process environment (git needs `PATH`, `HOME` and the user's credential setup). */
  readonly env: Readonly<Record<string, string | undefined>>;
}
