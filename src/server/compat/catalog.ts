/**
 * The pure core of the surfaces for hosts without the Skills extension (`--compat`; wired by `surfaces.ts`): the
 * instructions, the catalog in `read_skill`'s description, one prompt name per skill, and which skill or file a tool
 * call names in one snapshot.
 * Nothing here reads the disk or knows the SDK's server classes.
 */

import { STRICTEST_TOOL_RESULT_CHARS } from '../../hosts/profiles.js';
import { findDirectory, findFile, listDirectory, type ServedFile } from '../../index/snapshot.js';
import { type DirectoryChild, DirNode, type SkillRecord, type Snapshot } from '../../index/types.js';
import { buildSkillUri, canonicalSkillUri, compareUris, encodeSegment, SKILL_SCHEME } from '../../index/uri.js';

/** What a catalog line shows of a skill (a {@link SkillRecord} is one). */
export interface NamedSkill {
  readonly name: string;
  readonly description: string;
  readonly uri: string;
}

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

/** What `read_skill` does, before its catalog. */
export const READ_SKILL_SUMMARY =
  "Returns a skill's SKILL.md (its instructions) and the list of its other files. Name the skill by name, or by uri " +
  'when several skills share a name.';

/**
 * `read_skill`'s description where the server cannot know what the host lists itself (a 2026-07-28 request over
 * stateless HTTP): no catalog, which could show the model skills twice.
 */
export const READ_SKILL_WITHOUT_CATALOG = `${READ_SKILL_SUMMARY} Find a skill with search_skills or list_skills.`;

/** The catalog heading in `read_skill`'s description, followed by one line per skill. */
export const CATALOG_HEADING = 'Skills (name: description):';

/**
 * One catalog line: `- refunds: Process refunds …` (whitespace collapsed), with the `SKILL.md` URI after the name when
 * another skill has the same name (`read_skill` needs the URI then).
 */
export function catalogLine(skill: NamedSkill, shared: boolean): string {
  return `- ${skill.name}${shared ? ` (${skill.uri})` : ''}: ${collapseWhitespace(skill.description)}`;
}

/**
 * The description of `read_skill` for one connection: {@link READ_SKILL_SUMMARY}, then a catalog of the skills this
 * connection's host has not listed itself, in `skills/list` order, as many whole lines as fit, then how to find the
 * rest. Tool descriptions, unlike instructions, can be changed for a connection (`notifications/tools/list_changed`),
 * so the catalog follows what the host lists.
 *
 * @param unlisted the skills to name (all served skills for a host without the extension).
 * @param listedElsewhere how many served skills the host lists itself (through the extension).
 * @param maxChars bound of the whole text in UTF-16 code units (`--catalog-max`, at least 1,024).
 * @param shared whether a name is shared by several served skills (their lines carry the URI `read_skill` needs);
 *   default: shared among `unlisted`.
 * @returns the description; never longer than `maxChars`.
 */
export function readSkillDescription(
  unlisted: readonly NamedSkill[],
  listedElsewhere: number,
  maxChars: number,
  shared: (name: string) => boolean = sharedAmong(unlisted),
): string {
  const elsewhere =
    listedElsewhere === 0
      ? ''
      : ` The other ${listedElsewhere} skill${listedElsewhere === 1 ? ' is' : 's are'} in your host's own skill list (this tool reads them too).`;
  if (unlisted.length === 0)
    return listedElsewhere === 0
      ? `${READ_SKILL_SUMMARY} No skills are served right now.`
      : `${READ_SKILL_SUMMARY} Every skill of this server is in your host's own skill list; this tool reads them too.`;
  const lines = unlisted.map((skill) => catalogLine(skill, shared(skill.name)));
  const tail = (shown: number): string =>
    shown === unlisted.length
      ? elsewhere
      : ` ${unlisted.length - shown} more: find them with search_skills or list_skills.${elsewhere}`;
  const text = (shown: number): string =>
    `${READ_SKILL_SUMMARY}${tail(shown)}\n\n${[CATALOG_HEADING, ...lines.slice(0, shown)].join('\n')}`;
  const whole = text(lines.length);
  if (whole.length <= maxChars) return whole;
  // Showing no line gives the longest tail (its count is the largest): what is left is room for whole lines.
  let room = maxChars - text(0).length;
  let shown = 0;
  while (shown < lines.length && room >= 1 + (lines[shown] as string).length) {
    room -= 1 + (lines[shown] as string).length;
    shown++;
  }
  return shown === 0 ? `${READ_SKILL_SUMMARY}${tail(0)}` : text(shown);
}

/** Whether a name is shared by several of `skills`. */
export function sharedAmong(skills: readonly NamedSkill[]): (name: string) => boolean {
  const counts = new Map<string, number>();
  for (const skill of skills) counts.set(skill.name, (counts.get(skill.name) ?? 0) + 1);
  return (name) => (counts.get(name) ?? 0) > 1;
}

/** Every run of whitespace (newlines of block scalars included) as one space, trimmed. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

/** One prompt per served skill. */
export interface PromptSlot {
  readonly name: string;
  readonly skill: SkillRecord;
}

/**
 * Prompt names for `skills` (in their order, which is kept). A skill whose frontmatter name no other served skill
 * shares gets that name. Skills sharing a name get their skill path with `/` turned into `-` (`acme/billing/refunds`
 * → `acme-billing-refunds`; characters outside `[A-Za-z0-9_.-]` become `-`). A name still taken, by a unique skill
 * name or an earlier derived name, gets `-2`, `-3`, … (first free one, in `skills` order). Deterministic for a given
 * catalog; unique names never change when another skill appears, shared ones may.
 *
 * @returns one slot per skill, names unique.
 */
export function assignPromptNames(skills: readonly SkillRecord[]): PromptSlot[] {
  const counts = new Map<string, number>();
  for (const skill of skills) counts.set(skill.name, (counts.get(skill.name) ?? 0) + 1);
  const taken = new Set(skills.filter((skill) => counts.get(skill.name) === 1).map((skill) => skill.name));
  return skills.map((skill) => {
    if (counts.get(skill.name) === 1) return { name: skill.name, skill };
    const base = skill.segments.join('-').replace(/[^\w.-]+/gu, '-');
    let name = base;
    for (let suffix = 2; taken.has(name); suffix++) name = `${base}-${suffix}`;
    taken.add(name);
    return { name, skill };
  });
}

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
