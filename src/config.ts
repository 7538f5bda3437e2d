/**
 * The resolved configuration: built once by `cli.ts` from argv and env, frozen, read by everything else
 * (DESIGN §1.5 "Config is resolved once"). Pure.
 */
import type { RootSpec } from './index/types.js';
import type { LogLevel } from './log.js';

export interface Config {
  /** Roots in command-line order; earlier roots win conflicts. */
  readonly roots: readonly RootSpec[];
  readonly logLevel: LogLevel;
  /** Entries per `skills/list` and `resources/directory/read` page. */
  readonly pageSize: number;
}

/** Default `--page-size`. */
export const DEFAULT_PAGE_SIZE = 100;
/** Largest accepted `--page-size`. */
export const MAX_PAGE_SIZE = 10_000;

/**
 * Parses a `--page-size` value.
 *
 * @returns an integer in 1…{@link MAX_PAGE_SIZE}.
 * @throws RangeError naming the accepted range otherwise.
 */
export function parsePageSize(text: string): number {
  const value = Number(text);
  if (!/^\d+$/u.test(text.trim()) || !Number.isSafeInteger(value) || value < 1 || value > MAX_PAGE_SIZE) {
    throw new RangeError(`--page-size must be an integer from 1 to ${MAX_PAGE_SIZE} (got "${text}")`);
  }
  return value;
}
