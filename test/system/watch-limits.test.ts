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
import { makeTree, removeTree, sha256, skillMd } from '../helpers/tree.js';
import { handshake, spawnRaw } from '../helpers/server.js';

const LIMIT_FILE = '/proc/sys/fs/inotify/max_user_watches';
const enabled = process.env['SKILLS_SERVE_SYSTEM_TESTS'] === '1' && process.getuid?.() === 0;
let root: string | undefined;
afterAll(async () => {
  if (root !== undefined) await removeTree(root);
});

it.runIf(enabled)('falls back to polling on ENOSPC, names the limit and how to raise it, and keeps following edits', async () => {
  root = await makeTree({ 's/SKILL.md': skillMd('s', 'Watched skill.'), 's/references/a.md': 'v1\n', 's/more/b.md': 'b\n' });
  const original = readFileSync(LIMIT_FILE, 'utf8').trim();
  const server = (() => {
    writeFileSync(LIMIT_FILE, '1');
    try {
      return spawnRaw([root]);
    } catch (error) {
      writeFileSync(LIMIT_FILE, original);
      throw error;
    }
  })();
  try {
    const deadline = Date.now() + 15_000;
    while (!server.stderr().includes('Falling back to polling') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  } finally {
    writeFileSync(LIMIT_FILE, original);
  }
  expect(server.stderr()).toContain('the OS refused more file watches (ENOSPC)');
  expect(server.stderr()).toContain('sysctl fs.inotify.max_user_watches=');
  await handshake(server);
  writeFileSync(path.join(root, 's/references/a.md'), 'v2, longer\n');
  let digest: string | undefined;
  for (let attempt = 0; attempt < 100 && digest !== sha256('v2, longer\n'); attempt++) {
    server.send({ jsonrpc: '2.0', id: 100 + attempt, method: 'skills/get', params: { uri: 'skill://s/SKILL.md' } });
    const answer = await server.waitFor((message) => message['id'] === 100 + attempt);
    const skill = (answer['result'] as { skill: { resources: { uri: string; digest: string }[] } }).skill;
    digest = skill.resources.find((resource) => resource.uri === 'skill://s/references/a.md')?.digest;
    if (digest !== sha256('v2, longer\n')) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(digest).toBe(sha256('v2, longer\n'));
  server.child.stdin?.end();
  expect(await server.exited()).toBe(0);
}, 60_000);
