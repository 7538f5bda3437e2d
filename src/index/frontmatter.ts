/**
 * Reading a `SKILL.md`'s frontmatter: verbatim as JSON, checked against the Agent Skills rules (SEP-2640 "The entry":
 * `frontmatter`; AGENT-SKILLS-FORMAT "Frontmatter").
 *
 * Hosts verify what we publish with the SDK's parser, so the SDK's `skillEntry()` is the reference. It also hashes the
 * file with WebCrypto (a result we throw away: ~0.25 s of CPU at 10,000 skills), so the common, plain shape of
 * frontmatter is read here instead, by {@link readPlainFrontmatter}: top-level `key: value` lines whose values are
 * one-line plain or quoted strings, `|`/`>` block scalars, and a `metadata:` map of such strings. Anything else (other
 * types, sequences, flow collections, comments, escapes, multi-line plain values, any rule violation) is handed to
 * `skillEntry()`, which gives the exact result and the exact problem messages. `test/unit/frontmatter.test.ts` proves
 * both paths give the same result on every skill of the shared corpus and on generated frontmatter.
 */
import { SkillCatalogError, skillEntry } from '@modelcontextprotocol/server/ext/skills';

import { decodeLossless } from './mime.js';
import { classifyProblem, NOT_A_STRING, type RuleProblem } from './rules.js';

/** The fields of a valid frontmatter that the server also needs. */
export interface ReadFrontmatter {
  readonly frontmatter: Record<string, unknown>;
  readonly name: string;
  readonly description: string;
  /** The `# …` heading lines of the body (ATX headings outside fenced code), `\n`-joined. */
  readonly headings: string;
}

/** Agent Skills name rule: 1-64 lowercase letters, digits and single hyphens. */
const NAME_PATTERN = /^[\da-z]+(?:-[\da-z]+)*$/u;
/** Skill-path segments the plain reader takes as they are; others go to `skillEntry()`, which checks them. */
const PLAIN_SEGMENT = /^[\w.~-]+$/u;

/**
 * Reads and checks the frontmatter of one skill.
 *
 * @param segments the skill path (its last segment must equal the frontmatter `name`).
 * @param bytes the raw `SKILL.md`.
 * @param text `bytes` decoded as UTF-8 (`undefined`: not UTF-8), when the caller has already decoded them.
 * @returns the frontmatter and its `name`/`description`, or the rule problems (each with a stable rule id, the line
 *   when known and a fix hint) that keep the skill from being published.
 * @throws only on a bug (an SDK failure that is not a rule problem).
 */
export async function readFrontmatter(
  segments: readonly string[],
  bytes: Uint8Array,
  text: string | undefined = decodeLossless(bytes),
): Promise<ReadFrontmatter | { readonly problems: readonly RuleProblem[] }> {
  const split = text === undefined ? undefined : splitSkillMd(text);
  const plain =
    split === undefined || !segments.every((segment) => PLAIN_SEGMENT.test(segment))
      ? undefined
      : readPlainFrontmatter(split.yaml);
  if (split !== undefined && plain !== undefined && followsRules(plain, segments.at(-1) ?? '')) {
    return notBlank(
      {
        frontmatter: plain,
        name: plain['name'] as string,
        description: plain['description'] as string,
        headings: headingsOf(split.body),
      },
      text,
    );
  }
  try {
    const { frontmatter } = await skillEntry(segments.join('/'), { 'SKILL.md': bytes });
    const body = split?.body ?? '';
    return notBlank(
      { frontmatter, name: frontmatter.name, description: frontmatter.description, headings: headingsOf(body) },
      text,
    );
  } catch (error) {
    if (!SkillCatalogError.isInstance(error)) throw error;
    return { problems: error.problems.map((problem) => classifyProblem(problem.message, text, plain)) };
  }
}

/** White space only, as JavaScript and .NET (which also counts U+0085 NEXT LINE) both read it. */
const BLANK = /^[\s\u0085]*$/u;

/** Message of the `description-blank` rule (`rules.ts`). */
export const BLANK_DESCRIPTION = 'frontmatter description must not be blank';

/**
 * A description of whitespace only describes nothing: the SDK accepts it (it refuses only the empty string), but no
 * host can show it, and Microsoft Agent Framework refuses the whole server for one such entry
 * (docs/hosts/agent-framework.md).
 */
function notBlank(
  read: ReadFrontmatter,
  text: string | undefined,
): ReadFrontmatter | { readonly problems: readonly RuleProblem[] } {
  return BLANK.test(read.description) ? { problems: [classifyProblem(BLANK_DESCRIPTION, text)] } : read;
}

/**
 * Splits `SKILL.md` into its frontmatter YAML and markdown body, as hosts do: CRLF read as LF, a leading BOM dropped,
 * a first line `---`, and the first later line that is `---` (trailing spaces or tabs allowed) closing the block.
 *
 * @returns the YAML (with the newline that ends its last line) and the body, or `undefined` without frontmatter.
 */
export function splitSkillMd(markdown: string): { yaml: string; body: string } | undefined {
  let text = markdown.includes('\r\n') ? markdown.replaceAll('\r\n', '\n') : markdown;
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (!text.startsWith('---\n')) return undefined;
  const rest = text.slice(4);
  const close = /^---[\t ]*$/mu.exec(rest);
  if (close === null) return undefined;
  let body = rest.slice(close.index + close[0].length);
  if (body.startsWith('\n')) body = body.slice(1);
  return { yaml: rest.slice(0, close.index), body };
}

/** A top-level or `metadata` key the plain reader accepts. */
const PLAIN_KEY = /^[A-Za-z_][\w-]*$/u;
/** Characters that give a plain scalar's first character a YAML meaning. */
const INDICATORS = new Set([...'-?:,[]{}#&*!|>\'"%@`']);

/**
 * Reads frontmatter YAML of the plain shape (see the module comment), or gives up.
 *
 * @param yaml the text between the `---` lines.
 * @returns the mapping, or `undefined` when the YAML holds anything outside the plain shape.
 */
export function readPlainFrontmatter(yaml: string): Record<string, unknown> | undefined {
  const lines = yaml.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const result: Record<string, unknown> = {};
  let index = 0;
  while (index < lines.length) {
    const line = lines[index] as string;
    const pair = keyAndRest(line);
    if (pair === undefined || Object.hasOwn(result, pair.key) || pair.key === '__proto__') return undefined;
    index++;
    if (pair.rest === '') {
      if (pair.key !== 'metadata') return undefined;
      const map: Record<string, string> = {};
      let indent = -1;
      while (
        index < lines.length &&
        /^ +[^\s]/u.test(lines[index] as string) &&
        !OTHER_SPACE.test(lines[index] as string)
      ) {
        const inner = lines[index] as string;
        const width = leadingSpaces(inner);
        if (indent === -1) indent = width;
        const entry = width === indent ? keyAndRest(inner.slice(width)) : undefined;
        if (entry === undefined || entry.rest === '' || Object.hasOwn(map, entry.key) || entry.key === '__proto__')
          return undefined;
        const value = oneLineString(entry.rest);
        if (value === undefined) return undefined;
        map[entry.key] = value;
        index++;
      }
      if (indent === -1) return undefined;
      result[pair.key] = map;
      continue;
    }
    const header = /^([>|])([+-]?)$/u.exec(pair.rest);
    if (header !== null) {
      const block = blockScalar(lines, index, header[1] === '>', header[2] as '' | '+' | '-');
      if (block === undefined) return undefined;
      result[pair.key] = block.value;
      index = block.next;
      continue;
    }
    const value = oneLineString(pair.rest);
    // A following indented line would continue a plain value over several lines: left to the SDK.
    if (value === undefined || (index < lines.length && /^[\t ]/u.test(lines[index] as string))) return undefined;
    result[pair.key] = value;
  }
  return result;
}

/** `key: rest` with a plain key at the start of the line, or `undefined`. */
function keyAndRest(line: string): { key: string; rest: string } | undefined {
  // YAML's white space is space and tab; any other white space or control character is left to the SDK.
  if (OTHER_SPACE.test(line)) return undefined;
  const colon = line.indexOf(':');
  if (colon <= 0) return undefined;
  const key = line.slice(0, colon);
  const after = line.slice(colon + 1);
  if (!PLAIN_KEY.test(key) || NOT_A_STRING.test(key) || (after !== '' && !after.startsWith(' '))) return undefined;
  return after.includes('\t') ? undefined : { key, rest: trimSpaces(after) };
}

/** White space other than space and tab, and control characters other than tab. */
// eslint-disable-next-line no-control-regex -- control characters are what this matches
const OTHER_SPACE = /[^\S \t]|[\u0000-\u0008\u000e-\u001f\u007f-\u009f\u200b\ufeff]/u;

/** `text` without leading and trailing spaces and tabs (YAML's white space), nothing else. */
function trimSpaces(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && (text[start] === ' ' || text[start] === '\t')) start++;
  while (end > start && (text[end - 1] === ' ' || text[end - 1] === '\t')) end--;
  return text.slice(start, end);
}

/**
 * A one-line value that is certainly a string: plain (no comment, no `: `, not typed by YAML 1.2 core) or quoted
 * (single quotes with `''` escapes; double quotes without backslashes), or `undefined`.
 */
function oneLineString(rest: string): string | undefined {
  const first = rest[0];
  if (first === "'") {
    let value = '';
    for (let index = 1; index < rest.length; index++) {
      const char = rest[index];
      if (char !== "'") {
        value += char;
        continue;
      }
      if (rest[index + 1] === "'") {
        value += "'";
        index++;
        continue;
      }
      return trimSpaces(rest.slice(index + 1)) === '' ? value : undefined;
    }
    return undefined;
  }
  if (first === '"') {
    const close = rest.indexOf('"', 1);
    if (close === -1 || rest.includes('\\') || trimSpaces(rest.slice(close + 1)) !== '') return undefined;
    return rest.slice(1, close);
  }
  if (first === undefined || INDICATORS.has(first) || /:(?:[\t ]|$)|[\t ]#|\t/u.test(rest) || NOT_A_STRING.test(rest))
    return undefined;
  return rest;
}

/**
 * A block scalar whose content starts on line `start`: every following line that is empty or indented by at least
 * the first content line's indent (at least 1). Folded (`>`) only when no line is indented further.
 *
 * @returns the value and the index of the first line after it, or `undefined` outside the plain shape.
 */
function blockScalar(
  lines: readonly string[],
  start: number,
  folded: boolean,
  chomp: '' | '+' | '-',
): { value: string; next: number } | undefined {
  let indent = -1;
  const content: string[] = [];
  let index = start;
  for (; index < lines.length; index++) {
    const line = lines[index] as string;
    if (line === '') {
      content.push('');
      continue;
    }
    const width = leadingSpaces(line);
    if (width === 0) break;
    if (/\s/u.test(line[width] ?? '')) return undefined; // a tab, or other white space, after the indent
    if (indent === -1) {
      if (content.length > 0 || width === line.length) return undefined; // leading blank lines: left to the SDK
      indent = width;
    }
    if (width < indent || (folded && width > indent)) return undefined;
    content.push(line.slice(indent));
  }
  if (indent === -1) return undefined;
  let end = content.length;
  while (end > 0 && content[end - 1] === '') end--;
  const kept = content.slice(0, end);
  const trailing = content.length - end;
  let value: string;
  if (folded) {
    value = '';
    for (let at = 0; at < kept.length; at++) {
      const line = kept[at] as string;
      if (at === 0) value = line;
      else if (line === '') value += '\n';
      else value += kept[at - 1] === '' ? line : ` ${line}`;
    }
  } else {
    value = kept.join('\n');
  }
  if (chomp === '+') value += '\n'.repeat(trailing + 1);
  else if (chomp === '') value += '\n';
  return { value, next: index };
}

/** How many spaces (only U+0020 indents YAML) start `line`. */
function leadingSpaces(line: string): number {
  let width = 0;
  while (line.charCodeAt(width) === 0x20) width++;
  return width;
}

/** The Agent Skills rules the SDK checks; any doubt sends the skill to `skillEntry()` for its exact problems. */
function followsRules(frontmatter: Record<string, unknown>, lastSegment: string): boolean {
  const { name, description, compatibility, metadata } = frontmatter;
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)))
    return false;
  if (typeof name !== 'string' || typeof description !== 'string') return false;
  if (name.length > 64 || !NAME_PATTERN.test(name) || name !== lastSegment) return false;
  if (description === '' || [...description].length > 1024) return false;
  if (
    compatibility !== undefined &&
    (typeof compatibility !== 'string' || compatibility === '' || [...compatibility].length > 500)
  ) {
    return false;
  }
  return true;
}

/** Longest `headings` text kept per skill (characters). */
const HEADINGS_MAX_CHARS = 2000;

/**
 * The ATX headings (`#` … `######`) of a markdown body, in order, without their `#` marks, one per line: the outline
 * `search_skills` matches besides the name and description. Lines in fenced code are skipped (a `# comment` in a shell
 * example is not a heading); a fence closes on a line of the same character at least as long (CommonMark); a closing
 * run of `#` counts only after a space (`# Using C#` keeps its `#`). At most {@link HEADINGS_MAX_CHARS} characters.
 */
export function headingsOf(body: string): string {
  const found: string[] = [];
  let length = 0;
  let fence: string | undefined;
  for (const line of body.split(/\r?\n/u)) {
    const marker = /^ {0,3}(`{3,}|~{3,})/u.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === undefined) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    const heading = /^ {0,3}#{1,6}[\t ]+(.*?)(?:[\t ]+#+)?[\t ]*$/u.exec(line)?.[1];
    if (heading === undefined || heading === '') continue;
    if (length + heading.length + 1 > HEADINGS_MAX_CHARS) break;
    found.push(heading);
    length += heading.length + 1;
  }
  return found.join('\n');
}
