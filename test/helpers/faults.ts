/**
 * What fault and load tests compare the server against: the catalog a simple tree on disk calls for (computed
 * without `src/`), complete `skills/list` enumerations over a {@link Wire}, and the history of digests a server
 * published per URI, which decides whether a read served bytes it had already replaced (docs/ARCHITECTURE.md,
 * "Invariants": "never serve bytes that contradict the published entry").
 */
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { PublishHistory } from '../../bench/load-tracker.mjs';
import { byUri, diskFiles, isPublishedName, type PublishedFile } from './disk.js';
import { WAIT_MS, waitFor } from './wait.js';
import { resultOf, type Wire } from './wire.js';

export { diskFiles, type PublishedFile } from './disk.js';

/** A listed entry, reduced to what these tests compare. */
export interface ListedSkill {
  readonly uri: string;
  readonly resources: readonly PublishedFile[];
}

/**
 * Whether `SKILL.md` text is a valid skill for directory `dirName` in the trees these tests write: frontmatter with
 * `name: <dirName>` and a non-empty `description` (the tests break skills by dropping the description or the
 * closing fence).
 */
export function isValidTestSkill(text: string, dirName: string): boolean {
  const match = /^---\nname: (.+)\ndescription: (.+)\n(?:.*\n)*?---\n/u.exec(text);
  return match !== null && match[1] === dirName && match[2]?.trim() !== '';
}

/**
 * The catalog `root` calls for: every directory (not named `.…` or `node_modules`) holding a valid `SKILL.md`
 * (see {@link isValidTestSkill}), with every file below it ({@link diskFiles}), sorted by URI. URIs are
 * `skill://<rel>/…` with each segment percent-encoded.
 */
export function diskCatalog(root: string): ListedSkill[] {
  const skills: ListedSkill[] = [];
  const walk = (abs: string, rel: string[]): void => {
    const manifest = path.join(abs, 'SKILL.md');
    if (
      rel.length > 0 &&
      existsSync(manifest) &&
      lstatSync(manifest).isFile() &&
      isValidTestSkill(readFileSync(manifest, 'utf8'), rel.at(-1) as string)
    ) {
      const base = `skill://${rel.map(encodeURIComponent).join('/')}`;
      skills.push({ uri: `${base}/SKILL.md`, resources: diskFiles(abs, base) });
    }
    for (const name of readdirSync(abs)) {
      if (isPublishedName(name) && lstatSync(path.join(abs, name)).isDirectory())
        walk(path.join(abs, name), [...rel, name]);
    }
  };
  walk(root, []);
  return skills.sort(byUri);
}

/** Entries reduced to `{ uri, resources: [{ uri, digest, size }] }`, resources sorted, skills sorted. */
export function reduceListing(skills: readonly { uri: string; resources: unknown }[]): ListedSkill[] {
  return skills
    .map((skill) => ({
      uri: skill.uri,
      resources: (Array.isArray(skill.resources) ? (skill.resources as PublishedFile[]) : [])
        .map(({ uri, digest, size }) => ({ uri, digest, size }))
        .sort(byUri),
    }))
    .sort(byUri);
}

/** One complete `skills/list` enumeration (every page) with when it was asked and answered (`performance.now()`). */
export interface Enumeration {
  readonly skills: ListedSkill[];
  readonly requestedAt: number;
  readonly answeredAt: number;
}

/**
 * Lists every page of `skills/list`.
 *
 * @throws Error when a page is answered with an error or not within `timeoutMs`.
 */
export async function listAll(wire: Wire, timeoutMs = 30_000): Promise<Enumeration> {
  const requestedAt = performance.now();
  const skills: { uri: string; resources: unknown }[] = [];
  let cursor: string | undefined;
  do {
    const page = resultOf<{ skills: { uri: string; resources: unknown }[]; nextCursor?: string }>(
      await wire.request('skills/list', cursor === undefined ? {} : { cursor }, timeoutMs),
    );
    skills.push(...page.skills);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { skills: reduceListing(skills), requestedAt, answeredAt: performance.now() };
}

/** The first difference between two catalogs, or `undefined` when they are equal. */
export function catalogDifference(
  listed: readonly ListedSkill[],
  expected: readonly ListedSkill[],
): string | undefined {
  const listedUris = listed.map((skill) => skill.uri);
  const expectedUris = expected.map((skill) => skill.uri);
  const missing = expectedUris.filter((uri) => !listedUris.includes(uri));
  const extra = listedUris.filter((uri) => !expectedUris.includes(uri));
  if (missing.length > 0 || extra.length > 0) {
    return `skills missing: ${JSON.stringify(missing.slice(0, 5))}${missing.length > 5 ? ` (+${missing.length - 5})` : ''}; skills not on disk: ${JSON.stringify(extra.slice(0, 5))}${extra.length > 5 ? ` (+${extra.length - 5})` : ''}`;
  }
  for (const [index, want] of expected.entries()) {
    const got = listed[index] as ListedSkill;
    if (JSON.stringify(got.resources) !== JSON.stringify(want.resources)) {
      return `${want.uri}: published ${JSON.stringify(got.resources).slice(0, 400)}, disk ${JSON.stringify(want.resources).slice(0, 400)}`;
    }
  }
  return undefined;
}

/** How a read's digest relates to what the server published for its URI. */
export type ReadVerdict = 'ok' | 'stale' | 'unpublished';

/**
 * The digests one server published per URI, as observed through `skills/list` / `skills/get` answers, each with
 * when it was asked and answered (`performance.now()`). A read's digest is **stale** when the server had published
 * it, then published another digest for the URI in an answer that arrived before the read was sent, and was never
 * seen publishing it again after that; it is **unpublished** when no observation ever showed it (judge reads
 * after the last observation is in). The rules are the load benchmark's (bench/load-tracker.mjs), shared.
 */
export class PublishedHistory {
  readonly #history = new PublishHistory() as {
    observe(uri: string, digest: string, requestedAt: number, answeredAt: number): void;
    judge(
      uri: string,
      digest: string,
      sentAt: number,
      written: () => boolean,
    ): 'ok' | 'stale' | 'unobserved' | 'foreign';
  };

  /** Records every file of `skills` as published between `requestedAt` and `answeredAt`. */
  observe(skills: readonly ListedSkill[], requestedAt: number, answeredAt: number): void {
    for (const skill of skills)
      for (const file of skill.resources) this.#history.observe(file.uri, file.digest, requestedAt, answeredAt);
  }

  /** Judges a read of `uri` that returned bytes with `digest` and was sent at `sentAt`. */
  judge(uri: string, digest: string, sentAt: number): ReadVerdict {
    const verdict = this.#history.judge(uri, digest, sentAt, () => false);
    return verdict === 'ok' || verdict === 'stale' ? verdict : 'unpublished';
  }
}

/**
 * Waits until the server's full listing (every `skills/list` page) matches what is on disk under `root`.
 *
 * @param timeoutMs how long to wait (ms; default {@link WAIT_MS}).
 * @throws Error naming the last difference and the server's stderr tail when it never does.
 */
export async function converge(wire: Wire, root: string, timeoutMs = WAIT_MS): Promise<void> {
  let difference: string | undefined = 'never listed';
  await waitFor(
    async () => (difference = catalogDifference((await listAll(wire)).skills, diskCatalog(root))) === undefined,
    {
      timeoutMs,
      describe: () => `catalog differs from disk: ${difference}\nstderr tail:\n${wire.stderr().slice(-1500)}`,
    },
  );
}
