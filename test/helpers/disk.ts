/**
 * The one disk oracle: what the index should say a tree holds (skills, their files, the sha256 digest and size of
 * each), computed from the bytes on disk without `src/`, for tests to compare an entry, a listing, a snapshot or a
 * read against. Links are not followed (a test that serves a link states its row with {@link fileOnDisk}).
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** `{ uri, digest, size }` of one published file (the entry's `resources` row). */
export interface PublishedFile {
  readonly uri: string;
  readonly digest: string;
  readonly size: number;
}

/** A published skill reduced to what these comparisons look at: its `SKILL.md` URI and its files, sorted by URI. */
export interface PublishedSkill {
  readonly uri: string;
  readonly resources: readonly PublishedFile[];
}

/** A skill a test expects to be published: its `SKILL.md` URI and the directory on disk its entry must mirror. */
export interface ExpectedSkill {
  readonly uri: string;
  /** Absolute directory of the skill. */
  readonly dir: string;
}

/** `sha256:` + lowercase hex of `bytes` (the entry's digest format). */
export function sha256(bytes: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** Sorts by URI in code-unit order, the order listings use. */
export const byUri = (a: { uri: string }, b: { uri: string }): number => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0);

/** Names the ignore policy publishes: not starting with `.`, not `node_modules`. */
export const isPublishedName = (name: string): boolean => !name.startsWith('.') && name !== 'node_modules';

/** The row of the file at host path `file`, published as `uri`. */
export function fileOnDisk(uri: string, file: string): PublishedFile {
  const bytes = readFileSync(file);
  return { uri, digest: sha256(bytes), size: bytes.length };
}

/**
 * The rows of every regular file below `dir` whose names the ignore policy publishes, sorted by URI; each path
 * segment below `base` is encoded with `encodeURIComponent` (the canonical form for names of letters, digits, `-`,
 * `_` and `.`).
 *
 * @param dir the directory on disk (a skill directory, as a rule).
 * @param base its directory URI (`skill://alpha`).
 */
export function diskFiles(dir: string, base: string): PublishedFile[] {
  const out: PublishedFile[] = [];
  const walk = (abs: string, rel: string[]): void => {
    for (const name of readdirSync(abs)) {
      if (!isPublishedName(name)) continue;
      const child = path.join(abs, name);
      const stat = lstatSync(child);
      if (stat.isDirectory()) walk(child, [...rel, name]);
      else if (stat.isFile())
        out.push(fileOnDisk(`${base}/${[...rel, name].map(encodeURIComponent).join('/')}`, child));
    }
  };
  walk(dir, []);
  return out.sort(byUri);
}

/** The entries `skills` call for: each skill with every file below its directory ({@link diskFiles}), sorted. */
export function diskSkills(skills: readonly ExpectedSkill[]): PublishedSkill[] {
  return skills
    .map(({ uri, dir }) => ({ uri, resources: diskFiles(dir, uri.slice(0, -'/SKILL.md'.length)) }))
    .sort(byUri);
}

/**
 * Whether `SKILL.md` text is a valid skill for directory `dirName` in the trees tests write: frontmatter with
 * `name: <dirName>` and a non-empty `description` (tests break skills by dropping the description or the closing
 * fence).
 */
export function isValidTestSkill(text: string, dirName: string): boolean {
  const match = /^---\nname: (.+)\ndescription: (.+)\n(?:.*\n)*?---\n/u.exec(text);
  return match !== null && match[1] === dirName && match[2]?.trim() !== '';
}

/**
 * The catalog `root` calls for, mounted without a prefix: every directory below it (not named `.…` or
 * `node_modules`) holding a valid `SKILL.md` ({@link isValidTestSkill}), nested ones included, with every file below
 * it ({@link diskFiles}), sorted by URI. URIs are `skill://<rel>/…` with each segment percent-encoded.
 */
export function diskCatalog(root: string): PublishedSkill[] {
  const skills: ExpectedSkill[] = [];
  const walk = (abs: string, rel: string[]): void => {
    const manifest = path.join(abs, 'SKILL.md');
    if (
      rel.length > 0 &&
      existsSync(manifest) &&
      lstatSync(manifest).isFile() &&
      isValidTestSkill(readFileSync(manifest, 'utf8'), rel.at(-1) as string)
    ) {
      skills.push({ uri: `skill://${rel.map(encodeURIComponent).join('/')}/SKILL.md`, dir: abs });
    }
    for (const name of readdirSync(abs)) {
      if (isPublishedName(name) && lstatSync(path.join(abs, name)).isDirectory())
        walk(path.join(abs, name), [...rel, name]);
    }
  };
  walk(root, []);
  return diskSkills(skills);
}

/** The distinct file URIs of a catalog (nested skills share theirs), sorted: what `resources/read` may open. */
export function fileUrisOf(catalog: readonly PublishedSkill[]): string[] {
  return [...new Set(catalog.flatMap((skill) => skill.resources.map((file) => file.uri)))].sort();
}
