/**
 * Turns the problems the SDK's `skillEntry()` reports into diagnostics people can act on: a stable rule id,
 * the line when it can be found, and a fix hint (pure).
 *
 * Implements the Agent Skills frontmatter rules as SEP-2640 "The entry" binds them; the rule checks themselves are
 * the SDK's, so what we refuse is exactly what v2 hosts would refuse.
 */

/** A rule violation found in one `SKILL.md`. */
export interface RuleProblem {
  readonly rule: string;
  readonly message: string;
  readonly hint: string;
  /** 1-based line in `SKILL.md`, when known. */
  readonly line?: number;
  /** 1-based column in that line, when known. */
  readonly column?: number;
}

/** Plain scalars that YAML 1.2 core reads as null, booleans or numbers, not strings. */
export const NOT_A_STRING =
  /^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[+-]?\d+|0o[0-7]+|0x[\dA-Fa-f]+|[+-]?(?:\.\d+|\d+(?:\.\d*)?)(?:[Ee][+-]?\d+)?|[+-]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/u;

/** What a rule's message and hint may say beyond the SDK's words: a measured length, the offending key. */
interface Found {
  /** The rule's key's value, when the frontmatter could be read (the plain reader's result). */
  readonly value?: unknown;
  /** The whole frontmatter, when it could be read. */
  readonly fields?: Readonly<Record<string, unknown>> | undefined;
  /** The offending line's text. */
  readonly lineText?: string | undefined;
}

interface RuleMatcher {
  readonly pattern: RegExp;
  readonly rule: string;
  /** Frontmatter key whose line is reported (found by scanning the YAML), if the message has no line. */
  readonly key?: string;
  readonly hint: (match: RegExpExecArray, found: Found) => string;
  /** What to add to the SDK's message (`: it has 1312 characters`), when something was measured. */
  readonly detail?: (found: Found) => string | undefined;
}

/** Which of `name` and `description` the frontmatter lacks as strings (none when it could not be read). */
function missingFields(fields: Readonly<Record<string, unknown>> | undefined): string[] {
  return fields === undefined ? [] : ['name', 'description'].filter((key) => typeof fields[key] !== 'string');
}

/** Characters as the SDK and the Agent Skills limits count them: code points. */
function characters(text: string): number {
  let count = 0;
  for (let at = 0; at < text.length; at += (text.codePointAt(at) as number) > 0xffff ? 2 : 1) count++;
  return count;
}

/** `: it has N characters` for a string value, else nothing. */
const measured = ({ value }: Found): string | undefined =>
  typeof value === 'string' && value !== '' ? `: it has ${characters(value)}` : undefined;

const MATCHERS: readonly RuleMatcher[] = [
  {
    pattern: /^SKILL\.md frontmatter: line 1: SKILL\.md must begin with a "---" line/u,
    rule: 'frontmatter-missing',
    hint: () => 'start SKILL.md with a "---" line, then "name:" and "description:", then a closing "---" line',
  },
  {
    pattern: /^SKILL\.md frontmatter: frontmatter has no closing "---" line/u,
    rule: 'frontmatter-unclosed',
    hint: () => 'end the frontmatter with a line holding only "---"',
  },
  {
    pattern: /^SKILL\.md frontmatter: line (\d+): (.*)$/su,
    rule: 'frontmatter-syntax',
    hint: (match, { lineText }) => syntaxHint(match[2] ?? '', lineText),
  },
  {
    pattern: /^SKILL\.md frontmatter: (.*)$/su,
    rule: 'frontmatter-syntax',
    hint: () => 'fix the YAML between the "---" lines',
  },
  {
    pattern: /^SKILL\.md is not valid UTF-8/u,
    rule: 'encoding',
    hint: () => 'save SKILL.md as UTF-8',
  },
  {
    pattern: /^SKILL\.md frontmatter must contain string "name" and "description"/u,
    rule: 'required-fields',
    detail: ({ fields }) => {
      const missing = missingFields(fields);
      return missing.length === 0
        ? undefined
        : `: ${missing.map((key) => `"${key}"`).join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not a string`;
    },
    hint: (_match, { fields }) => {
      const missing = missingFields(fields);
      const name = 'add "name:" (the directory name)';
      const description = 'add "description:" (what the skill does and when to use it)';
      if (missing.length === 1) return `${missing[0] === 'name' ? name : description} as a string`;
      return `${name} and "description:" (what the skill does and when to use it) as strings`;
    },
  },
  {
    pattern: /^frontmatter name "(.*)" must be 1-64 lowercase letters, digits and single hyphens/su,
    rule: 'name-format',
    key: 'name',
    hint: () => 'use 1-64 lowercase letters, digits and single hyphens, and name the directory the same',
  },
  {
    pattern: /^frontmatter name "(.*)" must match the last path segment "(.*)"$/su,
    rule: 'name-mismatch',
    key: 'name',
    hint: (match) => `set "name: ${match[2] ?? ''}" or rename the directory to "${match[1] ?? ''}"`,
  },
  {
    pattern: /^frontmatter description must be 1-1024 characters/u,
    rule: 'description-length',
    key: 'description',
    detail: measured,
    hint: (_match, { value, lineText }) =>
      value === '' || /^\s*["']?description["']?\s*:\s*(?:""|'')\s*$/u.test(lineText ?? '')
        ? 'add a description: what the skill does and when to use it (1-1024 characters)'
        : `shorten the description${typeof value === 'string' ? ` by ${characters(value) - 1024} characters` : ''} to at most 1024; move details into the SKILL.md body`,
  },
  {
    pattern: /^frontmatter description must not be blank/u,
    rule: 'description-blank',
    key: 'description',
    hint: () => 'say what the skill does and when to use it: a description of only whitespace describes nothing',
  },
  {
    pattern: /^frontmatter compatibility must be a string of 1-500 characters/u,
    rule: 'compatibility-length',
    key: 'compatibility',
    detail: measured,
    hint: (_match, { value }) =>
      typeof value === 'string' && value !== ''
        ? `shorten compatibility by ${characters(value) - 500} characters to at most 500`
        : 'write compatibility as one string of at most 500 characters',
  },
  {
    pattern: /^frontmatter metadata must map strings to strings/u,
    rule: 'metadata-values',
    key: 'metadata',
    hint: () => 'give every metadata key a string value (quote numbers; join lists into one string)',
  },
];

/** The SDK's complaint about a plain value holding `: `. */
const UNQUOTED_COLON = /cannot contain ": "/u;

function syntaxHint(detail: string, lineText: string | undefined): string {
  const key = /^\s*["']?([\w-]+)["']?\s*:/u.exec(lineText ?? '')?.[1];
  if (UNQUOTED_COLON.test(detail))
    return `quote the ${key ?? 'value'}: it contains ": " (wrap the value in single quotes and double any single quote inside it)`;
  if (/duplicate/iu.test(detail)) return 'remove the repeated key';
  if (/indent|tab/iu.test(detail)) return 'indent with spaces, consistently';
  return 'fix the YAML on that line (quote values that contain ":", "#" or start with a special character)';
}

/**
 * Classifies one problem message from `skillEntry()` (a `SkillCatalogError` problem).
 *
 * @param message the SDK's message, e.g. `frontmatter description must be 1-1024 characters`.
 * @param skillMd the `SKILL.md` text (for finding the line of the offending key), or `undefined` if not UTF-8.
 * @param fields the frontmatter, when it could be read (for a measured length: `…: it has 1312`).
 * @returns the rule, message, hint, and line (and column) when known: for `metadata-values` the line of the first
 *   metadata key whose value is not a string, named in the message.
 */
export function classifyProblem(
  message: string,
  skillMd: string | undefined,
  fields?: Readonly<Record<string, unknown>>,
): RuleProblem {
  for (const matcher of MATCHERS) {
    const match = matcher.pattern.exec(message);
    if (match === null) continue;
    if (matcher.rule === 'metadata-values') {
      const offending = findNonStringMetadata(skillMd);
      const [first] = offending;
      if (first !== undefined)
        return {
          rule: matcher.rule,
          message: `${message}: ${offending.map(({ key, kind }) => `"${key}" is ${kind}`).join(', ')}`,
          hint: offending.map(({ fix }) => fix).join('; '),
          line: first.line,
          column: first.column,
        };
    }
    const stated = /line (\d+): /u.exec(message)?.[1];
    const line = stated === undefined ? findKeyLine(skillMd, matcher.key) : Number(stated);
    const lineText = line === undefined ? undefined : linesOf(skillMd)[line - 1];
    const column = columnOf(matcher.rule, message, lineText);
    const found: Found = {
      fields,
      lineText,
      ...(matcher.key !== undefined && fields !== undefined ? { value: fields[matcher.key] } : {}),
    };
    return {
      rule: matcher.rule,
      message: message + (matcher.detail?.(found) ?? ''),
      hint: matcher.hint(match, found),
      ...(line === undefined ? {} : { line }),
      ...(column === undefined ? {} : { column }),
    };
  }
  return { rule: 'entry-invalid', message, hint: 'fix SKILL.md so that it follows the Agent Skills specification' };
}

/**
 * The keys of the frontmatter's `metadata` block whose values YAML does not read as strings, found in the text (the
 * SDK says only that one is not), so an author fixes them all in one pass.
 *
 * @returns in order, each key, what its value is (`a number`, `a boolean`, `null`, `a list`, `a mapping`, `empty`),
 *   the fix, and its 1-based line and column; none when the block cannot be read line by line (flow style).
 */
function findNonStringMetadata(
  skillMd: string | undefined,
): { key: string; kind: string; fix: string; line: number; column: number }[] {
  const found: { key: string; kind: string; fix: string; line: number; column: number }[] = [];
  const start = findKeyLine(skillMd, 'metadata');
  if (start === undefined) return found;
  const lines = linesOf(skillMd);
  let indent: number | undefined;
  for (let index = start; index < lines.length; index++) {
    const text = lines[index] as string;
    if (/^---[\t ]*$/u.test(text) || /^\S/u.test(text)) break;
    if (text.trim() === '' || text.trimStart().startsWith('#')) continue;
    const width = text.length - text.trimStart().length;
    indent ??= width;
    if (width !== indent) continue;
    const entry = /^(["']?)([^"':]+)\1\s*:(?:\s+(.*))?$/u.exec(text.trimStart());
    if (entry === null) continue;
    const key = entry[2] as string;
    const raw = (entry[3] ?? '').replace(/\s+#.*$/u, '').trim();
    const kind =
      raw === ''
        ? /^\s*-/u.test(lines[index + 1] ?? '')
          ? 'a list'
          : new RegExp(`^ {${width + 1},}\\S`, 'u').test(lines[index + 1] ?? '')
            ? 'a mapping'
            : 'empty'
        : raw.startsWith('[')
          ? 'a list'
          : raw.startsWith('{')
            ? 'a mapping'
            : NOT_A_STRING.test(raw)
              ? /^(?:~|null|Null|NULL)$/u.test(raw)
                ? 'null'
                : /^(?:true|True|TRUE|false|False|FALSE)$/u.test(raw)
                  ? 'a boolean'
                  : 'a number'
              : undefined;
    if (kind === undefined) continue;
    const fix =
      kind === 'a list' || kind === 'a mapping'
        ? `make "${key}" one string: join its items (metadata maps strings to strings)`
        : kind === 'empty' || kind === 'null'
          ? `give "${key}" a string value, or remove it`
          : `quote the value: ${key}: "${raw}"`;
    found.push({ key, kind, fix, line: index + 1, column: width + 1 });
  }
  return found;
}

function linesOf(skillMd: string | undefined): string[] {
  return skillMd === undefined ? [] : skillMd.replace(/^\uFEFF/u, '').split(/\r?\n/u);
}

/** Column of the problem in its line: the `: ` a plain value may not hold, or 1 for a key's line. */
function columnOf(rule: string, message: string, lineText: string | undefined): number | undefined {
  if (lineText === undefined) return undefined;
  if (rule !== 'frontmatter-syntax') return 1;
  if (!UNQUOTED_COLON.test(message)) return undefined;
  const valueStart = lineText.indexOf(':') + 1;
  const inner = lineText.indexOf(': ', valueStart);
  return inner === -1 ? undefined : inner + 1;
}

/**
 * 1-based line of a top-level frontmatter key (`description:`), scanning the frontmatter block only.
 *
 * @returns the line number in `SKILL.md`, or `undefined` when the key is not found or there is no frontmatter.
 */
export function findKeyLine(skillMd: string | undefined, key: string | undefined): number | undefined {
  if (skillMd === undefined || key === undefined) return undefined;
  const lines = linesOf(skillMd);
  if (lines[0]?.trimEnd() !== '---') return undefined;
  for (let index = 1; index < lines.length; index++) {
    const text = lines[index] ?? '';
    if (/^---[\t ]*$/u.test(text)) return undefined;
    if (text.startsWith(`${key}:`) || text.startsWith(`"${key}":`) || text.startsWith(`'${key}':`)) return index + 1;
  }
  return undefined;
}
