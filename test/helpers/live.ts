/**
 * Live-update harness for end-to-end tests: a server spawned over real stdio (see `server.ts`) with recorded change
 * notifications, a listing for `converge` (`converge.ts`) to compare with the disk, and a *barrier* that proves every
 * notification due so far has arrived.
 *
 * The barrier (`settle`) rewrites a file of a "sentinel" skill served from a second root and waits for its
 * `notifications/resources/updated`. Rebuilds are serialized and notifications travel in order on stdout, so once the
 * sentinel's update is heard, every notification of an earlier snapshot has been heard too: a test can then claim
 * "exactly these notifications" (and "none") without sleeping.
 */
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';

import type { Skill } from '@modelcontextprotocol/client/ext/skills';

import { converge } from './converge.js';
import type { ExpectedSkill } from './disk.js';
import { isEvent, type LogFields, type LogLine } from './logs.js';
import { connect, type Connection, type Era, ERAS } from './server.js';
import { makeTree, removeTree, skillMd } from './tree.js';
import { WAIT_MS, waitFor } from './wait.js';
import type { Wire } from './wire.js';

export type { ExpectedSkill } from './disk.js';
export type { LogLine } from './logs.js';
export { WAIT_MS, waitFor, type WaitOptions } from './wait.js';

/**
 * The eras live tests run in: a 2025-era host (`resources/subscribe`) and a 2026-07-28 host (`subscriptions/listen`).
 */
export const LIVE_ERAS = [ERAS[1], ERAS[2]] as const;

/** The barrier skill, served from its own root so that tests may delete the root under test. */
export const SENTINEL_SKILL = 'skill://sentinel/SKILL.md';
export const SENTINEL_URI = 'skill://sentinel/tick.txt';

/** One change notification as the host received it. */
export interface Heard {
  readonly method: 'list_changed' | 'updated';
  readonly uri?: string;
}

/** What a stretch of notifications amounts to (the sentinel's own updates left out). */
export interface HeardSummary {
  /** At least one `notifications/resources/list_changed`. */
  readonly listChanged: boolean;
  /** Distinct URIs of `notifications/resources/updated`, sorted. */
  readonly updated: string[];
}

export interface LiveServer {
  readonly connection: Connection;
  /** The server process (for `converge`: its log says when the catalog was swapped). */
  readonly wire: Wire;
  readonly era: Era;
  /** Every change notification heard so far, in arrival order. */
  readonly heard: Heard[];
  /** Index into `heard` to summarize from later. */
  mark(): number;
  /** What was heard since `mark`, without the sentinel's updates. */
  heardSince(mark: number): HeardSummary;
  /** Parsed stderr lines so far. */
  logs(): readonly LogLine[];
  /** Resolves with the first stderr log line (so far or to come) whose `event` is `event` and that carries `fields`. */
  waitForEvent(event: string, fields?: LogFields, timeoutMs?: number): Promise<LogLine>;
  /** The whole listing (every page, the sentinel left out), verified by the SDK's `SkillsClient`. */
  list(): Promise<Skill[]>;
  /** The barrier: resolves once every notification due for earlier changes has been heard. Needs the watcher. */
  settle(): Promise<void>;
  /**
   * Stops `updated` notifications for `uri`: `resources/unsubscribe` on a 2025-era connection; on 2026-07-28 the
   * listen stream is closed and reopened without it (the acknowledgement is awaited).
   */
  unsubscribe(uri: string): Promise<void>;
  /**
   * Reads every file of every listed skill through `SkillsClient` (size, digest, frontmatter checked) and compares with
   * disk.
   */
  verifyReads(expected: readonly ExpectedSkill[]): Promise<void>;
  close(): Promise<void>;
}

export interface LiveOptions {
  readonly era: Era;
  /** URIs whose `updated` notifications the host asks for (the sentinel's is added). */
  readonly subscribe: readonly string[];
  /** Extra CLI flags (`--no-watch`, `--poll 100`). */
  readonly flags?: readonly string[];
  /** Extra environment of the server (`NODE_OPTIONS` with a `--require` preload). */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Spawns the server on `roots` plus a sentinel root, records notifications, subscribes (2025 era: `resources/subscribe`
 * per URI; 2026-07-28: `client.listen` with `resourcesListChanged` and `resourceSubscriptions`), and waits until the
 * watcher is ready (the `watching` log event, unless `--no-watch`) and the first `skills/list` answered.
 */
export async function startLive(roots: readonly string[], options: LiveOptions): Promise<LiveServer> {
  const sentinelRoot = await makeTree({
    'sentinel/SKILL.md': skillMd('sentinel', 'Barrier for live tests.'),
    'sentinel/tick.txt': 'tick\n',
  });
  const flags = options.flags ?? [];
  const watching = !flags.includes('--no-watch');
  const connection = await connect([...roots, sentinelRoot, ...flags], options.era, { env: options.env ?? {} });
  const heard: Heard[] = [];
  connection.client.setNotificationHandler('notifications/resources/list_changed', () => {
    heard.push({ method: 'list_changed' });
  });
  connection.client.setNotificationHandler('notifications/resources/updated', (notification) => {
    heard.push({ method: 'updated', uri: notification.params.uri });
  });
  let subscriptions = [...options.subscribe, SENTINEL_URI];
  const modern = options.era.label === '2026-07-28';
  let closeListen: (() => Promise<void>) | undefined;
  const listen = async (): Promise<void> => {
    const subscription = await connection.client.listen({
      resourcesListChanged: true,
      resourceSubscriptions: subscriptions,
    });
    closeListen = () => subscription.close();
  };
  if (modern) await listen();
  else for (const uri of subscriptions) await connection.client.subscribeResource({ uri });

  const { wire } = connection;
  const waitForEvent = (event: string, fields: LogFields = {}, timeoutMs = WAIT_MS): Promise<LogLine> =>
    wire.waitForLog((line) => isEvent(line, event, fields), { timeoutMs });
  const list = async (): Promise<Skill[]> => (await connection.list()).filter((skill) => skill.uri !== SENTINEL_SKILL);
  const sentinelDir = path.join(sentinelRoot, 'sentinel');

  if (watching) await waitForEvent('watching');
  await connection.list();

  let ticks = 0;
  const server: LiveServer = {
    connection,
    wire,
    era: options.era,
    heard,
    mark: () => heard.length,
    heardSince: (mark) => summarize(heard.slice(mark)),
    logs: () => wire.logs(),
    waitForEvent,
    list,
    async settle() {
      if (!watching) throw new Error('settle() needs the watcher');
      const mark = heard.length;
      ticks += 1;
      // A new size each time, so that the barrier does not depend on the server noticing same-size changes.
      await writeAtomically(path.join(sentinelDir, 'tick.txt'), `tick ${'.'.repeat(ticks)}\n`);
      await waitFor(() => heard.slice(mark).some((item) => item.method === 'updated' && item.uri === SENTINEL_URI), {
        describe: () =>
          `the sentinel's update never arrived; heard ${JSON.stringify(heard.slice(mark))}\nstderr:\n${connection.stderr()}`,
      });
    },
    async unsubscribe(uri) {
      subscriptions = subscriptions.filter((candidate) => candidate !== uri);
      if (!modern) {
        await connection.client.unsubscribeResource({ uri });
        return;
      }
      await closeListen?.();
      await listen();
    },
    async verifyReads(expected) {
      const listed = await list();
      for (const want of expected) {
        const skill = listed.find((candidate) => candidate.uri === want.uri);
        if (skill === undefined) throw new Error(`${want.uri} is not listed`);
        const base = want.uri.slice(0, -'/SKILL.md'.length);
        for (const resource of skill.resources === 'dynamic' ? [] : skill.resources) {
          const file = await connection.skills.read(skill, resource.uri);
          if (!file.verified) throw new Error(`${resource.uri} was not verified`);
          const onDisk = readFileSync(path.join(want.dir, ...decodeRel(resource.uri.slice(base.length + 1))));
          if (!Buffer.from(file.bytes).equals(onDisk)) throw new Error(`${resource.uri}: bytes read differ from disk`);
        }
      }
    },
    async close() {
      await closeListen?.().catch(() => undefined);
      await connection.close();
      await removeTree(sentinelRoot);
    },
  };
  return server;
}

function summarize(items: readonly Heard[]): HeardSummary {
  const updated = new Set<string>();
  for (const item of items)
    if (item.method === 'updated' && item.uri !== SENTINEL_URI && item.uri !== undefined) updated.add(item.uri);
  return { listChanged: items.some((item) => item.method === 'list_changed'), updated: [...updated].sort() };
}

function decodeRel(rel: string): string[] {
  return rel.split('/').map((segment) => decodeURIComponent(segment));
}

let tempCounter = 0;

/**
 * Writes `contents` the way editors save: into a temp file with an ignored name (`.<name>.tmp-<n>`) next to the target,
 * then `rename` over it, so the target is never seen half-written.
 */
export async function writeAtomically(file: string, contents: string | Uint8Array): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}-${++tempCounter}`);
  await fsp.writeFile(temp, contents);
  await fsp.rename(temp, file);
}

/** Writes a whole tree spec (relative path → contents) with {@link writeAtomically}, in key order. */
export async function writeFilesAtomically(root: string, files: Record<string, string | Uint8Array>): Promise<void> {
  for (const [rel, contents] of Object.entries(files))
    await writeAtomically(path.join(root, ...rel.split('/')), contents);
}

/** The tree most live tests start from: two skills, one with a nested skill, text and binary files. */
export interface BaseTree {
  readonly root: string;
  readonly alpha: ExpectedSkill;
  readonly inner: ExpectedSkill;
  readonly beta: ExpectedSkill;
  /** Every skill of the tree, as published at start. */
  readonly all: readonly ExpectedSkill[];
}

/**
 * The URIs a host subscribes to in the base tree (`alpha/scripts/run.sh`, `beta/notes.txt` and `alpha/inner/SKILL.md`
 * are left out on purpose).
 */
export const BASE_SUBSCRIBED = [
  'skill://alpha/SKILL.md',
  'skill://alpha/references/guide.md',
  'skill://alpha/inner/notes.md',
  'skill://beta/SKILL.md',
  'skill://beta/assets/data.bin',
] as const;

/** Creates the base tree in a fresh temp directory. */
export async function makeBaseTree(): Promise<BaseTree> {
  const root = await makeTree({
    'alpha/SKILL.md': skillMd('alpha', 'Alpha skill one.'),
    'alpha/references/guide.md': '# Guide\n\nFirst version.\n',
    'alpha/scripts/run.sh': '#!/bin/sh\necho one\n',
    'alpha/inner/SKILL.md': skillMd('inner', 'Inner skill nested in alpha.'),
    'alpha/inner/notes.md': 'inner notes v1\n',
    'beta/SKILL.md': skillMd('beta', 'Beta skill.'),
    'beta/notes.txt': 'beta notes v1\n',
    'beta/assets/data.bin': Uint8Array.from({ length: 1024 }, (_, index) => (index * 7) & 0xff),
  });
  const alpha = { uri: 'skill://alpha/SKILL.md', dir: path.join(root, 'alpha') };
  const inner = { uri: 'skill://alpha/inner/SKILL.md', dir: path.join(root, 'alpha', 'inner') };
  const beta = { uri: 'skill://beta/SKILL.md', dir: path.join(root, 'beta') };
  return { root, alpha, inner, beta, all: [alpha, inner, beta] };
}

/**
 * Starts a live server on the base tree `tree` in `era` (subscribed to {@link BASE_SUBSCRIBED}, with `flags`) and
 * waits until it lists the tree's skills; a server that never gets there is closed before the error is thrown.
 */
export async function startOnBaseTree(tree: BaseTree, era: Era, flags: readonly string[] = []): Promise<LiveServer> {
  const server = await startLive([tree.root], { era, subscribe: BASE_SUBSCRIBED, flags });
  try {
    await converge(server, tree.all);
  } catch (error) {
    await server.close();
    throw error;
  }
  return server;
}

/** The `afterEach` of a live test: closes `server` if one was started, then removes `dirs` (those that were made). */
export async function stopLive(
  server: LiveServer | undefined,
  ...dirs: readonly (string | undefined)[]
): Promise<void> {
  await server?.close();
  for (const dir of dirs) if (dir !== undefined) await removeTree(dir);
}
