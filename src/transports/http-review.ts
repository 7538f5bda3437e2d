/**
 * Configurations of `--http` that cannot be what was meant, told at start (docs/http.md, "Checked at start"): the
 * reason in one warning, or with `--strict` a refusal. Pure: `http.ts` logs, refuses, and says when to look again.
 */
import type { CacheScope } from '../config.js';
import type { Snapshot } from '../index/types.js';
import { unmatchedPrefixes, type Visibility } from '../server/visibility.js';

/** One finding: its log event, fields and message. */
export interface ReviewFinding {
  readonly event: 'config-suspect' | 'view-prefix-unmatched';
  readonly fields: Readonly<Record<string, string>>;
  readonly message: string;
}

/**
 * `--cache-scope public` with per-token or per-claim views: every view gets its own `skills/list`, and a shared cache
 * told `public` may hand one team's answer to another.
 *
 * @param views the options that make views (`--http-tokens`, `--auth-claims`) that are in force.
 * @returns the finding, or `undefined` when the combination is sound.
 */
export function reviewCacheScope(scope: CacheScope, views: readonly string[]): ReviewFinding | undefined {
  if (scope !== 'public' || views.length === 0) return undefined;
  return {
    event: 'config-suspect',
    fields: { option: '--cache-scope' },
    message: `--cache-scope public with ${views.join(' and ')}: each token sees its own skills, and a shared cache told the results are public may give one team's listing to another; use --cache-scope private (the default)`,
  };
}

/**
 * The prefixes of a view file under which no skill is served: a mistyped prefix (`acme/biling`) gives its team an
 * empty catalog and no error.
 *
 * @param option the option that named the file, as the message says it (`--http-tokens /etc/tokens.json`).
 * @returns one finding per entry and unmatched prefix, naming the entry (never its token) and the closest served path.
 */
export function reviewPrefixes(snapshot: Snapshot, views: readonly Visibility[], option: string): ReviewFinding[] {
  return unmatchedPrefixes(snapshot, views).map(({ view, prefix, nearest }) => ({
    event: 'view-prefix-unmatched',
    fields: { view, prefix, ...(nearest === undefined ? {} : { nearest }) },
    message: `${option}: "${view}" has the prefix "${prefix}", under which no skill is served${nearest === undefined ? '' : ` (did you mean "${nearest}"?)`}: its clients see nothing there`,
  }));
}
