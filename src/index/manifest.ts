/**
 * What a skill's `SKILL.md` gives its skill, read once (docs/ARCHITECTURE.md, "Digest cache"): the entry's fields
 * (the frontmatter as the JSON text the entry carries, `name`, `description`, the body's headings, the two invocation
 * flags) or the rule problems that keep the skill out, and the hidden characters found in it. The same object comes
 * from the bytes ({@link readManifest}) or from the digest cache (`digest-cache.ts`), which keeps it beside the
 * `SKILL.md` digest under the same identity rule, so a warm start neither reads nor parses an unchanged `SKILL.md`.
 *
 * Implements SEP-2640 "The entry" (`frontmatter`) with the Agent Skills frontmatter rules (`frontmatter.ts`).
 */
import { readFrontmatter } from './frontmatter.js';
import { findHiddenCharacters, type HiddenCharacters } from './hygiene.js';
import { decodeLossless } from './mime.js';
import type { RuleProblem } from './rules.js';

/** The fields of a valid skill's entry that come from its `SKILL.md`. */
export interface ManifestEntry {
  /** `JSON.stringify` of the frontmatter: the entry's `frontmatter`, verbatim. */
  readonly frontmatterJson: string;
  readonly name: string;
  readonly description: string;
  /** The `# …` heading lines of the body, `\n`-joined (`frontmatter.ts` `headingsOf`). */
  readonly headings: string;
  /** Not `disable-model-invocation: true` (`SkillRecord.modelInvocable`). */
  readonly modelInvocable: boolean;
  /** Not `user-invocable: false` (`SkillRecord.userInvocable`). */
  readonly userInvocable: boolean;
}

/** What one version of a `SKILL.md` gives its skill. */
export interface ManifestFacts {
  /**
   * The skill path (segments `/`-joined) it was read under: the frontmatter `name` must equal its last segment, so
   * the facts hold only for that path.
   */
  readonly skillPath: string;
  /** Invisible characters found in it (a warning; the skill is still served), if any. */
  readonly hidden: HiddenCharacters | undefined;
  /** The entry's fields, or the rule problems (at least one) that keep the skill from being published. */
  readonly read: ManifestEntry | { readonly problems: readonly RuleProblem[] };
}

/**
 * The skill path of the skill directory `rel` of a root.
 *
 * @param base skill-path segments of the root's own directory (its prefix, and its name when it is a skill).
 * @param rel root-relative, `/`-separated (`''` for the root).
 * @returns its segments (none for the directory of a root that is not a skill and has no prefix: no skill there).
 */
export function skillSegments(base: readonly string[], rel: string): readonly string[] {
  return rel === '' ? base : [...base, ...rel.split('/')];
}

/**
 * Reads one `SKILL.md`.
 *
 * @param segments the skill path (see {@link ManifestFacts.skillPath}).
 * @param bytes the raw file.
 * @returns its facts; strings are fresh copies, so nothing keeps the file's text alive.
 * @throws only on a bug (see `readFrontmatter`).
 */
export async function readManifest(segments: readonly string[], bytes: Uint8Array): Promise<ManifestFacts> {
  const text = decodeLossless(bytes);
  const hidden = text === undefined ? undefined : findHiddenCharacters(text);
  const skillPath = segments.join('/');
  const read = await readFrontmatter(segments, bytes, text);
  if ('problems' in read) return { skillPath, hidden, read };
  const { frontmatter } = read;
  // Fresh copies: values cut from the SKILL.md text would keep the whole text alive.
  const [name, description, headings] = JSON.parse(
    JSON.stringify([read.name, read.description, read.headings]),
  ) as string[];
  return {
    skillPath,
    hidden,
    read: {
      frontmatterJson: JSON.stringify(frontmatter),
      name: name as string,
      description: description as string,
      headings: headings as string,
      modelInvocable: !isFlag(frontmatter['disable-model-invocation'], true),
      userInvocable: !isFlag(frontmatter['user-invocable'], false),
    },
  };
}

/** Whether a frontmatter value is the boolean `value`, written as a YAML boolean or as the string hosts also take. */
function isFlag(field: unknown, value: boolean): boolean {
  return field === value || field === String(value);
}
