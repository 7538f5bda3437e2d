/**
 * What changed between two snapshots, as hosts need to hear it (pure). Notifications come from this diff, never
 * from raw filesystem events.
 */
import type { Snapshot } from './types.js';

/** The notifications one snapshot swap calls for. */
export interface SnapshotDiff {
  /**
   * `notifications/resources/list_changed` is due: a file, directory or skill URI appeared or disappeared, or a
   * skill's name or description changed.
   */
  readonly listChanged: boolean;
  /** URIs served before and after whose digest changed: each gets `notifications/resources/updated`. Sorted. */
  readonly updated: readonly string[];
  /** `SKILL.md` URIs of skills added, removed, or whose entry changed in any way. Sorted. */
  readonly skillsChanged: readonly string[];
}

/**
 * Compares two snapshots.
 *
 * @param previous the snapshot served until now.
 * @param next the snapshot served from now on.
 */
export function diffSnapshots(previous: Snapshot, next: Snapshot): SnapshotDiff {
  let listChanged =
    previous.files.size !== next.files.size ||
    previous.skills.size !== next.skills.size ||
    previous.dirs.size !== next.dirs.size ||
    [...next.dirs.keys()].some((uri) => !previous.dirs.has(uri));
  const updated: string[] = [];
  for (const [uri, file] of next.files) {
    const before = previous.files.get(uri);
    if (before === undefined) listChanged = true;
    else if (before.digest !== file.digest || before.size !== file.size) updated.push(uri);
  }
  const skillsChanged: string[] = [];
  for (const [uri, skill] of next.skills) {
    const before = previous.skills.get(uri);
    if (before === undefined) {
      listChanged = true;
      skillsChanged.push(uri);
    } else if (before.entry !== skill.entry) {
      if (before.name !== skill.name || before.description !== skill.description) listChanged = true;
      if (JSON.stringify(before.entry) !== JSON.stringify(skill.entry)) skillsChanged.push(uri);
    }
  }
  for (const uri of previous.skills.keys()) {
    if (!next.skills.has(uri)) {
      listChanged = true;
      skillsChanged.push(uri);
    }
  }
  return { listChanged, updated: updated.sort(), skillsChanged: skillsChanged.sort() };
}
