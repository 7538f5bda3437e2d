/**
 * When the OS refuses file watches (here: the inotify watch limit, ENOSPC), the server says which limit was hit and
 * how to raise it, falls back to polling, and keeps following changes.
 *
 * This test lowers the machine-wide `fs.inotify.max_user_watches` for a few seconds, so it is not part of `npm test`
 * (other tests' watchers would hit the limit too): CI runs it alone (`npm run test:system`), as root, and it restores
 * the limit in every case.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { afterAll, expect, it } from 'vitest';

import { sha256 } from '../helpers/disk.js';
import { type LogLine, waitForEvent } from '../helpers/logs.js';
import { makeTree, removeTree, skillMd } from '../helpers/tree.js';
import { waitFor } from '../helpers/wait.js';
import { SERVER_DEFAULT_LOG_LEVEL, spawnWire } from '../helpers/wire.js';

const LIMIT_FILE = '/proc/sys/fs/inotify/max_user_watches';
const enabled = process.env['SKILLS_SERVE_SYSTEM_TESTS'] === '1' && process.getuid?.() === 0;
let root: string | undefined;
afterAll(async () => {
  if (root !== undefined) await removeTree(root);
});

it.runIf(enabled)(
  'falls back to polling on ENOSPC, names the limit and how to raise it, and keeps following edits',
  async () => {
    root = await makeTree({
      's/SKILL.md': skillMd('s', 'Watched skill.'),
      's/references/a.md': 'v1\n',
      's/more/b.md': 'b\n',
    });
    const original = readFileSync(LIMIT_FILE, 'utf8').trim();
    const server = (() => {
      writeFileSync(LIMIT_FILE, '1');
      try {
        return spawnWire({ args: [root], env: SERVER_DEFAULT_LOG_LEVEL });
      } catch (error) {
        writeFileSync(LIMIT_FILE, original);
        throw error;
      }
    })();
    let fallback: LogLine;
    try {
      fallback = await waitForEvent(server.stderr, 'watch-fallback');
    } finally {
      writeFileSync(LIMIT_FILE, original);
    }
    // Which limit was hit, how to raise it, and that this root is polled from now on.
    expect(fallback).toMatchObject({
      level: 40,
      root,
      code: 'ENOSPC',
      pollMs: 1000,
      hint: 'the inotify watch limit (fs.inotify.max_user_watches) was reached; raise it with `sysctl fs.inotify.max_user_watches=524288`',
    });
    await server.handshake();
    writeFileSync(path.join(root, 's/references/a.md'), 'v2, longer\n');
    let digest: string | undefined;
    let id = 100;
    await waitFor(
      async () => {
        const requestId = ++id;
        server.send({ jsonrpc: '2.0', id: requestId, method: 'skills/get', params: { uri: 'skill://s/SKILL.md' } });
        const answer = await server.waitFor((message) => message['id'] === requestId);
        const skill = (answer['result'] as { skill: { resources: { uri: string; digest: string }[] } }).skill;
        digest = skill.resources.find((resource) => resource.uri === 'skill://s/references/a.md')?.digest;
        return digest === sha256('v2, longer\n');
      },
      { intervalMs: 100, describe: () => `skill://s/references/a.md still has digest ${digest} while polling` },
    );
    server.child.stdin?.end();
    expect(await server.exited()).toEqual({ code: 0, signal: null });
  },
  60_000,
);
