/**
 * The served skills as an Agent Skills discovery feed (discovery format 0.2.0; docs/feed.md): an index
 * (`.well-known/agent-skills/index.json`: `{ "$schema", "skills": [{ name, type, description, url, digest }] }`),
 * one artifact per skill: its `SKILL.md` (`skill-md`) when it holds nothing else, else a zip archive of every file its
 * entry's `resources` list (nested skills' files included), paths relative to the skill's directory. Artifacts are
 * deterministic ({@link storedZip}): the same files give the same bytes and digest on every replica, after every
 * restart, and in `skills-serve export --well-known`. `--http` serves it (`transports/feed-route.ts`), `export` writes
 * it, and the MCP resource `skill://index.json` is serialized by {@link discoveryIndexText} too.
 *
 * The installer (`skills` on npm, 1.7.4) skips an entry whose name is not `^[a-z0-9]+(-[a-z0-9]+)*$` (1-64 characters)
 * or whose description is empty or over 1,024 characters, refuses an archive holding a path with `\` or a drive
 * letter, and installs each skill into a folder named after the entry. So such skills, and every skill whose name
 * another skill of the same feed shares, are left out of the feed, each with a warning diagnostic (`check`, the log):
 * never installed silently as one of two. MCP serves them unchanged.
 */
import { hash } from 'node:crypto';
import path from 'node:path';

import { findChild } from '../index/namespace.js';
import { digestOf } from '../index/record.js';
import { type Diagnostic, DirNode, type FileNode, type SkillRecord } from '../index/types.js';
import { compareUris, encodeSegment } from '../index/uri.js';
import { storedZip } from './zip.js';

/** The `$schema` of a discovery index, format 0.2.0. */
export const DISCOVERY_SCHEMA = 'https://schemas.agentskills.io/discovery/0.2.0/schema.json';

/** Where a site's feed lives, below its base URL (the installer's first choice). */
export const FEED_DIR = '.well-known/agent-skills';

/** The index file's name in {@link FEED_DIR}. */
export const FEED_INDEX = 'index.json';

/** One entry of a discovery index. */
export interface DiscoveryEntry {
  readonly name: string;
  /** `skill-md`: the artifact is one `SKILL.md`; `archive`: a zip archive with `SKILL.md` at its root. */
  readonly type: 'skill-md' | 'archive';
  readonly description: string;
  /** The artifact's URL, resolved against the index's URL. */
  readonly url: string;
  /** `sha256:` + 64 lowercase hex digits of the artifact's bytes. */
  readonly digest: string;
}

/**
 * Serializes a discovery index (0.2.0), entries in the order given, stopping before the entry that would take the
 * text over `maxBytes`.
 *
 * @param maxBytes most UTF-8 bytes of the text (default: no bound).
 * @returns the JSON text and how many entries it holds (the first `count` of `entries`).
 */
export function discoveryIndexText(
  entries: Iterable<DiscoveryEntry>,
  maxBytes = Infinity,
): { readonly text: string; readonly count: number } {
  const head = `{"$schema":${JSON.stringify(DISCOVERY_SCHEMA)},"skills":[`;
  const parts: string[] = [];
  let bytes = Buffer.byteLength(head, 'utf8') + 2;
  for (const { name, type, description, url, digest } of entries) {
    const part = JSON.stringify({ name, type, description, url, digest });
    const size = Buffer.byteLength(part, 'utf8') + (parts.length === 0 ? 0 : 1);
    if (bytes + size > maxBytes) break;
    bytes += size;
    parts.push(part);
  }
  return { text: `${head}${parts.join(',')}]}`, count: parts.length };
}

/** The rule ids of the feed's diagnostics (warnings: the skill is served over MCP, and left out of the feed). */
export const FEED_RULES = ['feed-name-invalid', 'feed-name-shared', 'feed-description', 'feed-path'] as const;

/** A name the installer takes (skills 1.7.4, `isValidSkillName`). */
const INSTALLABLE_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/u;
/** Most characters (UTF-16 code units, as the installer counts) of an entry's name and description. */
const NAME_MAX = 64;
const DESCRIPTION_MAX = 1024;

/** One file of a skill, as its artifact holds it. */
export interface SkillFile {
  /** Its path inside the skill's directory (`/`-separated, decoded): its path in the archive. */
  readonly path: string;
  /** Its `skill://` URI (canonical). */
  readonly uri: string;
  /** Absolute real host path. */
  readonly real: string;
  readonly node: FileNode;
}

/** A skill the feed publishes, before its artifact is built. */
export interface PlannedArtifact {
  readonly skill: SkillRecord;
  readonly type: DiscoveryEntry['type'];
  /** The artifact's path relative to the index (its entry's `url`): `<name>/SKILL.md` or `<name>.zip`. */
  readonly file: string;
}

/**
 * Which skills a feed publishes, and why the others are left out.
 *
 * @param skills the served skills (of one view), in `skills/list` order.
 * @returns the artifacts, in that order, and one warning diagnostic (rule of {@link FEED_RULES}, file: the skill's
 *   `SKILL.md`) per skill left out.
 */
export function planFeed(skills: readonly SkillRecord[]): {
  readonly artifacts: readonly PlannedArtifact[];
  readonly problems: readonly Diagnostic[];
} {
  const byName = new Map<string, SkillRecord[]>();
  for (const skill of skills) byName.set(skill.name, [...(byName.get(skill.name) ?? []), skill]);
  const artifacts: PlannedArtifact[] = [];
  const problems: Diagnostic[] = [];
  for (const skill of skills) {
    const problem = feedProblem(skill, byName.get(skill.name) ?? []);
    if (problem !== undefined) {
      problems.push({ severity: 'warning', file: path.join(skill.dirReal, 'SKILL.md'), ...problem });
      continue;
    }
    const archive = skill.fileCount > 1;
    artifacts.push({
      skill,
      type: archive ? 'archive' : 'skill-md',
      file: archive ? `${skill.name}.zip` : `${skill.name}/SKILL.md`,
    });
  }
  return { artifacts, problems };
}

/** Why the installer could not take `skill` as its own entry, if it could not. */
function feedProblem(
  skill: SkillRecord,
  namesakes: readonly SkillRecord[],
): Pick<Diagnostic, 'rule' | 'message' | 'hint'> | undefined {
  const where = skill.rootUri;
  if (skill.name.length > NAME_MAX || !INSTALLABLE_NAME.test(skill.name))
    return {
      rule: 'feed-name-invalid',
      message: `${where} is left out of the discovery feed: installers take only names of a-z, 0-9 and single inner hyphens, at most ${NAME_MAX} characters`,
      hint: 'rename the skill (its folder and frontmatter name) to such a name; MCP clients are served it as it is',
    };
  if (namesakes.length > 1)
    return {
      rule: 'feed-name-shared',
      message: `${where} is left out of the discovery feed: ${namesakes.length} skills are named "${skill.name}" (${namesakes.map((namesake) => namesake.rootUri).join(', ')}), and an installer would put them in one folder`,
      hint: 'rename all but one, or serve them to different views (--http-tokens prefixes); MCP clients are served all of them',
    };
  if (skill.description.length > DESCRIPTION_MAX || skill.description.trim() === '')
    return {
      rule: 'feed-description',
      message: `${where} is left out of the discovery feed: installers take descriptions of 1 to ${DESCRIPTION_MAX} characters, and it has ${skill.description.length}`,
      hint: `shorten the description to ${DESCRIPTION_MAX} characters`,
    };
  const unsafe = skillFiles(skill).find((file) => file.path.includes('\\') || /^[A-Za-z]:/u.test(file.path));
  if (unsafe !== undefined)
    return {
      rule: 'feed-path',
      message: `${where} is left out of the discovery feed: installers refuse an archive holding "${unsafe.path}" (a backslash or a drive letter)`,
      hint: 'rename that file',
    };
  return undefined;
}

const filesOf = new WeakMap<SkillRecord, readonly SkillFile[]>();

/**
 * Every file of `skill`, nested skills' included, in its entry's `resources` order (by URI, code-unit order).
 */
export function skillFiles(skill: SkillRecord): readonly SkillFile[] {
  let files = filesOf.get(skill);
  if (files === undefined) {
    const rows: SkillFile[] = [];
    const visit = (dir: DirNode, rel: string, uri: string, real: string): void => {
      for (const child of dir.children) {
        const childRel = rel === '' ? child.name : `${rel}/${child.name}`;
        const childUri = `${uri}/${encodeSegment(child.name)}`;
        const childReal = child.real ?? `${real}/${child.name}`;
        if (child instanceof DirNode) visit(child, childRel, childUri, childReal);
        else rows.push({ path: childRel, uri: childUri, real: childReal, node: child });
      }
    };
    visit(skill.node, '', skill.rootUri, skill.dirReal);
    files = rows.sort((a, b) => compareUris(a.uri, b.uri));
    filesOf.set(skill, files);
  }
  return files;
}

/** A file's bytes no longer match the digest its snapshot published: build from a newer snapshot. */
export class StaleFileError extends Error {
  constructor(readonly uri: string) {
    super(`${uri} changed since it was indexed`);
    this.name = 'StaleFileError';
  }
}

/** Reads one file of a skill (any bytes: {@link artifactBytes} checks them against the digest). */
export type FileBytes = (file: SkillFile) => Promise<Uint8Array>;

/**
 * Builds one artifact: the bytes of `SKILL.md`, or the zip archive of every file of the skill, each file's bytes
 * checked against its published digest first.
 *
 * @throws StaleFileError when a file's bytes do not match its digest (it changed since the snapshot).
 */
export async function artifactBytes(artifact: PlannedArtifact, read: FileBytes): Promise<Uint8Array> {
  const files = skillFiles(artifact.skill);
  const chosen = artifact.type === 'skill-md' ? files.filter((file) => file.path === 'SKILL.md') : files;
  const read_ = await Promise.all(
    chosen.map(async (file) => {
      const bytes = await read(file);
      if (bytes.byteLength !== file.node.size || sha256(bytes) !== digestOf(file.node))
        throw new StaleFileError(file.uri);
      return { path: file.path, bytes };
    }),
  );
  return artifact.type === 'skill-md' ? (read_[0] as { bytes: Uint8Array }).bytes : storedZip(read_);
}

/** `sha256:` + hex of `bytes`. */
export function sha256(bytes: Uint8Array | string): string {
  return `sha256:${hash('sha256', bytes, 'hex')}`;
}

/** Archive digests, per record: a record never changes, and an unchanged skill keeps its record across snapshots. */
const archiveDigests = new WeakMap<SkillRecord, string>();

/** One feed: the index's text and each artifact, by its path relative to the index. */
export interface Feed {
  /** `index.json`'s text. */
  readonly index: string;
  readonly artifacts: ReadonlyMap<string, { readonly artifact: PlannedArtifact; readonly digest: string }>;
  /** Why skills were left out (warnings, {@link FEED_RULES}). */
  readonly problems: readonly Diagnostic[];
}

/**
 * Builds the feed of `skills`: archives are built once per record to learn their digest (`SKILL.md`'s digest is the
 * index's own).
 *
 * @param skills the served skills (of one view), in `skills/list` order.
 * @throws StaleFileError when a file changed since the snapshot `skills` come from.
 */
export async function buildFeed(skills: readonly SkillRecord[], read: FileBytes): Promise<Feed> {
  const { artifacts, problems } = planFeed(skills);
  const entries: DiscoveryEntry[] = [];
  const byFile = new Map<string, { artifact: PlannedArtifact; digest: string }>();
  for (const artifact of artifacts) {
    const { skill } = artifact;
    let digest =
      artifact.type === 'skill-md'
        ? digestOf(findChild(skill.node, 'SKILL.md') as FileNode)
        : archiveDigests.get(skill);
    if (digest === undefined) {
      digest = sha256(await artifactBytes(artifact, read));
      archiveDigests.set(skill, digest);
    }
    entries.push({ name: skill.name, type: artifact.type, description: skill.description, url: artifact.file, digest });
    byFile.set(artifact.file, { artifact, digest });
  }
  return { index: discoveryIndexText(entries).text, artifacts: byFile, problems };
}
