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

interface RuleMatcher {
  readonly pattern: RegExp;
  readonly rule: string;
  /** Frontmatter key whose line is reported (found by scanning the YAML), if the message has no line. */
  readonly key?: string;
  readonly hint: (match: RegExpExecArray, lineText: string | undefined) => string;
}

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
    hint: (match, lineText) => syntaxHint(match[2] ?? '', lineText),
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
    hint: () =>
      'add "name:" (the directory name) and "description:" (what the skill does and when to use it) as strings',
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
    hint: (_match, lineText) =>
      /^\s*["']?description["']?\s*:\s*(?:""|'')\s*$/u.test(lineText ?? '')
        ? 'add a description: what the skill does and when to use it (1-1024 characters)'
        : 'shorten the description to at most 1024 characters; move details into the SKILL.md body',
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
    hint: () => 'write compatibility as one string of at most 500 characters',
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
 * @returns the rule, message, hint, and line when known.
 */
export function classifyProblem(message: string, skillMd: string | undefined): RuleProblem {
  for (const matcher of MATCHERS) {
    const match = matcher.pattern.exec(message);
    if (match === null) continue;
    const stated = /line (\d+): /u.exec(message)?.[1];
    const line = stated === undefined ? findKeyLine(skillMd, matcher.key) : Number(stated);
    const lineText = line === undefined ? undefined : linesOf(skillMd)[line - 1];
    const column = columnOf(matcher.rule, message, lineText);
    return {
      rule: matcher.rule,
      message,
      hint: matcher.hint(match, lineText),
      ...(line === undefined ? {} : { line }),
      ...(column === undefined ? {} : { column }),
    };
  }
  return { rule: 'entry-invalid', message, hint: 'fix SKILL.md so that it follows the Agent Skills specification' };
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
