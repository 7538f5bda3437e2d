/**
 * `skills-serve manifest`: prints the exact `skills/list` entries (every page, in `skills/list` order) as JSON, or
 * with `--check FILE` compares the tree with a saved manifest and exits 1 with a readable summary when they differ.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { entryOf } from '../index/entry.js';
import type { Diagnostic, RootSpec, SkillEntry } from '../index/types.js';
import { buildSkillUri } from '../index/uri.js';
import { isPathWithin } from '../paths.js';
import type { SourceSpec } from '../roots/kinds.js';
import { diffManifests, formatManifestDiff, manifestDiffJson, manifestsMatch } from './manifest-diff.js';
import { buildOnce, type CommandOptions } from './snapshot-once.js';

/** The manifest document: `{ "skills": [ entry, … ] }`. */
export interface Manifest {
  readonly skills: readonly SkillEntry[];
}

export interface ManifestOptions extends CommandOptions {
  /** Compare with this saved manifest instead of printing. */
  readonly checkFile?: string;
  /** With `checkFile`: print the comparison as one JSON document. */
  readonly json?: boolean;
  /** With `checkFile`: compare content only, not provenance (`_meta`: a git root's commit). */
  readonly contentOnly?: boolean;
  readonly warn: (text: string) => void;
}

/**
 * Runs `manifest` over `sources` (each opened once; each entry's `_meta` records the provenance of its root).
 *
 * @returns the exit code: 0 printed or matches; 1 the tree differs (a skill added, removed, left out or changed);
 *   2 the saved file is unreadable or not a manifest.
 */
export async function runManifest(sources: readonly SourceSpec[], options: ManifestOptions): Promise<number> {
  const built = await buildOnce(sources, options);
  if (typeof built === 'number') return built;
  const { snapshot, roots } = built;
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
  const diff = diffManifests(saved.skills, skills, {
    contentOnly: options.contentOnly === true,
    leftOut: leftOutSkills(snapshot.diagnostics, roots),
  });
  const matches = manifestsMatch(diff);
  if (options.json === true) options.write(`${JSON.stringify(manifestDiffJson(diff), null, 2)}\n`);
  else if (matches) options.write(`manifest matches: ${skills.length} skill(s)\n`);
  else options.write(`the tree no longer matches ${options.checkFile}:\n${formatManifestDiff(diff)}`);
  return matches ? 0 : 1;
}

/**
 * The skills left out of a build, by the URI they would have: each error diagnostic of a `SKILL.md`, placed by the
 * root whose directory holds it (the innermost, with its prefix).
 */
function leftOutSkills(
  diagnostics: readonly Diagnostic[],
  roots: readonly RootSpec[],
): Map<string, { rule: string; reason: string }> {
  const found = new Map<string, { rule: string; reason: string }>();
  for (const diagnostic of diagnostics) {
    if (diagnostic.severity !== 'error' || path.basename(diagnostic.file) !== 'SKILL.md') continue;
    const root = roots
      .filter((candidate) => isPathWithin(diagnostic.file, candidate.dir))
      .sort((a, b) => b.dir.length - a.dir.length)[0];
    if (root === undefined) continue;
    const segments = path.relative(root.dir, diagnostic.file).split(path.sep);
    const uri = buildSkillUri([...root.prefix, ...segments]);
    if (!found.has(uri)) found.set(uri, { rule: diagnostic.rule, reason: diagnostic.message });
  }
  return found;
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
