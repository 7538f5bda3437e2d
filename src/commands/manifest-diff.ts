/**
 * Compares two manifests (lists of `skills/list` entries) the way a reviewer needs it: skills added and removed,
 * frontmatter fields changed, files added, removed or changed (pure). Used by `manifest --check`, so teams notice
 * changes that revoke host approvals.
 */
import type { SkillEntry } from '../index/types.js';

/** What changed in one skill present in both manifests. */
export interface SkillChange {
  readonly uri: string;
  /** Frontmatter keys whose values differ (added, removed or changed), sorted. */
  readonly frontmatter: readonly string[];
  readonly filesAdded: readonly string[];
  readonly filesRemoved: readonly string[];
  /** Files whose digest or size differ. */
  readonly filesChanged: readonly string[];
  /** `_meta` keys whose values differ (a root's provenance, `dev.skills-serve/source`: another commit), sorted. */
  readonly meta: readonly string[];
}

/** A skill of the saved manifest that the tree still holds but that is left out now: why, as `check` says it. */
export interface LeftOut {
  readonly uri: string;
  /** The rule id(s) of its error diagnostic. */
  readonly rule: string;
  readonly reason: string;
}

export interface ManifestDiff {
  readonly added: readonly string[];
  /** Skills of the saved manifest that are gone from the tree. */
  readonly removed: readonly string[];
  /** Skills of the saved manifest whose `SKILL.md` is still there but no longer valid. */
  readonly leftOut: readonly LeftOut[];
  readonly changed: readonly SkillChange[];
  /** For `_meta` changes that name commits (`{ commit }` values): uri + `\0` + key → [before, after]. */
  readonly commits?: ReadonlyMap<string, readonly [string, string]>;
}

/** How to compare. */
export interface DiffOptions {
  /** Compare content only (frontmatter, files and their digests), not `_meta` (a git root's commit). */
  readonly contentOnly?: boolean;
  /** Why each skill left out of the tree now is: URI → its error diagnostic's rule and message. */
  readonly leftOut?: ReadonlyMap<string, { readonly rule: string; readonly reason: string }>;
}

/**
 * Diffs `expected` (the saved manifest) against `actual` (the tree now).
 *
 * @returns added, removed and left-out skills and per-skill changes; all lists sorted by URI. Empty lists mean
 *   "matches".
 */
export function diffManifests(
  expected: readonly SkillEntry[],
  actual: readonly SkillEntry[],
  options: DiffOptions = {},
): ManifestDiff {
  const before = new Map(expected.map((skill) => [skill.uri, skill]));
  const after = new Map(actual.map((skill) => [skill.uri, skill]));
  const added = [...after.keys()].filter((uri) => !before.has(uri)).sort();
  const missing = [...before.keys()].filter((uri) => !after.has(uri)).sort();
  const removed = missing.filter((uri) => options.leftOut?.has(uri) !== true);
  const leftOut = missing.flatMap((uri) => {
    const why = options.leftOut?.get(uri);
    return why === undefined ? [] : [{ uri, ...why }];
  });
  const changed: SkillChange[] = [];
  for (const [uri, now] of [...after].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const then = before.get(uri);
    if (then === undefined) continue;
    const keys = [...new Set([...Object.keys(then.frontmatter), ...Object.keys(now.frontmatter)])].sort();
    const frontmatter = keys.filter(
      (key) => JSON.stringify(then.frontmatter[key]) !== JSON.stringify(now.frontmatter[key]),
    );
    const oldFiles = new Map(then.resources.map((file) => [file.uri, file]));
    const newFiles = new Map(now.resources.map((file) => [file.uri, file]));
    const filesAdded = [...newFiles.keys()].filter((file) => !oldFiles.has(file)).sort();
    const filesRemoved = [...oldFiles.keys()].filter((file) => !newFiles.has(file)).sort();
    const filesChanged = [...newFiles.values()]
      .filter((file) => {
        const old = oldFiles.get(file.uri);
        return old !== undefined && (old.digest !== file.digest || old.size !== file.size);
      })
      .map((file) => file.uri)
      .sort();
    const metaKeys = [...new Set([...Object.keys(then._meta ?? {}), ...Object.keys(now._meta ?? {})])].sort();
    const meta =
      options.contentOnly === true
        ? []
        : metaKeys.filter((key) => JSON.stringify(then._meta?.[key]) !== JSON.stringify(now._meta?.[key]));
    if (frontmatter.length + filesAdded.length + filesRemoved.length + filesChanged.length + meta.length > 0) {
      changed.push({ uri, frontmatter, filesAdded, filesRemoved, filesChanged, meta });
    }
  }
  const commits = new Map<string, readonly [string, string]>();
  for (const change of changed) {
    for (const key of change.meta) {
      const from = commitOf(before.get(change.uri)?._meta?.[key]);
      const to = commitOf(after.get(change.uri)?._meta?.[key]);
      if (from !== undefined && to !== undefined) commits.set(`${change.uri}\0${key}`, [from, to]);
    }
  }
  return { added, removed, leftOut, changed, ...(commits.size === 0 ? {} : { commits }) };
}

/** ` (commit a1b2c3d → d4e5f6a)` for a change of a provenance naming commits, else ''. */
function describeCommits(diff: ManifestDiff, uri: string, key: string): string {
  const commits = diff.commits?.get(`${uri}\0${key}`);
  return commits === undefined ? '' : ` (commit ${commits[0].slice(0, 12)} → ${commits[1].slice(0, 12)})`;
}

/** The `commit` of a provenance value (`{ source, ref, commit }`), if it has one. */
function commitOf(value: unknown): string | undefined {
  const commit = typeof value === 'object' && value !== null ? (value as { commit?: unknown }).commit : undefined;
  return typeof commit === 'string' ? commit : undefined;
}

/** Whether the diff is empty. */
export function manifestsMatch(diff: ManifestDiff): boolean {
  return diff.added.length === 0 && diff.removed.length === 0 && diff.leftOut.length === 0 && diff.changed.length === 0;
}

/**
 * Renders a diff for people: `+` added, `-` removed, `~` changed, files indented under their skill.
 */
export function formatManifestDiff(diff: ManifestDiff): string {
  const lines: string[] = [];
  for (const uri of diff.added) lines.push(`+ ${uri} (skill added)`);
  for (const uri of diff.removed) lines.push(`- ${uri} (skill removed)`);
  for (const { uri, rule, reason } of diff.leftOut) lines.push(`- ${uri} (left out: ${reason} [${rule}])`);
  for (const change of diff.changed) {
    const parts: string[] = [];
    if (change.frontmatter.length > 0) parts.push(`frontmatter changed (${change.frontmatter.join(', ')})`);
    if (change.filesAdded.length > 0) parts.push(`${change.filesAdded.length} file(s) added`);
    if (change.filesRemoved.length > 0) parts.push(`${change.filesRemoved.length} file(s) removed`);
    if (change.filesChanged.length > 0) parts.push(`${change.filesChanged.length} file(s) changed`);
    for (const key of change.meta) parts.push(`${key} changed${describeCommits(diff, change.uri, key)}`);
    lines.push(`~ ${change.uri}: ${parts.join(', ')}`);
    for (const file of change.filesAdded) lines.push(`    + ${file}`);
    for (const file of change.filesRemoved) lines.push(`    - ${file}`);
    for (const file of change.filesChanged) lines.push(`    ~ ${file}`);
  }
  const count = diff.added.length + diff.removed.length + diff.leftOut.length + diff.changed.length;
  lines.push(
    `${count} skill(s) differ: ${diff.added.length} added, ${diff.removed.length} removed, ${diff.leftOut.length} left out, ${diff.changed.length} changed`,
  );
  return `${lines.join('\n')}\n`;
}

/**
 * The diff as `manifest --check --json` prints it: `{ matches, added, removed, leftOut, changed, summary }`, every
 * list sorted by URI; a `_meta` change naming commits carries `{ key, from, to }`.
 */
export function manifestDiffJson(diff: ManifestDiff): Record<string, unknown> {
  return {
    matches: manifestsMatch(diff),
    added: diff.added,
    removed: diff.removed,
    leftOut: diff.leftOut,
    changed: diff.changed.map((change) => ({
      ...change,
      meta: change.meta.map((key) => {
        const commits = diff.commits?.get(`${change.uri}\0${key}`);
        return commits === undefined ? { key } : { key, from: commits[0], to: commits[1] };
      }),
    })),
    summary: {
      added: diff.added.length,
      removed: diff.removed.length,
      leftOut: diff.leftOut.length,
      changed: diff.changed.length,
    },
  };
}
