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
import { type ManifestFacts, readManifest, skillSegments } from './manifest.js';
import { MANIFEST_NAME } from './policy.js';
import { type Diagnostic, DirNode, type RootSpec, type SkillRecord } from './types.js';
import type { WalkedRegion, WalkedSkillDir } from './walk.js';

/** An outermost skill directory of one root, as built. */
export interface BuiltRegion {
  readonly rel: string;
  readonly node: DirNode;
  /** Valid skills in it, outermost first. */
  readonly records: readonly SkillRecord[];
  /** Real paths reached through symlinks inside it (what a change under them must rebuild). */
  readonly linkTargets: readonly string[];
  /**
   * What each skill directory's `SKILL.md` gave, valid or not, by root-relative directory: what an unchanged skill
   * keeps and the digest cache stores beside the `SKILL.md` digest.
   */
  readonly manifests: ReadonlyMap<string, ManifestFacts>;
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
 * @param previous the facts of the `SKILL.md` published at a root-relative directory before, if any (an unchanged
 *   skill keeps them).
 * @param withholdExecutables `--withhold-executables`: a valid skill bundling executable content is not published
 *   (an `executables-withheld` diagnostic), nor any skill nested in it (docs/security.md, "Executable content").
 * @returns the region with its valid records, outermost first, and the real paths it reaches through links.
 * @throws only on a bug (see `readFrontmatter`).
 */
export async function buildRegionRecords(
  root: RegionRoot,
  walked: WalkedRegion,
  note: (rel: string, diagnostic: Diagnostic) => void,
  previous: (rel: string) => ManifestFacts | undefined,
  withholdExecutables = false,
): Promise<BuiltRegion> {
  const { rootIndex, spec, base } = root;
  const records: SkillRecord[] = [];
  const manifests = new Map<string, ManifestFacts>();
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
    const segments = skillSegments(base, skillDir.rel);
    if (segments.length === 0) continue;
    const reusable = skillDir.previous?.skill;
    const unchanged = skillDir.node === skillDir.previous && reusable !== undefined && reusable.rootIndex === rootIndex;
    const facts = await factsOf(skillDir, segments, unchanged ? previous(skillDir.rel) : undefined);
    if (facts === undefined) continue; // unreadable SKILL.md: already reported
    manifests.set(skillDir.rel, facts);
    const manifestPath = path.join(spec.dir, ...(skillDir.rel === '' ? [] : skillDir.rel.split('/')), MANIFEST_NAME);
    const { hidden, read } = facts;
    if (hidden !== undefined)
      note(skillDir.rel, hiddenCharacters(manifestPath, hidden.count, hidden.kinds, hidden.line, hidden.column));
    if (unchanged) {
      publish(reusable, manifestPath);
      continue;
    }
    if ('problems' in read) {
      // Every rule the skill breaks in one diagnostic: its frontmatter's, and the limits'.
      note(skillDir.rel, problemsDiagnostic(manifestPath, [...read.problems, ...limitProblems(skillDir.node)]));
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
      manifest: read,
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
  return { rel: walked.rel, node: walked.node, records, linkTargets, manifests };
}

/**
 * The facts of a skill directory's `SKILL.md`: those the digest cache kept (the walk trusted them), those it had
 * before when the skill is unchanged, or read from the bytes the walk read.
 *
 * @returns `undefined` when the walk could not read it.
 */
async function factsOf(
  skillDir: WalkedSkillDir,
  segments: readonly string[],
  kept: ManifestFacts | undefined,
): Promise<ManifestFacts | undefined> {
  const { manifest } = skillDir;
  if (manifest === undefined || !Buffer.isBuffer(manifest)) return manifest;
  return kept ?? readManifest(segments, manifest);
}

/** A fresh copy of a published node (so that assigning its skill never changes what an older snapshot holds). */
function cloneNode(node: DirNode): DirNode {
  return new DirNode(node.name, node.children, node.real, undefined);
}
