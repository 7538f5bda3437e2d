/**
 * One skill's entry: its directory node plus its frontmatter → a {@link SkillRecord} whose entry is validated and
 * serialized once, or one diagnostic saying why the skill is not published (SEP-2640 "The entry", "Limits per
 * skill"; Agent Skills frontmatter rules).
 */
import { SKILL_LIMITS } from '@modelcontextprotocol/server/ext/skills';

import { DIGEST_TEXT_LENGTH } from './digest-algorithm.js';
import { executableFiles, EXECUTABLES_META_KEY, executablesMeta } from './executables.js';
import type { ManifestEntry } from './manifest.js';
import { executableMarks, writeDigestOf } from './record.js';
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
  /** What its `SKILL.md` gives the entry (`manifest.ts`). */
  readonly manifest: ManifestEntry;
  /** The entry's `_meta` (a git root's provenance), if any. */
  readonly meta?: Readonly<Record<string, unknown>> | undefined;
  /** The root's version (`RootSpec.version`), if any. */
  readonly version?: string | undefined;
}

/** Where entries are written before each is copied out as one flat string; grown when an entry needs more. */
let scratch = Buffer.allocUnsafe(64 * 1024);

/**
 * Builds the record of one valid skill: every file of its subtree once (nested skills' files included) with digest
 * and size, sorted by URI, serialized with the frontmatter as the entry JSON. Checks the per-skill limits. A skill
 * bundling executable content gets `_meta["dev.skills-serve/executables"]`: each flagged file's path below the skill
 * with why (`executables.ts`), after the root's own `_meta`.
 *
 * The entry is written into one reused buffer and read out once, so the only strings made per file are its URI
 * (which the order needs): no per-file digest text, JSON pieces or array of parts.
 *
 * @returns the record, or an error diagnostic naming `SKILL.md` when the skill is over 512 files or 16 MiB.
 */
export function buildRecord(input: RecordInput): SkillRecord | Diagnostic {
  const rootUri = buildSkillUri(input.segments);
  const uris: string[] = [];
  const files: FileNode[] = [];
  const totalBytes = collectFiles(input.node, rootUri, uris, files);
  const problems = problemsOfLimits(files.length, totalBytes);
  if (problems.length > 0) return problemsDiagnostic(input.manifestPath, problems);

  const order = uriOrder(uris);
  const uri = `${rootUri}/SKILL.md`;
  const { manifest } = input;
  const executables = executableFiles(input.node, executableMarks);
  const meta =
    executables.length === 0 ? input.meta : { ...input.meta, [EXECUTABLES_META_KEY]: executablesMeta(executables) };
  const metaJson = meta === undefined ? '' : `,"_meta":${JSON.stringify(meta)}`;
  // URIs are percent-encoded ASCII with neither `"` nor `\` (`uri.ts`): each one's JSON is itself in quotes. Other
  // text is written as UTF-8, at most 3 bytes per UTF-16 unit.
  let room = 64 + uri.length + 3 * (manifest.frontmatterJson.length + metaJson.length);
  for (const fileUri of uris) room += fileUri.length + DIGEST_TEXT_LENGTH + 48;
  if (scratch.length < room) scratch = Buffer.allocUnsafe(Math.max(room, 2 * scratch.length));
  const out = scratch;
  let at = out.write('{"uri":"', 0, 'latin1');
  at += out.write(uri, at, 'latin1');
  at += out.write('","frontmatter":', at, 'latin1');
  at += out.write(manifest.frontmatterJson, at, 'utf8');
  at += out.write(',"resources":[', at, 'latin1');
  for (let index = 0; index < files.length; index++) {
    const row = order === undefined ? index : (order[index] as number);
    const file = files[row] as FileNode;
    at += out.write(index === 0 ? '{"uri":"' : ',{"uri":"', at, 'latin1');
    at += out.write(uris[row] as string, at, 'latin1');
    at += out.write('","digest":"', at, 'latin1');
    at = writeDigestOf(file, out, at);
    at += out.write('","size":', at, 'latin1');
    at += out.write(String(file.size), at, 'latin1');
    out[at++] = 0x7d; // }
  }
  out[at++] = 0x5d; // ]
  at += out.write(metaJson, at, 'utf8');
  out[at++] = 0x7d; // }
  const manifestNode = input.node.children.find((child) => child.name === 'SKILL.md');
  return {
    uri,
    rootUri,
    segments: input.segments,
    name: manifest.name,
    description: manifest.description,
    json: out.toString('utf8', 0, at),
    node: input.node,
    dirReal: input.dirReal,
    rootIndex: input.rootIndex,
    rel: input.rel,
    version: input.version,
    manifestSize: manifestNode instanceof FileNode ? manifestNode.size : 0,
    fileCount: files.length,
    totalBytes,
    headings: manifest.headings,
    executables: executables.length === 0 ? NO_EXECUTABLES : executables,
    modelInvocable: manifest.modelInvocable,
    userInvocable: manifest.userInvocable,
  };
}

const NO_EXECUTABLES: readonly ExecutableFile[] = Object.freeze([]);

/**
 * The order of `uris` by {@link compareUris}, as indices, or `undefined` when they are in order already (a walk lists
 * each directory by name, so they mostly are: a name sorting before `/`, like `a.txt` beside a directory `a`, or one
 * that percent-encoding reorders, is what changes that).
 */
function uriOrder(uris: readonly string[]): number[] | undefined {
  let sorted = true;
  for (let index = 1; index < uris.length && sorted; index++)
    sorted = compareUris(uris[index - 1] as string, uris[index] as string) < 0;
  if (sorted) return undefined;
  return uris.map((_, index) => index).sort((a, b) => compareUris(uris[a] as string, uris[b] as string));
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

/**
 * Every file under `node`, in walk order, with its URI (`dirUri` is the node's own URI).
 *
 * @returns their total bytes.
 */
function collectFiles(node: DirNode, dirUri: string, uris: string[], files: FileNode[]): number {
  let bytes = 0;
  for (const child of node.children) {
    const uri = `${dirUri}/${encodeSegment(child.name)}`;
    if (child instanceof DirNode) bytes += collectFiles(child, uri, uris, files);
    else {
      uris.push(uri);
      files.push(child);
      bytes += child.size;
    }
  }
  return bytes;
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
