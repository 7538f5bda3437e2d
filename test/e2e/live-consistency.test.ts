/**
 * "Never serve bytes that contradict the published entry" (docs/ARCHITECTURE.md, "Invariants") over real stdio: a file
 * whose bytes change while its size and mtime stay the same (mtime restored with `utimes`, atime left newer, so neither
 * a size/mtime check nor chokidar's "only the access time changed" filter sees it) is re-indexed by the read itself:
 * the read returns the new bytes, the entry then carries their digest, and hosts are notified. Both a 2025-era and a
 * 2026-07-28 host; with `--no-watch` (only the read can notice) and with the watcher racing the read.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { converge } from '../helpers/converge.js';
import { sha256 } from '../helpers/disk.js';
import {
  type BaseTree,
  LIVE_ERAS,
  type LiveServer,
  makeBaseTree,
  startOnBaseTree,
  stopLive,
  waitFor,
} from '../helpers/live.js';
import { errorCodeOf } from '../helpers/server.js';
import { skillMd } from '../helpers/tree.js';

/** A whole-second mtime, so that restoring it with `utimes` is exact to the nanosecond. */
const MTIME_S = 1_700_000_000;
const GUIDE_URI = 'skill://alpha/references/guide.md';
const OLD_GUIDE = '# Guide\n\nFirst version.\n';
const NEW_GUIDE = '# Guide\n\nFirst VERSION.\n';

/** Rewrites `file` with `contents` (same length as before) and puts its mtime back; returns size and mtime after. */
async function rewriteKeepingSizeAndMtime(file: string, contents: string): Promise<{ size: number; mtimeMs: number }> {
  await fsp.writeFile(file, contents);
  await fsp.utimes(file, new Date(), MTIME_S);
  const { size, mtimeMs } = await fsp.stat(file);
  return { size, mtimeMs };
}

/** The text of a `resources/read` result's single content. */
async function readText(live: LiveServer, uri: string): Promise<string | undefined> {
  const { contents } = await live.connection.client.readResource({ uri });
  expect(contents).toHaveLength(1);
  return (contents[0] as { text?: string }).text;
}

describe.each(LIVE_ERAS)('read consistency, era $label', (era) => {
  let server: LiveServer | undefined;
  let tree: BaseTree | undefined;
  afterEach(async () => {
    await stopLive(server, tree?.root);
    server = undefined;
  });

  async function start(flags: string[]): Promise<LiveServer> {
    tree = await makeBaseTree();
    for (const rel of ['alpha/references/guide.md', 'alpha/SKILL.md'])
      await fsp.utimes(path.join(tree.root, rel), MTIME_S, MTIME_S);
    server = await startOnBaseTree(tree, era, flags);
    return server;
  }

  it('--no-watch: a read of a file changed behind the index re-indexes first, serves the new bytes and notifies', async () => {
    const live = await start(['--no-watch']);
    const guidePath = path.join(tree!.alpha.dir, 'references', 'guide.md');
    const before = await fsp.stat(guidePath);
    expect(before.mtimeMs).toBe(MTIME_S * 1000);

    let mark = live.mark();
    expect(await rewriteKeepingSizeAndMtime(guidePath, NEW_GUIDE)).toEqual({
      size: before.size,
      mtimeMs: before.mtimeMs,
    });
    expect(Buffer.byteLength(NEW_GUIDE)).toBe(Buffer.byteLength(OLD_GUIDE));
    expect(await readText(live, GUIDE_URI)).toBe(NEW_GUIDE);
    const alpha = (await live.connection.skills.get(tree!.alpha.uri)).skill;
    const resources = alpha.resources === 'dynamic' ? [] : alpha.resources;
    expect(resources.find((resource) => resource.uri === GUIDE_URI)).toEqual({
      uri: GUIDE_URI,
      digest: sha256(NEW_GUIDE),
      size: before.size,
    });
    const verified = await live.connection.skills.read(alpha, 'references/guide.md');
    expect(verified).toMatchObject({ verified: true, text: NEW_GUIDE });
    await waitFor(() => live.heardSince(mark).updated.includes(GUIDE_URI));
    expect(live.heardSince(mark)).toEqual({ listChanged: false, updated: [GUIDE_URI] });
    expect((await live.waitForEvent('reindex'))['uri']).toBe(GUIDE_URI);

    // The same for SKILL.md, whose new description (same length) also changes the listing.
    const manifestPath = path.join(tree!.alpha.dir, 'SKILL.md');
    const manifest = skillMd('alpha', 'Alpha skill two.');
    expect(Buffer.byteLength(manifest)).toBe((await fsp.stat(manifestPath)).size);
    mark = live.mark();
    await rewriteKeepingSizeAndMtime(manifestPath, manifest);
    expect(await readText(live, tree!.alpha.uri)).toBe(manifest);
    const entry = (await live.connection.skills.get(tree!.alpha.uri)).skill;
    expect(entry.frontmatter['description']).toBe('Alpha skill two.');
    expect(await live.connection.skills.read(entry)).toMatchObject({
      verified: true,
      text: manifest,
      frontmatter: { name: 'alpha', description: 'Alpha skill two.' },
    });
    await waitFor(() => live.heardSince(mark).listChanged && live.heardSince(mark).updated.includes(tree!.alpha.uri));
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [tree!.alpha.uri] });
    expect(await live.list()).toEqual(expect.arrayContaining([entry]));

    // A file deleted behind the index: the read re-indexes, finds nothing to serve (-32602) and announces the
    // withdrawal.
    mark = live.mark();
    await fsp.rm(path.join(tree!.beta.dir, 'notes.txt'));
    expect(await errorCodeOf(live.connection.client.readResource({ uri: 'skill://beta/notes.txt' }))).toBe(-32602);
    await waitFor(() => live.heardSince(mark).listChanged);
    expect(live.heardSince(mark)).toEqual({ listChanged: true, updated: [] });
    await converge(live, tree!.all);
  });

  it('watching: a read racing the watcher still returns the new bytes, and the entry then carries their digest', async () => {
    const live = await start([]);
    const guidePath = path.join(tree!.alpha.dir, 'references', 'guide.md');
    const mark = live.mark();
    await rewriteKeepingSizeAndMtime(guidePath, NEW_GUIDE);
    // No wait: the read may come before or after the watcher's rebuild.
    expect(await readText(live, GUIDE_URI)).toBe(NEW_GUIDE);
    const alpha = (await live.connection.skills.get(tree!.alpha.uri)).skill;
    expect(
      alpha.resources === 'dynamic' ? [] : alpha.resources.find((resource) => resource.uri === GUIDE_URI),
    ).toMatchObject({ digest: sha256(NEW_GUIDE) });
    expect(await live.connection.skills.read(alpha, GUIDE_URI)).toMatchObject({ verified: true, text: NEW_GUIDE });
    await live.settle();
    expect(live.heardSince(mark)).toEqual({ listChanged: false, updated: [GUIDE_URI] });
    await live.verifyReads(tree!.all);
  });
});
