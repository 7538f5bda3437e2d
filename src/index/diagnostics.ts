/**
 * Every diagnostic the index makes, with its rule id, in one place (pure). Rule ids are a closed set: `check --json`
 * consumers, log filters and tests match on them, never on message text. Errors leave a skill out; warnings report a
 * file or link that was skipped, or a finding about a skill that is still served; info is for the operator (executable
 * content, skills withheld for it) (docs/ARCHITECTURE.md, "Policies").
 */
import path from 'node:path';

import type { Diagnostic, ExecutableFile } from './types.js';

/** Rules whose diagnostics are errors: the skill is not published. */
export const ERROR_RULES = [
  'frontmatter-missing',
  'frontmatter-unclosed',
  'frontmatter-syntax',
  'encoding',
  'required-fields',
  'name-format',
  'name-mismatch',
  'description-length',
  'description-blank',
  'compatibility-length',
  'metadata-values',
  'entry-invalid',
  'skill-too-many-files',
  'skill-too-large',
  'skill-path-conflict',
] as const;

/** Rules whose diagnostics are warnings: one file or link skipped, or a finding; the skill is still served. */
export const WARNING_RULES = [
  'special-file',
  'unreadable-file',
  'unreadable-directory',
  'unreadable-ignore-file',
  'unrepresentable-name',
  'symlink-skipped',
  'symlink-dangling',
  'symlink-loop',
  'symlink-outside-root',
  'secret-file',
  'hidden-characters',
  'root-unusable',
  'root-empty',
  'duplicate-root',
  'nested-root',
  'link-outside-skill',
  'link-unserved-skill',
  'description-near-duplicate',
] as const;

/**
 * Rules whose diagnostics are information for the operator: the skill is served as it is (or withheld because the
 * operator asked); never a failure, `--strict` included.
 */
export const INFO_RULES = ['executable-content', 'executables-withheld'] as const;

export type ErrorRule = (typeof ERROR_RULES)[number];
export type WarningRule = (typeof WARNING_RULES)[number];
export type InfoRule = (typeof INFO_RULES)[number];
export type RuleId = ErrorRule | WarningRule | InfoRule;

/**
 * A warning diagnostic.
 *
 * @param rule its rule id.
 * @param file absolute host path of the file or directory concerned.
 * @param message what is wrong, one sentence.
 * @param hint how to fix it.
 */
function warning(rule: WarningRule, file: string, message: string, hint: string): Diagnostic {
  return { severity: 'warning', rule, file, message, hint };
}

/** A FIFO, socket or device inside a served tree. */
export function specialFile(file: string): Diagnostic {
  return warning(
    'special-file',
    file,
    'not a regular file (FIFO, socket or device) and was skipped',
    'skills may only contain regular files and directories',
  );
}

/** A file that could not be opened or read (`reason` as given by `describeIoError`). */
export function unreadableFile(file: string, reason: string): Diagnostic {
  return warning(
    'unreadable-file',
    file,
    `file could not be read (${reason}) and was skipped`,
    'make the file readable by the user running skills-serve',
  );
}

/** A directory that could not be listed. */
export function unreadableDirectory(dir: string, reason: string): Diagnostic {
  return warning(
    'unreadable-directory',
    dir,
    `directory could not be listed (${reason})`,
    'make the directory readable by the user running skills-serve',
  );
}

/** A `.skillsignore` that exists but could not be read: its rules are not applied. */
export function unreadableIgnoreFile(file: string, reason: string): Diagnostic {
  return warning(
    'unreadable-ignore-file',
    file,
    `${path.basename(file)} could not be read (${reason}); its rules are not applied`,
    'make it readable',
  );
}

/** A name that is not valid UTF-8 on disk, so it cannot be a URI segment. */
export function unrepresentableName(file: string): Diagnostic {
  return warning(
    'unrepresentable-name',
    file,
    'name is not valid UTF-8 and cannot be served as a URI',
    'rename it using UTF-8',
  );
}

/** A symlink not followed under `--symlinks skip`. */
export function symlinkSkipped(link: string): Diagnostic {
  return warning(
    'symlink-skipped',
    link,
    'symlink was not followed (--symlinks skip)',
    'copy the target into the skill, or serve with --symlinks within',
  );
}

/** A symlink whose target does not exist or cannot be read. */
export function symlinkDangling(link: string, reason: string): Diagnostic {
  return warning('symlink-dangling', link, `symlink target ${reason} and was skipped`, 'fix or remove the link');
}

/** A symlink that resolves to itself or to a directory above it. */
export function symlinkLoop(link: string, toAncestor: boolean): Diagnostic {
  return toAncestor
    ? warning(
        'symlink-loop',
        link,
        'symlink points to a directory that contains it and was not followed',
        'link to a sibling directory or copy the files instead',
      )
    : warning(
        'symlink-loop',
        link,
        'symlink loops back on itself and was skipped',
        'point the link at a real file or directory, or remove it',
      );
}

/**
 * A symlink whose target leaves what it may reach: the served roots, or, inside a skill folder linked into a root,
 * that folder.
 *
 * @param anchor the linked skill folder the link had to stay in, when it is one.
 */
export function symlinkOutside(link: string, anchor?: string): Diagnostic {
  return anchor === undefined
    ? warning(
        'symlink-outside-root',
        link,
        'symlink points outside the served roots and was not followed',
        'copy the target into the skill, serve its folder as another root, or run with --symlinks follow',
      )
    : warning(
        'symlink-outside-root',
        link,
        `symlink points outside the linked skill folder ${anchor} and was not followed`,
        'copy the target into the skill folder, or run with --symlinks follow',
      );
}

/**
 * A file that looks like a secret and is served to every host.
 *
 * @param line the 1-based line where its private key block begins, when it holds one (and it could be read again).
 */
export function secretFile(file: string, holdsPrivateKey: boolean, ignoreFile: string, line?: number): Diagnostic {
  const found = warning(
    'secret-file',
    file,
    `${holdsPrivateKey ? 'holds a private key' : 'is named like a secret'} and is served to every host`,
    `remove it from the skill, or list it in ${ignoreFile} if it is not meant to be published`,
  );
  return line === undefined ? found : { ...found, line, column: 1 };
}

/**
 * A relative link in `SKILL.md` that leaves its skill's folder: a host that loads or installs the skill alone cannot
 * follow it (vercel-labs/skills#860).
 *
 * @param target the link as written; `servedAs` the served skill it reaches now, if any.
 */
export function linkOutsideSkill(
  file: string,
  line: number,
  column: number,
  target: string,
  servedAs?: string,
): Diagnostic {
  return {
    ...warning(
      'link-outside-skill',
      file,
      servedAs === undefined
        ? `links ${target}, outside this skill, to nothing that is served`
        : `links ${target}, outside this skill, into ${servedAs}: a host that installs or loads this skill alone cannot follow it`,
      servedAs === undefined
        ? 'copy what it needs into the skill folder, or fix the path'
        : `name the other skill by its URI (${servedAs}) and serve both together, or copy what it needs into the skill folder`,
    ),
    line,
    column,
  };
}

/**
 * A description nearly the same as another served skill's: a model choosing between the two picks at random.
 *
 * @param similarity from 0 to 1 (the measure: `commands/similar-descriptions.ts`); `more`: other skills listed
 *   before it that are alike too.
 */
export function descriptionNearDuplicate(
  file: string,
  line: number | undefined,
  like: string,
  similarity: number,
  more: number,
): Diagnostic {
  const others = more === 0 ? '' : ` (and ${more} more skill${more === 1 ? '' : 's'} listed before it)`;
  const found = warning(
    'description-near-duplicate',
    file,
    `description is ${Math.round(similarity * 100)}% like the description of ${like}${others} (word pairs shared): a model choosing between them picks at random`,
    `say what sets this skill apart: when to use it rather than ${like}`,
  );
  return line === undefined ? found : { ...found, line, column: 1 };
}

/** A `skill://` URI in `SKILL.md` that names no served skill. */
export function linkUnservedSkill(file: string, line: number, column: number, uri: string): Diagnostic {
  return {
    ...warning(
      'link-unserved-skill',
      file,
      `names ${uri}, which is not served beside it`,
      'serve the skill it names from the same roots, or remove the reference',
    ),
    line,
    column,
  };
}

/** Invisible characters in `SKILL.md` that can hide instructions from a reviewer. */
export function hiddenCharacters(
  file: string,
  count: number,
  kinds: readonly string[],
  line: number,
  column: number,
): Diagnostic {
  return {
    ...warning(
      'hidden-characters',
      file,
      `SKILL.md holds ${count} invisible character(s) (${kinds.join(', ')}) that can hide instructions from a reviewer`,
      'remove them, or make the intent visible in plain text',
    ),
    line,
    column,
  };
}

/**
 * A root that yields no skill: said, never silent (a host pointed at the wrong folder shows an empty catalog).
 *
 * @param dir the root as given.
 * @param hidden skill folders found where the server never serves (`.claude/skills`, …), root-relative, with how many
 *   skills each holds: the hint names the argument that would serve each.
 */
export function rootEmpty(dir: string, hidden: readonly { rel: string; skills: number }[]): Diagnostic {
  const where = hidden.map(({ rel, skills }) => `${rel} (${skills} skill${skills === 1 ? '' : 's'})`).join(', ');
  return hidden.length === 0
    ? warning(
        'root-empty',
        dir,
        'no skills here: no folder below it holds a SKILL.md',
        'give each skill a folder with a SKILL.md (<root>/<name>/SKILL.md), or point at the folder that holds them',
      )
    : warning(
        'root-empty',
        dir,
        `no skills served here; skills are in ${where}, under a name starting with "." that is never served`,
        `serve ${hidden.length === 1 ? 'that folder as a root' : 'those folders as roots'}: ${hidden.map(({ rel }) => shellWord(path.join(dir, rel))).join(' ')}`,
      );
}

/** `word` as a shell reads it back: single-quoted when it holds anything but safe characters. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/u.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** A root that cannot be read now (its skills are withdrawn until it is back). */
export function rootUnusable(dir: string, code: string): Diagnostic {
  const reason = code === 'ENOENT' ? 'it does not exist' : code;
  return {
    ...warning(
      'root-unusable',
      dir,
      `root cannot be read (${reason}); its skills are withdrawn`,
      'restore the directory; skills-serve picks it up again when it reappears',
    ),
    code,
  };
}

/** The same folder listed twice with the same prefix. */
export function duplicateRoot(dir: string, earlier: string): Diagnostic {
  return warning(
    'duplicate-root',
    dir,
    `root is the same folder as root ${earlier}, listed earlier; it is served once`,
    'list each folder once',
  );
}

/** A root inside another root: its skills are served twice. */
export function nestedRoot(dir: string, outer: string): Diagnostic {
  return warning(
    'nested-root',
    dir,
    `root lies inside root ${outer}; the skills in it are served twice, under two skill paths`,
    'list only the outer folder, or give the inner one a prefix (prefix=dir) on purpose',
  );
}

/** A skill whose path overlaps a skill of a root listed earlier. */
export function skillPathConflict(
  dir: string,
  skillPath: string,
  rootDir: string,
  winner: string,
  winnerRoot: string,
): Diagnostic {
  return {
    severity: 'error',
    rule: 'skill-path-conflict',
    file: dir,
    message:
      `skill path "${skillPath}" from root ${rootDir} overlaps "${winner}" from root ${winnerRoot}, ` +
      'which is listed first and wins',
    hint: 'mount one of the roots under a prefix (prefix=dir) or rename one of the skills',
    winner,
  };
}

/** `scripts/run.py (scripts, shebang), bin/tool (execute-bit, elf)`: each flagged file with why. */
function describeExecutables(files: readonly ExecutableFile[]): string {
  return files.map((file) => `${file.path} (${file.reasons.join(', ')})`).join(', ');
}

/**
 * A served skill that bundles files a model could be told to run (`check` lists each one; docs/security.md).
 *
 * @param file absolute host path of its `SKILL.md`.
 * @param uri its `SKILL.md` URI; `files` its flagged files (at least one).
 */
export function executableContent(file: string, uri: string, files: readonly ExecutableFile[]): Diagnostic {
  return {
    severity: 'info',
    rule: 'executable-content',
    file,
    message: `${uri} bundles ${files.length} executable file${files.length === 1 ? '' : 's'}: ${describeExecutables(files)}`,
    hint: 'review them before serving; an operator can withhold such skills (--withhold-executables, or "withholdExecutables" in a --http-tokens entry)',
  };
}

/**
 * A skill left out because it bundles executable content and the operator withholds such skills: from the whole
 * server (`--withhold-executables`) or from one `--http-tokens` view.
 *
 * @param file absolute host path of its `SKILL.md`; `uri` its `SKILL.md` URI.
 * @param files its flagged files; empty when it is withheld for lying inside a withheld skill (`enclosing`'s URI).
 * @param by the setting that withholds it, as the operator wrote it (`--withhold-executables`, or
 *   `"withholdExecutables" of token <name>`).
 */
export function executablesWithheld(
  file: string,
  uri: string,
  files: readonly ExecutableFile[],
  enclosing?: string,
  by = '--withhold-executables',
): Diagnostic {
  return {
    severity: 'info',
    rule: 'executables-withheld',
    file,
    message:
      enclosing === undefined
        ? `${uri} is withheld (${by}): it bundles ${describeExecutables(files)}`
        : `${uri} is withheld (${by}): it lies inside ${enclosing}, which bundles executable files`,
    hint: `to serve it, drop ${by}, or move its executable files out of the skill`,
  };
}

/** One stable order for diagnostics, whatever order the walk finished in: file, line, column, rule, message. */
export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  return (
    compareText(a.file, b.file) ||
    (a.line ?? 0) - (b.line ?? 0) ||
    (a.column ?? 0) - (b.column ?? 0) ||
    compareText(a.rule, b.rule) ||
    compareText(a.message, b.message)
  );
}

function compareText(a: string, b: string): number {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}
