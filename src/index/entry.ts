/**
 * One skill's entry: `SKILL.md` bytes plus its file records → the wire entry, or one diagnostic saying why the
 * skill is not published (SEP-2640 "The entry", "Limits per skill"; Agent Skills frontmatter rules).
 *
 * Frontmatter is read by the SDK's `skillEntry()`: the parser and rules v2 hosts verify with, so a skill we publish
 * is a skill they accept, field for field.
 */
import { SkillCatalogError, skillEntry } from '@modelcontextprotocol/server/ext/skills';
import { MAX_SKILL_BYTES, MAX_SKILL_FILES } from './policy.js';
import { classifyProblem, type RuleProblem } from './rules.js';
import type { Diagnostic, FileRecord, SkillEntry } from './types.js';
import { buildSkillUri, compareUris } from './uri.js';

/** A built entry with the frontmatter fields the server also needs. */
export interface BuiltEntry {
  readonly entry: SkillEntry;
  readonly name: string;
  readonly description: string;
}

/** What {@link buildEntry} needs for one skill. */
export interface EntryInput {
  /** Skill path segments (`['acme', 'billing', 'refunds']`); the last must equal the frontmatter name. */
  readonly segments: readonly string[];
  /** Absolute host path of `SKILL.md`, for the diagnostic. */
  readonly manifestPath: string;
  /** Raw bytes of `SKILL.md`. */
  readonly manifestBytes: Uint8Array;
  /** Every file of the skill, `SKILL.md` and nested skills' files included, in any order. */
  readonly files: readonly FileRecord[];
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Builds the entry of one skill: verbatim frontmatter (via `skillEntry()`), every file once with digest and size,
 * sorted by URI, deeply frozen. Checks the Agent Skills rules and the 512-file / 16 MiB limits.
 *
 * @returns `{ entry }` when the skill can be published, otherwise `{ diagnostic }`: exactly one error diagnostic
 *   naming `SKILL.md`, every rule broken, the line when known and how to fix it.
 * @throws only on a bug (an SDK failure that is not a rule problem).
 */
export async function buildEntry(input: EntryInput): Promise<{ built: BuiltEntry } | { diagnostic: Diagnostic }> {
  const problems: RuleProblem[] = [];
  let frontmatter: SkillEntry['frontmatter'] | undefined;
  try {
    const parsed = await skillEntry(input.segments.join('/'), { 'SKILL.md': input.manifestBytes });
    frontmatter = parsed.frontmatter;
  } catch (error) {
    if (!SkillCatalogError.isInstance(error)) throw error;
    const text = decodeOrUndefined(input.manifestBytes);
    for (const problem of error.problems) problems.push(classifyProblem(problem.message, text));
  }
  const totalBytes = input.files.reduce((sum, file) => sum + file.size, 0);
  if (input.files.length > MAX_SKILL_FILES) {
    problems.push({
      rule: 'skill-too-many-files',
      message: `the skill has ${input.files.length} files; the limit is ${MAX_SKILL_FILES}`,
      hint: 'move large collections out of the skill, or split it into several skills',
    });
  }
  if (totalBytes > MAX_SKILL_BYTES) {
    problems.push({
      rule: 'skill-too-large',
      message: `the skill holds ${totalBytes} bytes; the limit is ${MAX_SKILL_BYTES} (16 MiB)`,
      hint: 'move large assets out of the skill, or split it into several skills',
    });
  }
  if (frontmatter === undefined || problems.length > 0) return { diagnostic: toDiagnostic(input.manifestPath, problems) };

  const uri = buildSkillUri([...input.segments, 'SKILL.md']);
  const resources = input.files
    .map((file) => Object.freeze({ uri: file.uri, digest: file.digest, size: file.size }))
    .sort((a, b) => compareUris(a.uri, b.uri));
  const entry: SkillEntry = deepFreeze({ uri, frontmatter, resources: Object.freeze(resources) as SkillEntry['resources'] });
  return { built: { entry, name: String(frontmatter['name']), description: String(frontmatter['description']) } };
}

/** Several problems of one skill make one diagnostic: rules joined with `,`, messages with `; `. */
function toDiagnostic(file: string, problems: readonly RuleProblem[]): Diagnostic {
  const first = problems[0] ?? { rule: 'entry-invalid', message: 'the skill entry could not be built', hint: 'check SKILL.md' };
  const located = problems.find((problem) => problem.line !== undefined);
  const line = located?.line;
  const column = located?.column;
  return {
    severity: 'error',
    rule: [...new Set(problems.map((problem) => problem.rule))].join(','),
    file,
    message: problems.map((problem) => problem.message).join('; '),
    hint: problems.map((problem) => problem.hint).join('; ') || first.hint,
    ...(line === undefined ? {} : { line }),
    ...(column === undefined ? {} : { column }),
  };
}

function decodeOrUndefined(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
