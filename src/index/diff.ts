/**
 * What changed between two snapshots, as hosts need to hear it (pure). Notifications come from this diff, never
 * from raw filesystem events.
 */
import type { SkillRecord, Snapshot } from './types.js';

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
 * Compares two snapshots. Skills whose record is the very same object in both (the assembler reuses the records of
 * skills outside the rebuilt regions) are skipped, so a change costs O(changed skills + directories).
 *
 * @param previous the snapshot served until now.
 * @param next the snapshot served from now on.
 */
export function diffSnapshots(previous: Snapshot, next: Snapshot): SnapshotDiff {
  let listChanged = previous.files.size !== next.files.size || previous.skills.size !== next.skills.size || previous.dirs.size !== next.dirs.size;
  const updated = new Set<string>();
  const skillsChanged: string[] = [];
  for (const [uri, skill] of next.skills) {
    const before = previous.skills.get(uri);
    if (before === skill) continue;
    if (before === undefined) {
      listChanged = true;
      skillsChanged.push(uri);
    } else {
      if (before.name !== skill.name || before.description !== skill.description) listChanged = true;
      if (JSON.stringify(before.entry) !== JSON.stringify(skill.entry)) skillsChanged.push(uri);
    }
    for (const resource of resourcesOf(skill)) {
      const was = previous.files.get(resource.uri);
      if (was === undefined) listChanged = true;
      else if (was.digest !== resource.digest || was.size !== resource.size) updated.add(resource.uri);
    }
  }
  for (const [uri, before] of previous.skills) {
    const now = next.skills.get(uri);
    if (now === before) continue;
    if (now === undefined) {
      listChanged = true;
      skillsChanged.push(uri);
    }
    for (const resource of resourcesOf(before)) if (!next.files.has(resource.uri)) listChanged = true;
  }
  if (!listChanged) {
    for (const uri of next.dirs.keys()) {
      if (!previous.dirs.has(uri)) {
        listChanged = true;
        break;
      }
    }
  }
  return { listChanged, updated: [...updated].sort(), skillsChanged: skillsChanged.sort() };
}

function resourcesOf(skill: SkillRecord): readonly { uri: string; digest: string; size: number }[] {
  return Array.isArray(skill.entry.resources) ? skill.entry.resources : [];
}
