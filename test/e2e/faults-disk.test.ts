/**
 * Fault injection on the disk between indexing and reading: a served file deleted,
 * truncated, grown or replaced, a file replaced by a directory or a link out of the root, a directory replaced by a
 * file, a whole skill replaced by a file. Over real stdio, on real temp trees, with the watcher off (the index is
 * then certainly stale when the read arrives) and on (the read races the watcher).
 *
 * Each fault names what the read must answer: the bytes now on disk (and the entry re-published with their digest
 * before they are served) or -32602 naming the URI. Either way the skill's entry ends equal to the disk, the
 * process keeps serving, and stdout carries only JSON-RPC.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { converge, getEntry } from '../helpers/converge.js';
import { sha256 } from '../helpers/disk.js';
import { waitForEvent } from '../helpers/logs.js';
import { makeTree, removeTree, skillMd } from '../helpers/tree.js';
import { bytesOfRead, errorOf, spawnWire, stopAll, type Wire } from '../helpers/wire.js';

/** What the read of the damaged URI must answer: the bytes now on disk, or -32602 with the message for `uri`. */
type Expect =
  { readonly kind: 'bytes' } | { readonly kind: 'error'; readonly code: -32602; message(uri: string): string };

const NOT_FOUND: Expect = { kind: 'error', code: -32602, message: (uri) => `Resource not found: ${uri}` };
const A_DIRECTORY: Expect = {
  kind: 'error',
  code: -32602,
  message: (uri) => `${uri} is a directory; use resources/directory/read`,
};

interface Fault {
  readonly name: string;
  /** The URI read after the fault (relative to the case's skill directory). */
  readonly target: string;
  readonly expect: Expect;
  /** Damages the case's skill directory. */
  apply(dir: string, root: string): Promise<void>;
}

const FAULTS: readonly Fault[] = [
  { name: 'deleted', target: 'notes.txt', expect: NOT_FOUND, apply: (dir) => fsp.rm(path.join(dir, 'notes.txt')) },
  {
    name: 'truncated in place',
    target: 'notes.txt',
    expect: { kind: 'bytes' },
    apply: (dir) => fsp.truncate(path.join(dir, 'notes.txt'), 3),
  },
  {
    name: 'overwritten in place, same size',
    target: 'notes.txt',
    expect: { kind: 'bytes' },
    apply: async (dir) => {
      const handle = await fsp.open(path.join(dir, 'notes.txt'), 'r+');
      await handle.write(Buffer.from('NOTES'), 0, 5, 0);
      await handle.close();
    },
  },
  {
    name: 'grown',
    target: 'notes.txt',
    expect: { kind: 'bytes' },
    apply: (dir) => fsp.appendFile(path.join(dir, 'notes.txt'), 'appended line\n'),
  },
  {
    name: 'replaced by rename, same size',
    target: 'notes.txt',
    expect: { kind: 'bytes' },
    apply: async (dir) => {
      const size = (await fsp.stat(path.join(dir, 'notes.txt'))).size;
      await fsp.writeFile(path.join(dir, '.swap'), 'x'.repeat(size));
      await fsp.rename(path.join(dir, '.swap'), path.join(dir, 'notes.txt'));
    },
  },
  {
    name: 'replaced by a directory',
    target: 'notes.txt',
    expect: A_DIRECTORY,
    apply: async (dir) => {
      await fsp.rm(path.join(dir, 'notes.txt'));
      await fsp.mkdir(path.join(dir, 'notes.txt'));
      await fsp.writeFile(path.join(dir, 'notes.txt', 'inside.md'), 'inside\n');
    },
  },
  {
    name: 'replaced by a link out of the root',
    target: 'notes.txt',
    expect: NOT_FOUND,
    apply: async (dir, root) => {
      await fsp.rm(path.join(dir, 'notes.txt'));
      await fsp.symlink(outsideOf(root), path.join(dir, 'notes.txt'));
    },
  },
  {
    name: 'its directory replaced by a file',
    target: 'refs/guide.md',
    expect: NOT_FOUND,
    apply: async (dir) => {
      await fsp.rm(path.join(dir, 'refs'), { recursive: true });
      await fsp.writeFile(path.join(dir, 'refs'), 'refs is a file now\n');
    },
  },
];

/** A file next to the root (outside it) that a link inside the root points at. */
function outsideOf(root: string): string {
  return `${root}-outside-secret.txt`;
}

/** Every case gets its own skill, so that the faults of one never touch another. */
function caseSkill(fault: Fault): string {
  return `case-${FAULTS.indexOf(fault)}`;
}

function treeSpec(): Record<string, string | Uint8Array> {
  const spec: Record<string, string | Uint8Array> = {};
  for (const fault of FAULTS) {
    const name = caseSkill(fault);
    spec[`${name}/SKILL.md`] = skillMd(name, `Fault case, ${fault.name}.`);
    spec[`${name}/notes.txt`] = `notes of ${name}, version one\n`;
    spec[`${name}/refs/guide.md`] = `# guide of ${name}\n`;
    spec[`${name}/refs/deep/more.md`] = `more of ${name}\n`;
    spec[`${name}/assets/data.bin`] = Uint8Array.from({ length: 4096 }, (_, index) => (index * 31) & 0xff);
  }
  spec['whole/SKILL.md'] = skillMd('whole', 'A skill whose directory becomes a file.');
  spec['whole/data.txt'] = 'whole data\n';
  return spec;
}

describe.each([
  ['--no-watch (the index is stale when the read arrives)', ['--no-watch']],
  ['watching (the read races the watcher)', [] as string[]],
])('a served file damaged between indexing and reading, %s', (_label, flags) => {
  let root: string;
  let wire: Wire;
  beforeAll(async () => {
    root = await makeTree(treeSpec());
    await fsp.writeFile(outsideOf(root), 'secret\n');
    wire = spawnWire({ args: [...flags, root] });
    await wire.handshake();
    if (!flags.includes('--no-watch')) await waitForEvent(wire.stderr, 'watching');
    await converge(wire, root);
  });
  afterAll(async () => {
    await stopAll();
    await removeTree(root);
    await fsp.rm(outsideOf(root), { force: true });
  });

  it.each(FAULTS.map((fault) => [fault.name, fault] as const))('%s', async (_name, fault) => {
    const name = caseSkill(fault);
    const dir = path.join(root, name);
    const skillUri = `skill://${name}/SKILL.md`;
    const uri = `skill://${name}/${fault.target}`;
    expect((await getEntry(wire, skillUri))?.resources.map((file) => file.uri)).toContain(uri);
    await fault.apply(dir, root);

    const response = await wire.request('resources/read', { uri });
    const error = errorOf(response);
    if (fault.expect.kind === 'error') {
      expect(error, JSON.stringify(response).slice(0, 300)).toEqual({
        code: fault.expect.code,
        message: fault.expect.message(uri),
      });
    } else {
      expect(error, 'the read failed instead of serving the bytes now on disk').toBeUndefined();
      const served = bytesOfRead(response);
      expect(served.equals(await fsp.readFile(path.join(dir, ...fault.target.split('/'))))).toBe(true);
      // The entry published when the read was answered already carries the served bytes' digest.
      const entry = await getEntry(wire, skillUri);
      expect(entry?.resources.find((file) => file.uri === uri)).toEqual({
        uri,
        digest: sha256(served),
        size: served.length,
      });
    }

    // The skill's entry ends equal to the disk, and every file it publishes reads back with its digest.
    const entry = (await converge(wire, root)).find((skill) => skill.uri === skillUri);
    for (const file of entry?.resources ?? []) {
      const bytes = bytesOfRead(await wire.request('resources/read', { uri: file.uri }));
      expect(sha256(bytes), file.uri).toBe(file.digest);
    }
    expect((await wire.request('ping'))['result']).toEqual({});
    expect(wire.badLines).toEqual([]);
  });

  it('a whole skill directory replaced by a file: its files answer -32602 and the skill leaves skills/list', async () => {
    const uri = 'skill://whole/data.txt';
    expect((await getEntry(wire, 'skill://whole/SKILL.md'))?.resources.map((file) => file.uri)).toContain(uri);
    await fsp.rm(path.join(root, 'whole'), { recursive: true });
    await fsp.writeFile(path.join(root, 'whole'), 'a file where a skill was\n');
    expect(errorOf(await wire.request('resources/read', { uri }))).toEqual({
      code: -32602,
      message: `Resource not found: ${uri}`,
    });
    const listed = await converge(wire, root);
    expect(listed.map((skill) => skill.uri)).not.toContain('skill://whole/SKILL.md');
    expect(wire.running()).toBe(true);
    expect(wire.badLines).toEqual([]);
  });
});
