/**
 * `skills-serve manifest`: prints the exact `skills/list` entries (every page, in `skills/list` order) as JSON, or
 * with `--check FILE` compares the tree with a saved manifest and exits 1 with a readable summary when they differ.
 */
import { readFile } from 'node:fs/promises';

import { entryOf } from '../index/entry.js';
import type { SkillEntry } from '../index/types.js';
import type { SourceSpec } from '../roots/kinds.js';
import { diffManifests, formatManifestDiff, manifestsMatch } from './manifest-diff.js';
import { type CommandOptions, snapshotOf } from './snapshot-once.js';

/** The manifest document: `{ "skills": [ entry, … ] }`. */
export interface Manifest {
  readonly skills: readonly SkillEntry[];
}

export interface ManifestOptions extends CommandOptions {
  /** Compare with this saved manifest instead of printing. */
  readonly checkFile?: string;
  readonly warn: (text: string) => void;
}

/**
 * Runs `manifest` over `sources` (each opened once; each entry's `_meta` records the provenance of its root).
 *
 * @returns the exit code: 0 printed or matches; 1 the tree differs; 2 the saved file is unreadable or not a manifest.
 */
export async function runManifest(sources: readonly SourceSpec[], options: ManifestOptions): Promise<number> {
  const snapshot = await snapshotOf(sources, options);
  if (typeof snapshot === 'number') return snapshot;
  const leftOut = snapshot.diagnostics.filter((diagnostic) => diagnostic.severity === 'error').length;
  if (leftOut > 0)
    options.warn(`skills-serve: ${leftOut} skill(s) left out of the manifest; run skills-serve check to see why\n`);
  // `skills/list` pages through this same order, so every page of it, end to end, is this list.
  const skills = snapshot.ordered.map(entryOf);

  if (options.checkFile === undefined) {
    options.write(`${JSON.stringify({ skills } satisfies Manifest, null, 2)}\n`);
    return 0;
  }
  let saved: Manifest;
  try {
    saved = parseManifest(await readFile(options.checkFile, 'utf8'));
  } catch (error) {
    options.warn(`skills-serve: cannot read manifest ${options.checkFile}: ${(error as Error).message}\n`);
    return 2;
  }
  const diff = diffManifests(saved.skills, skills);
  if (manifestsMatch(diff)) {
    options.write(`manifest matches: ${skills.length} skill(s)\n`);
    return 0;
  }
  options.write(`the tree no longer matches ${options.checkFile}:\n${formatManifestDiff(diff)}`);
  return 1;
}

/**
 * Parses a saved manifest, narrowed once to this server's entry type: an entry another server saved with
 * `"resources": "dynamic"` (SEP-2640: its files are not listed) is read as listing no files.
 *
 * @throws Error when the text is not JSON of the shape
 *   `{ "skills": [ { "uri": string, "frontmatter": {…}, "resources": [...] | "dynamic" } ] }`.
 */
export function parseManifest(text: string): Manifest {
  const value = JSON.parse(text) as unknown;
  const skills = (value as { skills?: unknown } | null)?.skills;
  if (!Array.isArray(skills) || !skills.every(isEntryShaped))
    throw new Error('not a skills-serve manifest ({ "skills": [ … ] })');
  const saved = skills as (Omit<SkillEntry, 'resources'> & { resources: SkillEntry['resources'] | 'dynamic' })[];
  return {
    skills: saved.map((entry) => (entry.resources === 'dynamic' ? { ...entry, resources: [] } : (entry as SkillEntry))),
  };
}

function isEntryShaped(value: unknown): boolean {
  const entry = value as { uri?: unknown; frontmatter?: unknown; resources?: unknown } | null;
  const resources = entry?.resources;
  const rowsOk =
    resources === 'dynamic' ||
    (Array.isArray(resources) &&
      resources.every((row: unknown) => {
        const file = row as { uri?: unknown; digest?: unknown; size?: unknown } | null;
        return typeof file?.uri === 'string' && typeof file.digest === 'string' && typeof file.size === 'number';
      }));
  return (
    typeof entry?.uri === 'string' &&
    typeof entry.frontmatter === 'object' &&
    entry.frontmatter !== null &&
    !Array.isArray(entry.frontmatter) &&
    rowsOk
  );
}
