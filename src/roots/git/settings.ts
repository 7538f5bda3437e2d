/**
 * Defaults and parsers of the git-root flags (issue 14 "Versions", "Safety"), for `cli.ts` to attach:
 * `--git-poll <ms>`, `--git-max-files <n>`, `--git-max-bytes <size>`, `--git-max-fetch-bytes <size>`,
 * `--git-allow <host/org>` (see `git-url.ts`), `--cache-dir <dir>` (see `git-cache.ts`). Pure.
 */
import { parseIntegerOption } from '../../config.js';

/** How often a branch is re-fetched by default (ms): 5 minutes. */
export const DEFAULT_GIT_POLL_MS = 300_000;
/** Shortest accepted branch poll interval (ms). */
export const MIN_GIT_POLL_MS = 1000;
/** Longest accepted branch poll interval (ms): one day. */
export const MAX_GIT_POLL_MS = 86_400_000;

/** Most files one git tree may materialize, by default. */
export const DEFAULT_GIT_MAX_FILES = 50_000;
/** Most bytes one git tree may materialize, by default (512 MiB). */
export const DEFAULT_GIT_MAX_BYTES = 512 * 1024 * 1024;
/**
 * Most bytes one fetch may download, by default (1 GiB). A shallow pack holds the whole commit, not just the
 * subdirectory.
 */
export const DEFAULT_GIT_MAX_FETCH_BYTES = 1024 * 1024 * 1024;
/** How long one network operation (ls-remote, fetch) may take by default (ms). */
export const DEFAULT_GIT_TIMEOUT_MS = 300_000;

/** Limits on what one git root may fetch and materialize. */
export interface GitLimits {
  /** Most files (regular files and symlinks) in the served tree. */
  readonly maxFiles: number;
  /** Most bytes of regular files in the served tree. */
  readonly maxBytes: number;
  /** Most bytes one fetch may download. */
  readonly maxFetchBytes: number;
}

/** The default limits. */
export const DEFAULT_GIT_LIMITS: GitLimits = Object.freeze({
  maxFiles: DEFAULT_GIT_MAX_FILES,
  maxBytes: DEFAULT_GIT_MAX_BYTES,
  maxFetchBytes: DEFAULT_GIT_MAX_FETCH_BYTES,
});

/** Parses `--git-poll`: {@link MIN_GIT_POLL_MS}…{@link MAX_GIT_POLL_MS} ms. @throws RangeError otherwise. */
export const parseGitPollMs = (text: string): number =>
  parseIntegerOption(text, '--git-poll', MIN_GIT_POLL_MS, MAX_GIT_POLL_MS);

/** Parses `--git-max-files`: 1…10,000,000. @throws RangeError otherwise. */
export const parseGitMaxFiles = (text: string): number => parseIntegerOption(text, '--git-max-files', 1, 10_000_000);

const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
};

/**
 * Parses a byte size: an integer with an optional binary unit (`1048576`, `512MiB`, `2G`; `k`/`m`/`g` are powers of
 * 1024).
 *
 * @param text the value as typed.
 * @param flag the option name for the message.
 * @returns bytes, 1…2^53-1.
 * @throws RangeError naming the flag and the accepted forms.
 */
export function parseByteSize(text: string, flag: string): number {
  const match = /^(\d+)\s*([A-Za-z]*)$/u.exec(text.trim());
  const unit = UNITS[(match?.[2] ?? '').toLowerCase()];
  const value = match === null || unit === undefined ? Number.NaN : Number(match[1]) * unit;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${flag} must be a size in bytes, optionally with K, M or G (got "${text}")`);
  return value;
}
