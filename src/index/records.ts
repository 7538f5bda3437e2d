/**
 * Records of one walked region: each skill directory the walk found becomes a {@link SkillRecord} (its entry built
 * once) or one diagnostic saying why it is not published (docs/ARCHITECTURE.md, "Entries"). An unchanged skill
 * directory keeps its previous record.
 *
 * Implements SEP-2640 "Skills and nesting" and "The entry".
 */
import path from 'node:path';

import { executablesWithheld, hiddenCharacters } from './diagnostics.js';
import { buildRecord, limitProblems, problemsDiagnostic } from './entry.js';
import { readFrontmatter } from './frontmatter.js';
import { findHiddenCharacters } from './hygiene.js';
import { decodeLossless } from './mime.js';
import { MANIFEST_NAME } from './policy.js';
import { type Diagnostic, DirNode, type RootSpec, type SkillRecord } from './types.js';
import type { WalkedRegion } from './walk.js';

/** An outermost skill directory of one root, as built. */
export interface BuiltRegion {
  readonly rel: string;
  readonly node: DirNode;
  /** Valid skills in it, outermost first. */
  readonly records: readonly SkillRecord[];
  /** Real paths reached through symlinks inside it (what a change under them must rebuild). */
  readonly linkTargets: readonly string[];
}

/** The root a region belongs to, as the builder resolved it. */
export interface RegionRoot {
  readonly rootIndex: number;
  readonly spec: RootSpec;
  /** The root's real path. */
  readonly real: string;
  /** Skill-path segments of the root's own directory: the prefix, plus the folder name when the root is a skill. */
  readonly base: readonly string[];
}

/**
 * Builds the records of one walked region.
 *
 * @param root the region's root.
 * @param walked what the walk found in the region.
 * @param note told each diagnostic with the root-relative directory it concerns (invalid skills, hidden characters,
 *   skills withheld).
 * @param withholdExecutables `--withhold-executables`: a valid skill bundling executable content is not published
 *   (an `executables-withheld` diagnostic), nor any skill nested in it (docs/security.md, "Executable content").
 * @returns the region with its valid records, outermost first, and the real paths it reaches through links.
 * @throws only on a bug (see `readFrontmatter`).
 */
export async function buildRegionRecords(
  root: RegionRoot,
  walked: WalkedRegion,
  note: (rel: string, diagnostic: Diagnostic) => void,
  withholdExecutables = false,
): Promise<BuiltRegion> {
  const { rootIndex, spec, base } = root;
  const records: SkillRecord[] = [];
  const withheld: SkillRecord[] = [];
  /** Publishes `record`, unless it is withheld for executable content (its own, or an enclosing skill's). */
  const publish = (record: SkillRecord, manifestPath: string): void => {
    if (withholdExecutables) {
      const enclosing = withheld.find((outer) => outer.rel === '' || record.rel.startsWith(`${outer.rel}/`));
      if (enclosing !== undefined || record.executables.length > 0) {
        withheld.push(record);
        note(record.rel, executablesWithheld(manifestPath, record.uri, record.executables, enclosing?.uri));
        return;
      }
    }
    records.push(record);
  };
  for (const skillDir of walked.skillDirs) {
    const segments = [...base, ...(skillDir.rel === '' ? [] : skillDir.rel.split('/'))];
    const manifestPath = path.join(spec.dir, ...(skillDir.rel === '' ? [] : skillDir.rel.split('/')), MANIFEST_NAME);
    const bytes = skillDir.manifestBytes;
    if (bytes === undefined || segments.length === 0) continue; // unreadable SKILL.md: already reported
    const text = decodeLossless(bytes);
    const hidden = text === undefined ? undefined : findHiddenCharacters(text);
    if (hidden !== undefined)
      note(skillDir.rel, hiddenCharacters(manifestPath, hidden.count, hidden.kinds, hidden.line, hidden.column));
    const reusable = skillDir.previous?.skill;
    if (skillDir.node === skillDir.previous && reusable !== undefined && reusable.rootIndex === rootIndex) {
      publish(reusable, manifestPath);
      continue;
    }
    const frontmatter = await readFrontmatter(segments, bytes, text);
    if ('problems' in frontmatter) {
      // Every rule the skill breaks in one diagnostic: its frontmatter's, and the limits'.
      note(skillDir.rel, problemsDiagnostic(manifestPath, [...frontmatter.problems, ...limitProblems(skillDir.node)]));
      continue;
    }
    const node = skillDir.node === skillDir.previous ? cloneNode(skillDir.node) : skillDir.node;
    const record = buildRecord({
      segments,
      node,
      dirReal: skillDir.real,
      rootIndex,
      rel: skillDir.rel,
      manifestPath,
      frontmatter,
      meta: spec.meta,
      version: spec.version,
    });
    if ('severity' in record) {
      note(skillDir.rel, record);
      continue;
    }
    (node as { skill: SkillRecord | undefined }).skill = record;
    publish(record, manifestPath);
  }
  const expectedReal = walked.rel === '' ? root.real : path.join(root.real, ...walked.rel.split('/'));
  const linkTargets =
    walked.node.real !== expectedReal && walked.node.real !== undefined
      ? [walked.node.real, ...walked.linkTargets]
      : walked.linkTargets;
  return { rel: walked.rel, node: walked.node, records, linkTargets };
}

/** A fresh copy of a published node (so that assigning its skill never changes what an older snapshot holds). */
function cloneNode(node: DirNode): DirNode {
  return new DirNode(node.name, node.children, node.real, undefined);
}
