/**
 * The pure core of the surfaces for hosts without the Skills extension (`--compat`; wired by `surfaces.ts`): the
 * instructions, and which skill or file a tool call names in one snapshot. The catalog in `read_skill`'s description
 * and the prompt names are `hosts/catalog.ts`'s (`check --hosts` measures them too).
 * Nothing here reads the disk or knows the SDK's server classes.
 */

import { READ_SKILL_SUMMARY } from '../../hosts/catalog.js';
import { STRICTEST_TOOL_RESULT_CHARS } from '../../hosts/profiles.js';
import { findDirectory, findFile, listDirectory, type ServedFile } from '../../index/snapshot.js';
import { type DirectoryChild, DirNode, type SkillRecord, type Snapshot } from '../../index/types.js';
import { buildSkillUri, canonicalSkillUri, compareUris, encodeSegment, SKILL_SCHEME } from '../../index/uri.js';

/**
 * The server `instructions`, the same for every connection. They go out with `initialize` / `server/discover`, before
 * a host shows whether it lists skills through the extension, so they hold no catalog (a host that lists the skills
 * itself would show the model each one twice) and name only what every connection is offered. The first sentences
 * carry the way to a skill: some hosts show the model only the start of the text until it searches for the tools.
 */
export const INSTRUCTIONS =
  'Agent Skills for specialised tasks. Before such a task, find a skill with the search_skills tool (a few words from ' +
  'the task) or list_skills, read it with read_skill, and follow its SKILL.md; read the files it names with ' +
  'read_skill_file. Skills your host lists in its own skill list can be loaded from there instead. Your host may show ' +
  'these tools with a prefix (such as mcp__skills__read_skill or skills_read_skill).';

/**
 * `read_skill`'s description where the server cannot know what the host lists itself (a 2026-07-28 request over
 * stateless HTTP): no catalog, which could show the model skills twice.
 */
export const READ_SKILL_WITHOUT_CATALOG = `${READ_SKILL_SUMMARY} Find a skill with search_skills or list_skills.`;

/** Which skill a call names: found, several with that name, or a message saying why none. */
export type SkillLookup =
  { readonly kind: 'found'; readonly skill: SkillRecord } | { readonly kind: 'error'; readonly message: string };

const SEE_LIST = 'Call the list_skills tool to see the available skills.';

/**
 * Resolves a skill named by a tool call.
 *
 * @param snapshot the current snapshot.
 * @param ref `uri` (the skill's `SKILL.md` URI or its directory URI, any spelling) wins over `name` (frontmatter name).
 * @returns `found`, or `error` with a message for the model: unknown name or URI, or, for a name several skills share,
 *   the list of their URIs to choose from.
 */
export function resolveSkill(snapshot: Snapshot, ref: { readonly name?: string; readonly uri?: string }): SkillLookup {
  if (ref.uri !== undefined) {
    const canonical = canonicalSkillUri(ref.uri);
    const skill =
      canonical === undefined
        ? undefined
        : (snapshot.skills.get(canonical) ?? snapshot.skills.get(`${canonical}/SKILL.md`));
    return skill !== undefined
      ? { kind: 'found', skill }
      : { kind: 'error', message: `No served skill has the URI ${ref.uri}. ${SEE_LIST}` };
  }
  if (ref.name === undefined)
    return { kind: 'error', message: "Give the skill's name, or its uri when several skills share a name." };
  const matches = snapshot.ordered.filter((skill) => skill.name === ref.name);
  const [first] = matches;
  if (first === undefined) return { kind: 'error', message: `No served skill is named "${ref.name}". ${SEE_LIST}` };
  if (matches.length === 1) return { kind: 'found', skill: first };
  const uris = matches.map((skill) => `- ${skill.uri}`).join('\n');
  return {
    kind: 'error',
    message: `${matches.length} skills are named "${ref.name}"; call again with the uri of the one you mean:\n${uris}`,
  };
}

/** Which file a call names: a served file, a directory (with its children), or a message saying why none. */
export type FileLookup =
  | { readonly kind: 'file'; readonly file: ServedFile }
  | { readonly kind: 'directory'; readonly uri: string; readonly children: readonly DirectoryChild[] }
  | { readonly kind: 'error'; readonly message: string };

/**
 * Resolves a file named by a tool call.
 *
 * @param snapshot the current snapshot.
 * @param ref `uri` (any spelling of a served file or directory URI) wins; otherwise `skill` (a name, or a skill URI
 *   when names collide; see {@link resolveSkill}) plus `path` relative to that skill's directory (`/`-separated, names
 *   as on disk or percent-encoded; empty and `.` segments are ignored, `..` is refused).
 * @returns `file`, `directory`, or `error` with a message for the model.
 */
export function resolveFile(
  snapshot: Snapshot,
  ref: { readonly uri?: string; readonly skill?: string; readonly path?: string },
): FileLookup {
  if (ref.uri !== undefined) return lookupUri(snapshot, canonicalSkillUri(ref.uri), ref.uri);
  if (ref.skill === undefined || ref.path === undefined) {
    return {
      kind: 'error',
      message: "Give the file's uri, or skill (its name or uri) and path (relative to the skill's directory).",
    };
  }
  const found = resolveSkill(snapshot, ref.skill.startsWith(SKILL_SCHEME) ? { uri: ref.skill } : { name: ref.skill });
  if (found.kind === 'error') return found;
  const segments = ref.path.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..'))
    return { kind: 'error', message: `path "${ref.path}" must stay inside the skill: ".." is not allowed.` };
  const { skill } = found;
  if (segments.length === 0) return lookupUri(snapshot, skill.rootUri, skill.rootUri);
  let canonical: string | undefined;
  try {
    canonical = buildSkillUri([...skill.segments, ...segments]);
  } catch {
    canonical = undefined;
  }
  if (
    canonical === undefined ||
    (findFile(snapshot, canonical) === undefined && findDirectory(snapshot, canonical) === undefined)
  ) {
    canonical = canonicalSkillUri(`${skill.rootUri}/${segments.join('/')}`) ?? canonical; // a percent-encoded path
  }
  const lookup = lookupUri(snapshot, canonical, `${skill.rootUri}/${segments.join('/')}`);
  if (lookup.kind !== 'error') return lookup;
  return { kind: 'error', message: `The skill at ${skill.uri} has no file "${ref.path}". ${filesHint(skill)}` };
}

function lookupUri(snapshot: Snapshot, canonical: string | undefined, asGiven: string): FileLookup {
  const file = canonical === undefined ? undefined : findFile(snapshot, canonical);
  if (file !== undefined) return { kind: 'file', file };
  const directory = canonical === undefined ? undefined : findDirectory(snapshot, canonical);
  if (directory !== undefined) return { kind: 'directory', uri: directory.uri, children: listDirectory(directory) };
  return { kind: 'error', message: `No served file has the URI ${asGiven}. Call read_skill to see a skill's files.` };
}

/** Most files {@link skillFilesText} lists. */
export const MAX_LISTED_FILES = 100;

/** The paths of a skill's files relative to its directory, decoded (`references/policy.md`), `SKILL.md` left out. */
export function relativeFilePaths(skill: SkillRecord): string[] {
  const paths: { rel: string; uri: string }[] = [];
  const visit = (node: DirNode, rel: string, uri: string): void => {
    for (const child of node.children) {
      const childRel = rel === '' ? child.name : `${rel}/${child.name}`;
      const childUri = `${uri}/${encodeSegment(child.name)}`;
      if (child instanceof DirNode) visit(child, childRel, childUri);
      else if (childRel !== 'SKILL.md') paths.push({ rel: childRel, uri: childUri });
    }
  };
  visit(skill.node, '', skill.rootUri);
  return paths.sort((a, b) => compareUris(a.uri, b.uri)).map((item) => item.rel);
}

/**
 * What `read_skill` says before the `SKILL.md` text (hosts that cut long results keep the start): the skill's URI, its
 * other files (at most {@link MAX_LISTED_FILES}) so that the model can read them with `read_skill_file`, and, for a
 * `SKILL.md` longer than {@link STRICTEST_TOOL_RESULT_CHARS}, how to read it in parts.
 *
 * @param manifestChars length of the `SKILL.md` text that follows (UTF-16 code units).
 */
export function skillFilesText(skill: SkillRecord, manifestChars: number): string {
  const paths = relativeFilePaths(skill);
  const long =
    manifestChars <= STRICTEST_TOOL_RESULT_CHARS
      ? ''
      : ` Its SKILL.md (${manifestChars} characters) follows; if you see only part of it, read the rest with read_skill_file (uri ${skill.uri}, offset and length in characters).`;
  const head = `Skill "${skill.name}" at ${skill.uri}.${long}`;
  if (paths.length === 0) return `${head} It has no other files.`;
  const shown = paths.slice(0, MAX_LISTED_FILES).map((rel) => `- ${rel}`);
  if (paths.length > MAX_LISTED_FILES)
    shown.push(`- … ${paths.length - MAX_LISTED_FILES} more (read_skill_file on a directory lists it)`);
  return `${head} Its other files, relative to ${skill.rootUri}/ (read one with read_skill_file: uri, or skill and path):\n${shown.join('\n')}`;
}

/** The listing `read_skill_file` returns for a directory: one child per line, directories with a trailing `/`. */
export function directoryText(uri: string, children: readonly DirectoryChild[]): string {
  const lines = children.map((child) => `- ${child.name}${child.size === undefined ? '/' : ''}`);
  return `${uri} is a directory. Its entries (read one with read_skill_file):\n${lines.join('\n')}`;
}

function filesHint(skill: SkillRecord): string {
  const paths = relativeFilePaths(skill);
  if (paths.length === 0) return 'It has no files besides SKILL.md.';
  const shown = paths.slice(0, 20).join(', ');
  return `Its files: ${shown}${paths.length > 20 ? `, … (${paths.length - 20} more)` : ''}.`;
}
