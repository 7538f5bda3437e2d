/**
 * Published skills → one frozen {@link Snapshot}: conflicts between roots, the file map, and every directory
 * resource (skill roots, their subdirectories, grouping directories above skills). Pure.
 * Implements SEP-2640 "resources/directory/read" (which URIs are directories) and DESIGN §3 "One immutable snapshot".
 */
import type { BuiltEntry } from './entry.js';
import type { Diagnostic, DirectoryChild, FileRecord, SkillRecord, Snapshot } from './types.js';
import { createSlicer } from './slice.js';
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

/** What one published skill adds to a snapshot; computed once per `PublishedSkill` object. */
interface Contribution {
  readonly record: SkillRecord;
  /** Directory URIs the skill makes exist (its root and every directory inside it). */
  readonly ownDirs: readonly string[];
  /** `[directory URI, child]` pairs: its subdirectories, its files, and its place in grouping directories above it. */
  readonly children: readonly (readonly [string, DirectoryChild])[];
}

const contributions = new WeakMap<PublishedSkill, Contribution>();

function contributionOf(skill: PublishedSkill): Contribution {
  const cached = contributions.get(skill);
  if (cached !== undefined) return cached;
  const rootUri = buildSkillUri(skill.segments);
  const record: SkillRecord = Object.freeze({
    entry: skill.built.entry,
    segments: Object.freeze([...skill.segments]),
    rootUri,
    dir: skill.dir,
    rootIndex: skill.rootIndex,
    name: skill.built.name,
    description: skill.built.description,
    manifestSize: skill.manifestSize,
  });
  const children: (readonly [string, DirectoryChild])[] = [];
  for (const uri of skill.dirUris) {
    if (uri !== rootUri) children.push([parentUri(uri), Object.freeze({ uri, name: lastName(uri), mimeType: DIRECTORY_MIME_TYPE })]);
  }
  for (const file of skill.files) {
    children.push([parentUri(file.uri), Object.freeze({ uri: file.uri, name: file.name, mimeType: file.mimeType, size: file.size })]);
  }
  // Grouping directories above the skill (`skill://acme` for `acme/billing/refunds`).
  for (let depth = skill.segments.length - 1; depth >= 1; depth--) {
    const childUri = buildSkillUri(skill.segments.slice(0, depth + 1));
    children.push([buildSkillUri(skill.segments.slice(0, depth)), Object.freeze({ uri: childUri, name: skill.segments[depth] as string, mimeType: DIRECTORY_MIME_TYPE })]);
  }
  const contribution = { record, ownDirs: skill.dirUris, children };
  contributions.set(skill, contribution);
  return contribution;
}

/**
 * Assembles snapshots from published skills, patching the previous one: only the skills that were added or removed
 * since (by object identity: the builder keeps the `PublishedSkill` objects of regions it did not rebuild) touch the
 * maps, so a change costs O(changed skills), not O(catalog). Unchanged skills keep their `SkillRecord` and
 * `FileRecord` objects, which lets {@link diffSnapshots} skip them. Snapshots handed out are never mutated.
 */
export class SnapshotAssembler {
  #kept = new Set<PublishedSkill>();
  #last: Snapshot | undefined;
  /** Directory URI → child URI → the child and how many kept skills contribute it. */
  readonly #children = new Map<string, Map<string, { child: DirectoryChild; count: number }>>();
  /** Directory URI → how many kept skills make it exist. */
  readonly #ownDirs = new Map<string, number>();

  /**
   * Settles conflicts between roots and assembles the next snapshot.
   *
   * A skill whose path equals, encloses or lies inside a skill of an earlier root is left out with a diagnostic
   * naming both roots: the first root listed wins. Within one root, nesting is normal and kept.
   *
   * @param published candidate skills, in root order.
   * @param diagnostics diagnostics gathered so far (kept, and conflicts appended).
   * @param generation build number.
   */
  async assemble(published: readonly PublishedSkill[], diagnostics: Diagnostic[], generation: number): Promise<Snapshot> {
    const kept = new Set(settleConflicts(published, diagnostics));
    const removed = [...this.#kept].filter((skill) => !kept.has(skill));
    const added = [...kept].filter((skill) => !this.#kept.has(skill));
    const previous = this.#last;
    const skills = new Map(previous?.skills ?? []);
    const files = new Map(previous?.files ?? []);
    const touched = new Set<string>();
    const slice = createSlicer();

    for (const skill of removed) {
      const contribution = contributionOf(skill);
      skills.delete(contribution.record.entry.uri);
      for (const file of skill.files) files.delete(file.uri);
      for (const uri of contribution.ownDirs) this.#countDir(uri, -1, touched);
      for (const [dirUri, child] of contribution.children) this.#countChild(dirUri, child, -1, touched);
      await slice();
    }
    for (const skill of added) {
      const contribution = contributionOf(skill);
      skills.set(contribution.record.entry.uri, contribution.record);
      for (const file of skill.files) files.set(file.uri, file);
      for (const uri of contribution.ownDirs) this.#countDir(uri, 1, touched);
      for (const [dirUri, child] of contribution.children) this.#countChild(dirUri, child, 1, touched);
      await slice();
    }

    const dirs = new Map(previous?.dirs ?? []);
    for (const uri of touched) {
      const map = this.#children.get(uri);
      if (map === undefined && (this.#ownDirs.get(uri) ?? 0) === 0) dirs.delete(uri);
      else dirs.set(uri, Object.freeze([...(map?.values() ?? [])].map((item) => item.child).sort((a, b) => compareUris(a.uri, b.uri))));
      await slice();
    }
    const ordered =
      previous !== undefined && removed.length === 0 && added.length === 0
        ? previous.ordered
        : Object.freeze([...skills.values()].sort((a, b) => compareUris(a.entry.uri, b.entry.uri)));
    this.#kept = kept;
    this.#last = Object.freeze({
      skills,
      ordered,
      files,
      dirs,
      diagnostics: Object.freeze([...diagnostics].sort(compareDiagnostics)),
      generation,
    });
    return this.#last;
  }

  #countDir(uri: string, delta: number, touched: Set<string>): void {
    const count = (this.#ownDirs.get(uri) ?? 0) + delta;
    if (count === 0) this.#ownDirs.delete(uri);
    else this.#ownDirs.set(uri, count);
    touched.add(uri);
  }

  #countChild(dirUri: string, child: DirectoryChild, delta: number, touched: Set<string>): void {
    let map = this.#children.get(dirUri);
    if (map === undefined) this.#children.set(dirUri, (map = new Map()));
    const item = map.get(child.uri);
    const count = (item?.count ?? 0) + delta;
    if (count === 0) map.delete(child.uri);
    // The latest contribution wins: a file whose size changed is removed (old child) and added (new child).
    else map.set(child.uri, { child: delta > 0 ? child : (item?.child ?? child), count });
    if (map.size === 0) this.#children.delete(dirUri);
    touched.add(dirUri);
  }
}

/**
 * Settles conflicts and assembles a snapshot from scratch (no previous snapshot to patch).
 *
 * @param published candidate skills, in root order.
 * @param diagnostics diagnostics gathered so far (kept, and conflicts appended).
 * @param generation build number.
 */
export function assembleSnapshot(published: readonly PublishedSkill[], diagnostics: Diagnostic[], generation: number): Promise<Snapshot> {
  return new SnapshotAssembler().assemble(published, diagnostics, generation);
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
