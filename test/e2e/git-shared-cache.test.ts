/**
 * One cache, many servers (docs/git-roots.md, "Shared caches"): processes started at the same moment on one cache
 * directory and one git root (a bare repository over `file://`, real git) all start and serve the same commit, cold
 * and warm, and download it once; servers following one branch all move to a pushed commit without ever reporting
 * the remote as unreachable (git's own `shallow.lock` contention was reported as `cannot fetch …`).
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { createRemote, type TestRemote } from '../helpers/git-repo.js';
import { eventsOf, isEvent } from '../helpers/logs.js';
import { connect, type Connection } from '../helpers/server.js';
import { makeTempDir, removeTree, skillMd } from '../helpers/tree.js';
import { spawnWire, stopAll } from '../helpers/wire.js';

const PROVENANCE = 'dev.skills-serve/source';

/** How many processes share the cache. */
const SERVERS = 8;

/** Bound of each wait here (ms): 8 Node processes starting at once on a loaded 2-core machine. */
const SLOW_MS = 90_000;

/** The `commit` of each entry's provenance in a `skills/list` or manifest entry list. */
function commitsOf(skills: readonly unknown[]): (string | undefined)[] {
  return skills.map((skill) => (skill as { _meta?: Record<string, { commit?: string }> })._meta?.[PROVENANCE]?.commit);
}

/**
 * The commits a server's `skills/list` names, or why it could not answer (the `msg` of its last log line: a server
 * whose start failed exits after answering `initialize`).
 */
async function listedCommits(connection: Connection): Promise<(string | undefined)[] | string> {
  try {
    return commitsOf(await connection.list());
  } catch {
    await connection.wire.exited(SLOW_MS);
    return `no answer: ${String(connection.wire.logs().at(-1)?.msg)}`;
  }
}

/** The pack files of the cache's one bare repository (one per download). */
async function packsIn(cache: string): Promise<string[]> {
  const [remoteDir] = await fsp.readdir(path.join(cache, 'git'));
  const packDir = path.join(cache, 'git', remoteDir ?? '', 'repo.git', 'objects', 'pack');
  return (await fsp.readdir(packDir)).filter((name) => name.endsWith('.pack'));
}

/**
 * Runs `skills-serve manifest <root> --cache-dir <cache>` {@link SERVERS} times at once.
 *
 * @returns each run's exit code, the commit of each entry of its manifest, and its stderr.
 */
async function manifests(
  root: string,
  cache: string,
): Promise<{ code: number | null; commits: unknown[]; stderr: string }[]> {
  const wires = Array.from({ length: SERVERS }, () =>
    spawnWire({ args: ['manifest', root, '--cache-dir', cache], keepLines: true }),
  );
  return Promise.all(
    wires.map(async (wire) => {
      const { code } = await wire.exited(SLOW_MS, 'manifest to exit');
      let commits: unknown[] = [];
      try {
        commits = commitsOf((JSON.parse(wire.lines.join('\n')) as { skills: unknown[] }).skills);
      } catch {
        // No manifest: the exit code and stderr say why.
      }
      return { code, commits, stderr: wire.stderr() };
    }),
  );
}

describe('one cache shared by servers started at once', () => {
  const cleanup: string[] = [];
  const connections: Connection[] = [];
  afterEach(async () => {
    await Promise.all(connections.splice(0).map((connection) => connection.close()));
    await stopAll();
    for (const dir of cleanup.splice(0)) await removeTree(dir);
  });

  async function makeRemote(): Promise<{ remote: TestRemote; first: string; cache: string }> {
    const remote = await createRemote();
    const first = await remote.commit({ 'skills/alpha/SKILL.md': skillMd('alpha', 'Alpha, from git.') });
    const cache = await makeTempDir();
    cleanup.push(cache, remote.projectRoot, path.dirname(remote.work));
    return { remote, first, cache };
  }

  it(
    `${SERVERS} manifest processes on one empty cache all exit 0 with one commit, downloaded once; again warm`,
    async () => {
      const { remote, first, cache } = await makeRemote();
      const root = `git+${remote.fileUrl}#main:skills`;
      for (const round of ['cold', 'warm']) {
        const runs = await manifests(root, cache);
        expect(
          runs.map((run) => ({
            round,
            code: run.code,
            commits: run.commits,
            warnings: eventsOf(run.stderr, 'git-warning'),
          })),
          runs.map((run) => run.stderr).join('\n'),
        ).toEqual(runs.map(() => ({ round, code: 0, commits: [first], warnings: [] })));
        expect(await packsIn(cache)).toHaveLength(1);
      }
    },
    4 * SLOW_MS,
  );

  it(
    `${SERVERS} servers following one branch start together, serve one commit, and all move to a push without "cannot fetch"`,
    async () => {
      const { remote, first, cache } = await makeRemote();
      const args = [`git+${remote.fileUrl}#main:skills`, '--cache-dir', cache, '--git-poll', '1000'];
      const started = await Promise.allSettled(Array.from({ length: SERVERS }, () => connect(args)));
      for (const outcome of started) if (outcome.status === 'fulfilled') connections.push(outcome.value);
      expect(started.map((outcome) => outcome.status)).toEqual(started.map(() => 'fulfilled'));
      const listed = await Promise.all(connections.map(listedCommits));
      expect(listed).toEqual(connections.map(() => [first]));

      const next = await remote.commit({ 'skills/beta/SKILL.md': skillMd('beta', 'Beta, pushed later.') });
      // Each server logs the move, then indexes the new tree (2 skills) and swaps it in.
      await Promise.all(
        connections.map(async ({ wire }) => {
          const movedLine = await wire.waitForLog((line) => isEvent(line, 'git-moved', { commit: next }), {
            timeoutMs: SLOW_MS,
          });
          await wire.waitForLog((line) => isEvent(line, 'index-updated', { skills: 2 }), {
            after: wire.logs().indexOf(movedLine) + 1,
            timeoutMs: SLOW_MS,
          });
        }),
      );
      const moved = await Promise.all(connections.map(listedCommits));
      expect(moved).toEqual(connections.map(() => [next, next]));
      // Not one poll failed: no warning (`cannot fetch …`), so no `reachable again` either.
      expect(
        connections.flatMap((connection) => [
          ...eventsOf(connection.stderr(), 'git-warning'),
          ...eventsOf(connection.stderr(), 'git-reachable'),
        ]),
      ).toEqual([]);
      expect(await packsIn(cache)).toHaveLength(2);
    },
    4 * SLOW_MS,
  );
});
