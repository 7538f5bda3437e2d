/**
 * The one wait for "the served catalog equals what is on disk", and the complete `skills/list` enumerations it and
 * the fault tests compare. It waits on the server's own events, never on a clock: each round lists the catalog; when
 * the listing differs from the disk, the next round starts when the server logs its next snapshot swap
 * (`index-built`, `index-updated`: every swap logs one, docs/ARCHITECTURE.md "Runtime"), which is certain to come
 * after a listing that missed a change, since the mark is taken before the listing is asked for.
 */
import { byUri, diskCatalog, diskSkills, type ExpectedSkill, type PublishedFile, type PublishedSkill } from './disk.js';
import { WAIT_MS } from './wait.js';
import { errorOf, resultOf, type Wire } from './wire.js';

/** A `skills/list` entry as the wire or a client gives it. */
export interface ListedEntry {
  readonly uri: string;
  readonly resources: unknown;
}

/** A served catalog: the process serving it, and every entry it lists (every page). */
export interface Catalog<T extends ListedEntry = ListedEntry> {
  readonly wire: Wire;
  list(): Promise<readonly T[]>;
}

/** What the catalog must equal: a root (its {@link diskCatalog}) or the skills a test names ({@link diskSkills}). */
export type OnDisk = string | readonly ExpectedSkill[];

/** Entries reduced to `{ uri, resources: [{ uri, digest, size }] }`, resources sorted, skills sorted. */
export function reduceListing(skills: readonly ListedEntry[]): PublishedSkill[] {
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
  readonly skills: PublishedSkill[];
  readonly requestedAt: number;
  readonly answeredAt: number;
}

/**
 * Lists every page of `skills/list` over a raw wire.
 *
 * @throws Error when a page is answered with an error or not within `timeoutMs`.
 */
export async function listAll(wire: Wire, timeoutMs = 30_000): Promise<Enumeration> {
  const requestedAt = performance.now();
  const skills: ListedEntry[] = [];
  let cursor: string | undefined;
  do {
    const page = resultOf<{ skills: ListedEntry[]; nextCursor?: string }>(
      await wire.request('skills/list', cursor === undefined ? {} : { cursor }, timeoutMs),
    );
    skills.push(...page.skills);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { skills: reduceListing(skills), requestedAt, answeredAt: performance.now() };
}

/** `skills/get` of `uri` over a raw wire, reduced; `undefined` when it is not served (-32602). */
export async function getEntry(wire: Wire, uri: string): Promise<PublishedSkill | undefined> {
  const response = await wire.request('skills/get', { uri });
  if (errorOf(response)?.code === -32602) return undefined;
  return reduceListing([resultOf<{ skill: ListedEntry }>(response).skill])[0];
}

/** The first difference between a listing and what the disk calls for, or `undefined` when they are equal. */
export function catalogDifference(
  listed: readonly PublishedSkill[],
  expected: readonly PublishedSkill[],
): string | undefined {
  const listedUris = listed.map((skill) => skill.uri);
  const expectedUris = expected.map((skill) => skill.uri);
  const some = (uris: string[]): string =>
    `${JSON.stringify(uris.slice(0, 5))}${uris.length > 5 ? ` (+${uris.length - 5})` : ''}`;
  const missing = expectedUris.filter((uri) => !listedUris.includes(uri));
  const extra = listedUris.filter((uri) => !expectedUris.includes(uri));
  if (missing.length > 0 || extra.length > 0)
    return `skills missing: ${some(missing)}; skills not on disk: ${some(extra)}`;
  for (const [index, want] of expected.entries()) {
    const got = listed[index] as PublishedSkill;
    if (JSON.stringify(got.resources) !== JSON.stringify(want.resources)) {
      return `${want.uri}: published ${JSON.stringify(got.resources).slice(0, 400)}, disk ${JSON.stringify(want.resources).slice(0, 400)}`;
    }
  }
  return undefined;
}

/** Whether a log line is a snapshot swap. */
const isSwap = (line: { event?: string }): boolean => line.event === 'index-built' || line.event === 'index-updated';

/**
 * Waits until the served catalog (every `skills/list` page) equals what is on disk: the same skills, each with the
 * same files, digests and sizes. The server must log at `info` (the tests' default), where swaps are logged.
 *
 * @param server a raw wire, or a catalog (an SDK {@link Connection} from `server.ts`, a live server from `live.ts`).
 * @param onDisk a root whose whole catalog is compared ({@link diskCatalog}), or the skills the catalog must hold,
 *   each mirroring its directory ({@link diskSkills}); read again each round.
 * @param timeoutMs the bound for the whole wait (ms; default {@link WAIT_MS}).
 * @returns the listing that matched, as the server or client gave it.
 * @throws Error naming the last difference and the server's stderr tail when no swap comes within the bound, or the
 *   server exits first.
 */
export async function converge(server: Wire, onDisk: OnDisk, timeoutMs?: number): Promise<PublishedSkill[]>;
export async function converge<T extends ListedEntry>(
  server: Catalog<T>,
  onDisk: OnDisk,
  timeoutMs?: number,
): Promise<T[]>;
export async function converge(
  server: Wire | Catalog,
  onDisk: OnDisk,
  timeoutMs = WAIT_MS,
): Promise<readonly ListedEntry[]> {
  const deadline = performance.now() + timeoutMs;
  const catalog: Catalog =
    'child' in server ? { wire: server, list: async () => (await listAll(server, timeoutMs)).skills } : server;
  for (;;) {
    const mark = catalog.wire.logs().length;
    const listed = await catalog.list();
    const difference = catalogDifference(
      reduceListing(listed),
      typeof onDisk === 'string' ? diskCatalog(onDisk) : diskSkills(onDisk),
    );
    if (difference === undefined) return [...listed];
    await catalog.wire
      .waitForLog(isSwap, { after: mark, timeoutMs: Math.max(0, deadline - performance.now()) })
      .catch((error: unknown) => {
        throw new Error(`the catalog does not match the disk: ${difference}\n${(error as Error).message}`);
      });
  }
}
