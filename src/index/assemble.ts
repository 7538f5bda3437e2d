/**
 * Published skills → one frozen {@link Snapshot}: conflicts between roots, the file map, and every directory
 * resource (skill roots, their subdirectories, grouping directories above skills). Pure.
 * Implements SEP-2640 "resources/directory/read" (which URIs are directories) and DESIGN §3 "One immutable snapshot".
 */
import type { BuiltEntry } from './entry.js';
import type { Diagnostic, DirectoryChild, FileRecord, SkillRecord, Snapshot } from './types.js';
import { buildSkillUri, compareUris } from './uri.js';

/** MIME type of directory resources (SEP-2640). */
export const DIRECTORY_MIME_TYPE = 'inode/directory';

/** A skill that passed its rules, before conflicts between roots are settled. */
export interface PublishedSkill {
  readonly rootIndex: number;
  readonly rootDir: string;
  readonly segments: readonly string[];
  readonly dir: string;
  readonly built: BuiltEntry;
  readonly manifestSize: number;
  /** Every file of the skill (nested skills' files included). */
  readonly files: readonly FileRecord[];
  /** URIs of every directory inside the skill, its root included. */
  readonly dirUris: readonly string[];
}

/**
 * Settles conflicts and assembles the snapshot.
 *
 * A skill whose path equals, encloses or lies inside a skill of an earlier root is left out with a diagnostic
 * naming both roots: the first root listed wins. Within one root, nesting is normal and kept.
 *
 * @param published candidate skills, in root order.
 * @param diagnostics diagnostics gathered so far (kept, and conflicts appended).
 * @param generation build number.
 */
export function assembleSnapshot(published: readonly PublishedSkill[], diagnostics: Diagnostic[], generation: number): Snapshot {
  const kept = settleConflicts(published, diagnostics);
  const skills = new Map<string, SkillRecord>();
  const files = new Map<string, FileRecord>();
  const children = new Map<string, Map<string, DirectoryChild>>();
  const addChild = (dirUri: string, child: DirectoryChild): void => {
    let map = children.get(dirUri);
    if (map === undefined) children.set(dirUri, (map = new Map()));
    map.set(child.uri, child);
  };

  for (const skill of kept) {
    const rootUri = buildSkillUri(skill.segments);
    skills.set(skill.built.entry.uri, Object.freeze({
      entry: skill.built.entry,
      segments: Object.freeze([...skill.segments]),
      rootUri,
      dir: skill.dir,
      rootIndex: skill.rootIndex,
      name: skill.built.name,
      description: skill.built.description,
      manifestSize: skill.manifestSize,
    }));
    for (const uri of skill.dirUris) {
      if (!children.has(uri)) children.set(uri, new Map());
      if (uri !== rootUri) addChild(parentUri(uri), { uri, name: lastName(uri), mimeType: DIRECTORY_MIME_TYPE });
    }
    for (const file of skill.files) {
      if (!files.has(file.uri)) files.set(file.uri, file);
      addChild(parentUri(file.uri), { uri: file.uri, name: file.name, mimeType: file.mimeType, size: file.size });
    }
    // Grouping directories above the skill (`skill://acme` for `acme/billing/refunds`).
    for (let depth = skill.segments.length - 1; depth >= 1; depth--) {
      const dirUri = buildSkillUri(skill.segments.slice(0, depth));
      const childUri = buildSkillUri(skill.segments.slice(0, depth + 1));
      addChild(dirUri, { uri: childUri, name: skill.segments[depth] as string, mimeType: DIRECTORY_MIME_TYPE });
    }
  }

  const dirs = new Map<string, readonly DirectoryChild[]>();
  for (const [uri, map] of children) {
    dirs.set(uri, Object.freeze([...map.values()].sort((a, b) => compareUris(a.uri, b.uri))));
  }
  const ordered = [...skills.values()].sort((a, b) => compareUris(a.entry.uri, b.entry.uri));
  return Object.freeze({
    skills,
    ordered: Object.freeze(ordered),
    files,
    dirs,
    diagnostics: Object.freeze([...diagnostics].sort(compareDiagnostics)),
    generation,
  });
}

/** First root wins: drops skills of later roots whose path overlaps one of an earlier root. */
function settleConflicts(published: readonly PublishedSkill[], diagnostics: Diagnostic[]): PublishedSkill[] {
  const kept: PublishedSkill[] = [];
  const claimed = new Map<string, PublishedSkill>(); // skill path → skill, for roots already settled
  const prefixes = new Map<string, PublishedSkill>(); // every proper prefix of a settled skill path
  let currentRoot = -1;
  let pending: PublishedSkill[] = [];
  const settle = (): void => {
    for (const skill of pending) {
      const key = skill.segments.join('/');
      claimed.set(key, skill);
      for (let depth = 1; depth < skill.segments.length; depth++) prefixes.set(skill.segments.slice(0, depth).join('/'), skill);
    }
    pending = [];
  };
  for (const skill of published) {
    if (skill.rootIndex !== currentRoot) {
      settle();
      currentRoot = skill.rootIndex;
    }
    const key = skill.segments.join('/');
    let winner = prefixes.get(key);
    for (let depth = 1; depth <= skill.segments.length && winner === undefined; depth++) {
      winner = claimed.get(skill.segments.slice(0, depth).join('/'));
    }
    if (winner !== undefined) {
      diagnostics.push({
        severity: 'error',
        rule: 'skill-path-conflict',
        file: `${skill.dir}`,
        message: `skill path "${key}" from root ${skill.rootDir} overlaps "${winner.segments.join('/')}" from root ${winner.rootDir}, which is listed first and wins`,
        hint: 'mount one of the roots under a prefix (prefix=dir) or rename one of the skills',
      });
      continue;
    }
    pending.push(skill);
    kept.push(skill);
  }
  return kept;
}

/** One stable order for diagnostics, whatever order the walk finished in: file, line, column, rule, message. */
function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  return (
    compareUris(a.file, b.file) ||
    (a.line ?? 0) - (b.line ?? 0) ||
    (a.column ?? 0) - (b.column ?? 0) ||
    compareUris(a.rule, b.rule) ||
    compareUris(a.message, b.message)
  );
}

function parentUri(uri: string): string {
  return uri.slice(0, uri.lastIndexOf('/'));
}

function lastName(uri: string): string {
  return decodeURIComponent(uri.slice(uri.lastIndexOf('/') + 1));
}
