/**
 * One skill's entry: its directory node plus its frontmatter → a {@link SkillRecord} whose entry is validated and
 * serialized once, or one diagnostic saying why the skill is not published (SEP-2640 "The entry", "Limits per
 * skill"; Agent Skills frontmatter rules).
 */
import { SKILL_LIMITS } from '@modelcontextprotocol/server/ext/skills';

import { executableFiles, EXECUTABLES_META_KEY, executablesMeta } from './executables.js';
import type { ReadFrontmatter } from './frontmatter.js';
import { digestOf, executableMarks } from './record.js';
import type { RuleProblem } from './rules.js';
import { type Diagnostic, DirNode, type ExecutableFile, FileNode, type SkillEntry, type SkillRecord } from './types.js';
import { buildSkillUri, compareUris, encodeSegment } from './uri.js';

/** What {@link buildRecord} needs for one skill. */
export interface RecordInput {
  /** Skill path segments (`['acme', 'billing', 'refunds']`); the last equals the frontmatter name. */
  readonly segments: readonly string[];
  /** The skill's directory, complete (every file hashed). */
  readonly node: DirNode;
  /** Absolute real path of that directory. */
  readonly dirReal: string;
  readonly rootIndex: number;
  /** Root-relative path of the skill's directory. */
  readonly rel: string;
  /** Absolute host path of `SKILL.md`, for diagnostics. */
  readonly manifestPath: string;
  readonly frontmatter: ReadFrontmatter;
  /** The entry's `_meta` (a git root's provenance), if any. */
  readonly meta?: Readonly<Record<string, unknown>> | undefined;
  /** The root's version (`RootSpec.version`), if any. */
  readonly version?: string | undefined;
}

/**
 * Builds the record of one valid skill: every file of its subtree once (nested skills' files included) with digest
 * and size, sorted by URI, serialized with the frontmatter as the entry JSON. Checks the per-skill limits. A skill
 * bundling executable content gets `_meta["dev.skills-serve/executables"]`: each flagged file's path below the skill
 * with why (`executables.ts`), after the root's own `_meta`.
 *
 * @returns the record, or an error diagnostic naming `SKILL.md` when the skill is over 512 files or 16 MiB.
 */
export function buildRecord(input: RecordInput): SkillRecord | Diagnostic {
  const rootUri = buildSkillUri(input.segments);
  const rows: { uri: string; node: FileNode }[] = [];
  collectFiles(input.node, rootUri, rows);
  let totalBytes = 0;
  for (const row of rows) totalBytes += row.node.size;
  const problems = problemsOfLimits(rows.length, totalBytes);
  if (problems.length > 0) return problemsDiagnostic(input.manifestPath, problems);

  rows.sort((a, b) => compareUris(a.uri, b.uri));
  const uri = `${rootUri}/SKILL.md`;
  // One flat string (Array#join), not a tree of concatenations holding every piece alive.
  const parts: string[] = [
    `{"uri":${JSON.stringify(uri)},"frontmatter":${JSON.stringify(input.frontmatter.frontmatter)},"resources":[`,
  ];
  for (const [index, row] of rows.entries()) {
    parts.push(
      `${index === 0 ? '' : ','}{"uri":${JSON.stringify(row.uri)},"digest":"${digestOf(row.node)}","size":${row.node.size}}`,
    );
  }
  const executables = executableFiles(input.node, executableMarks);
  const meta =
    executables.length === 0 ? input.meta : { ...input.meta, [EXECUTABLES_META_KEY]: executablesMeta(executables) };
  parts.push(meta === undefined ? ']}' : `],"_meta":${JSON.stringify(meta)}}`);
  const json = parts.join('');
  // Fresh copies: values cut from the SKILL.md text would keep the whole text alive.
  const { name, description } = JSON.parse(
    JSON.stringify({ name: input.frontmatter.name, description: input.frontmatter.description }),
  ) as {
    name: string;
    description: string;
  };
  const manifest = input.node.children.find((child) => child.name === 'SKILL.md');
  return {
    uri,
    rootUri,
    segments: input.segments,
    name,
    description,
    json,
    node: input.node,
    dirReal: input.dirReal,
    rootIndex: input.rootIndex,
    rel: input.rel,
    version: input.version,
    manifestSize: manifest instanceof FileNode ? manifest.size : 0,
    fileCount: rows.length,
    totalBytes,
    headings: input.frontmatter.headings,
    executables: executables.length === 0 ? NO_EXECUTABLES : executables,
    modelInvocable: !isFlag(input.frontmatter.frontmatter['disable-model-invocation'], true),
    userInvocable: !isFlag(input.frontmatter.frontmatter['user-invocable'], false),
  };
}

const NO_EXECUTABLES: readonly ExecutableFile[] = Object.freeze([]);

/** Whether a frontmatter value is the boolean `value`, written as a YAML boolean or as the string hosts also take. */
function isFlag(field: unknown, value: boolean): boolean {
  return field === value || field === String(value);
}

/**
 * The per-skill limits a skill directory breaks (SEP-2640 "Limits per skill": at most 512 resources and 16 MiB).
 *
 * @param node the skill's directory (nested skills' files count).
 * @returns one problem per limit broken; empty when within both.
 */
export function limitProblems(node: DirNode): RuleProblem[] {
  let files = 0;
  let bytes = 0;
  const visit = (dir: DirNode): void => {
    for (const child of dir.children) {
      if (child instanceof DirNode) visit(child);
      else {
        files++;
        bytes += child.size;
      }
    }
  };
  visit(node);
  return problemsOfLimits(files, bytes);
}

function problemsOfLimits(files: number, bytes: number): RuleProblem[] {
  const problems: RuleProblem[] = [];
  if (files > SKILL_LIMITS.files) {
    problems.push({
      rule: 'skill-too-many-files',
      message: `the skill has ${files} files; the limit is ${SKILL_LIMITS.files}`,
      hint: 'move large collections out of the skill, or split it into several skills',
    });
  }
  if (bytes > SKILL_LIMITS.bytes) {
    problems.push({
      rule: 'skill-too-large',
      message: `the skill holds ${bytes} bytes; the limit is ${SKILL_LIMITS.bytes} (16 MiB)`,
      hint: 'move large assets out of the skill, or split it into several skills',
    });
  }
  return problems;
}

/** Every file under `node` with its URI (`dirUri` is the node's own URI). */
function collectFiles(node: DirNode, dirUri: string, rows: { uri: string; node: FileNode }[]): void {
  for (const child of node.children) {
    const uri = `${dirUri}/${encodeSegment(child.name)}`;
    if (child instanceof DirNode) collectFiles(child, uri, rows);
    else rows.push({ uri, node: child });
  }
}

/**
 * One error diagnostic for every rule a skill breaks: the rules joined with `,`, the messages and hints with `; `, and
 * the first known line and column.
 *
 * @param file absolute host path of `SKILL.md`.
 * @param problems at least one.
 */
export function problemsDiagnostic(file: string, problems: readonly RuleProblem[]): Diagnostic {
  const located = problems.find((problem) => problem.line !== undefined);
  return {
    severity: 'error',
    rule: [...new Set(problems.map((problem) => problem.rule))].join(','),
    file,
    message: problems.map((problem) => problem.message).join('; '),
    hint: problems.map((problem) => problem.hint).join('; '),
    ...(located?.line === undefined ? {} : { line: located.line }),
    ...(located?.column === undefined ? {} : { column: located.column }),
  };
}

/** The entry of a record as an object (for `manifest` and tests; the server sends {@link SkillRecord.json}). */
export function entryOf(record: SkillRecord): SkillEntry {
  return JSON.parse(record.json) as SkillEntry;
}
