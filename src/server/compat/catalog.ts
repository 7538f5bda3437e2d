/**
 * The pure core of the surfaces for hosts without the Skills extension (`--compat`; wired by `compat.ts`): the
 * instructions catalog, one prompt name per skill, and which skill or file a tool call names in one snapshot.
 * Nothing here reads the disk or knows the SDK's server classes.
 */

import { findDirectory, findFile, listDirectory, type ServedFile } from '../../index/snapshot.js';
import { type DirectoryChild, DirNode, type SkillRecord, type Snapshot } from '../../index/types.js';
import { buildSkillUri, canonicalSkillUri, compareUris, encodeSegment, SKILL_SCHEME } from '../../index/uri.js';

/** What the instructions catalog shows of a skill (a {@link SkillRecord} is one). */
export interface NamedSkill {
  readonly name: string;
  readonly description: string;
  readonly uri: string;
}

const INTRO =
  'This server provides Agent Skills: folders of instructions, scripts and reference files for specialised tasks. ' +
  "When a task matches a skill's description, read that skill's SKILL.md first (the read_skill tool, or the resource at its " +
  'skill:// URI) and follow it; read the other files it mentions only when you need them (the read_skill_file tool).';

/** The catalog heading, followed by one `- name (uri): description` line per skill. */
export const INSTRUCTIONS_HEADING = 'Available skills (name (SKILL.md URI): description):';

/** The line that replaces the catalog when the first index build had not finished when the session started. */
export const INSTRUCTIONS_PENDING =
  'The skill catalog was still being indexed when this session started: call the search_skills tool with a few words from the task, or the list_skills tool, to find the skills.';

/** The line that replaces the catalog when no skill is served. */
export const INSTRUCTIONS_EMPTY = 'No skills are served right now; call the list_skills tool later to check again.';

/**
 * The pointer to the tools, placed right after the introduction (hosts cut long instructions at the end, so it
 * survives any cut that leaves the introduction).
 *
 * @param listed skills listed below it.
 * @param total skills served.
 */
export function instructionsPointer(listed: number, total: number): string {
  if (listed === total)
    return `All ${total} skill${total === 1 ? ' is' : 's are'} listed below; the list_skills tool returns the same catalog.`;
  return (
    `${listed} of the ${total} skills are listed below (to keep these instructions short). To find the others, call the ` +
    'search_skills tool with a few words from the task, or the list_skills tool for the full catalog.'
  );
}

/** One catalog line: `- refunds (skill://acme/billing/refunds/SKILL.md): Process refunds …` (whitespace collapsed). */
export function instructionsLine(skill: NamedSkill): string {
  return `- ${skill.name} (${skill.uri}): ${collapseWhitespace(skill.description)}`;
}

/**
 * The server `instructions`: what skills are and how to load one, the pointer to the tools
 * ({@link instructionsPointer}), then a compact catalog in `skills` order, as many whole lines as fit.
 *
 * @param skills the served skills (`snapshot.ordered`), or `undefined` while the first build is still running.
 * @param maxChars bound of the whole text in UTF-16 code units (`--instructions-max`, at least 1,024: the
 *   introduction and the pointer always fit). The first lines of the catalog that fit are kept; the pointer says how
 *   many are listed and, when not all, points to `search_skills` and `list_skills`.
 * @returns paragraphs joined with `\n\n`, catalog lines with `\n`; never longer than `maxChars`.
 */
export function buildInstructions(skills: readonly NamedSkill[] | undefined, maxChars: number): string {
  if (skills === undefined) return `${INTRO}\n\n${INSTRUCTIONS_PENDING}`;
  if (skills.length === 0) return `${INTRO}\n\n${INSTRUCTIONS_EMPTY}`;
  const lines = skills.map(instructionsLine);
  const text = (listed: number): string =>
    `${INTRO}\n\n${instructionsPointer(listed, skills.length)}\n\n${[INSTRUCTIONS_HEADING, ...lines.slice(0, listed)].join('\n')}`;
  const whole = text(lines.length);
  if (whole.length <= maxChars) return whole;
  // The pointer's length depends on the count it shows: reserve room for the longest one, then fill with whole lines.
  let room = maxChars - text(0).length - (String(skills.length).length - 1);
  let listed = 0;
  while (listed < lines.length && room >= 1 + (lines[listed] as string).length) {
    room -= 1 + (lines[listed] as string).length;
    listed++;
  }
  if (listed === 0) return `${INTRO}\n\n${instructionsPointer(0, skills.length)}`;
  return text(listed);
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
 * What `read_skill` says after the `SKILL.md` text: the skill's URI and its other files (at most
 * {@link MAX_LISTED_FILES}), so that the model can read them with `read_skill_file`.
 */
export function skillFilesText(skill: SkillRecord): string {
  const paths = relativeFilePaths(skill);
  const head = `Skill "${skill.name}" at ${skill.uri}.`;
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
