/**
 * Fault injection on timing: a 2,000-skill tree written while the first build runs,
 * and a request storm while a large rebuild runs. Over real stdio, watching, on real temp trees.
 *
 * What must hold: every request is answered exactly once; every read serves bytes the server published for that URI
 * and never bytes it had already replaced before the read was sent (judged by {@link PublishedHistory} from the
 * `skills/list` / `skills/get` answers); errors are -32602 and only for what the churn removed; and once the disk
 * is quiet, the catalog is exactly the disk.
 */
import { mkdirSync, promises as fsp, writeFileSync } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { seededRandom as random } from '../../bench/load-tracker.mjs';
import { converge, listAll, reduceListing } from '../helpers/converge.js';
import { sha256 } from '../helpers/disk.js';
import { PublishedHistory } from '../helpers/faults.js';
import { waitFor } from '../helpers/live.js';
import { hasEvent, logReader, waitForEvent } from '../helpers/logs.js';
import { makeTempDir, removeTree, skillMd } from '../helpers/tree.js';
import { bytesOfRead, errorOf, type Message, resultOf, spawnWire, stopAll, type Wire } from '../helpers/wire.js';

const dirs: string[] = [];
afterEach(async () => {
  await stopAll();
  for (const dir of dirs.splice(0)) await removeTree(dir);
});

/** Writes `count` skills (`s0000`…) of three files each, synchronously (untimed setup). */
function writeFlatTree(root: string, count: number): string[] {
  const names: string[] = [];
  for (let index = 0; index < count; index++) {
    const name = `s${String(index).padStart(4, '0')}`;
    mkdirSync(path.join(root, name, 'refs'), { recursive: true });
    writeFileSync(path.join(root, name, 'SKILL.md'), skillMd(name, `Synthetic skill ${index}.`));
    writeFileSync(path.join(root, name, 'notes.md'), `notes of ${name}, version 1\n`.repeat(4));
    writeFileSync(path.join(root, name, 'refs', 'a.md'), `reference a of ${name}\n`.repeat(8));
    names.push(name);
  }
  return names;
}

/**
 * Edits, adds, removes, renames and breaks skills of a flat tree, one operation per call, each complete before the
 * next (a rename is `rename` then a rewrite of `SKILL.md` with the new name; in between the skill is invalid).
 * Content is never repeated, so a digest once replaced never comes back.
 */
class Churn {
  readonly #root: string;
  readonly #next: () => number;
  readonly live: string[];
  readonly removed = new Set<string>();
  ops = 0;
  #counter = 0;

  constructor(root: string, names: readonly string[], seed: number) {
    this.#root = root;
    this.live = [...names];
    this.#next = random(seed);
  }

  #pick(): string {
    return this.live[Math.floor(this.#next() * this.live.length)] as string;
  }

  async step(): Promise<void> {
    const roll = this.#next();
    const id = ++this.#counter;
    const dir = (name: string): string => path.join(this.#root, name);
    this.ops++;
    if (roll < 0.45) {
      const name = this.#pick();
      const file = this.#next() < 0.5 ? 'notes.md' : path.join('refs', 'a.md');
      await fsp
        .writeFile(path.join(dir(name), file), `edit ${id} of ${name}\n`.repeat(1 + (id % 7)))
        .catch(() => undefined);
    } else if (roll < 0.6) {
      const name = `n${String(id).padStart(5, '0')}`;
      await fsp.mkdir(dir(name));
      await fsp.writeFile(path.join(dir(name), 'notes.md'), `new skill ${id}\n`);
      await fsp.writeFile(path.join(dir(name), 'SKILL.md'), skillMd(name, `Added by churn ${id}.`));
      this.live.push(name);
    } else if (roll < 0.72) {
      const name = this.#pick();
      this.live.splice(this.live.indexOf(name), 1);
      this.removed.add(name);
      await fsp.rm(dir(name), { recursive: true, force: true });
    } else if (roll < 0.87) {
      const name = this.#pick();
      const renamed = `r${String(id).padStart(5, '0')}`;
      this.live.splice(this.live.indexOf(name), 1, renamed);
      this.removed.add(name);
      await fsp.rename(dir(name), dir(renamed));
      await fsp.writeFile(path.join(dir(renamed), 'SKILL.md'), skillMd(renamed, `Renamed by churn ${id}.`));
    } else {
      // Broken: no description. Fixed again with the next break roll that picks it, or left broken.
      const name = this.#pick();
      const manifest = path.join(dir(name), 'SKILL.md');
      const text = await fsp.readFile(manifest, 'utf8');
      await fsp.writeFile(
        manifest,
        text.includes('description:')
          ? `---\nname: ${name}\n---\n\nbroken by churn ${id}\n`
          : skillMd(name, `Fixed by churn ${id}.`),
      );
    }
  }
}

/** Judges every read against the history; returns the problems. */
function judgeReads(
  history: PublishedHistory,
  reads: readonly { uri: string; sentAt: number; answer: Message }[],
  mayBeGone: (uri: string) => boolean,
): string[] {
  const problems: string[] = [];
  for (const { uri, sentAt, answer } of reads) {
    const error = errorOf(answer);
    if (error !== undefined) {
      if (!(error.code === -32602 && mayBeGone(uri) && error.message.includes(uri)))
        problems.push(`${uri}: error ${error.code} ${error.message}`);
      continue;
    }
    const verdict = history.judge(uri, sha256(bytesOfRead(answer)), sentAt);
    if (verdict !== 'ok') problems.push(`${uri}: ${verdict} bytes`);
  }
  return problems;
}

/** Sends a ping after everything else and checks that each id got exactly one answer. */
async function expectEachAnsweredOnce(wire: Wire, ids: readonly string[]): Promise<void> {
  expect((await wire.request('ping', undefined, 30_000))['result']).toEqual({});
  const counts = ids.map((id) => wire.responses(id).length).filter((count) => count !== 1);
  expect(counts, 'requests not answered exactly once').toEqual([]);
}

describe('the tree written while the first build runs', () => {
  it('2,000 skills under churn from spawn on: requests sent during the build are answered, and the catalog ends equal to the disk', async () => {
    const root = await makeTempDir();
    dirs.push(root);
    const names = writeFlatTree(root, 2_000);
    const churn = new Churn(root, names, 2_000);
    const wire = spawnWire({ args: [root] });
    const logs = logReader(wire.stderr);
    let opsBeforeBuilt = -1;
    const churning = (async () => {
      // From spawn until the first build is served, then 100 operations more (the watcher's first rebuilds).
      while (opsBeforeBuilt < 0 || churn.ops < opsBeforeBuilt + 100) {
        await churn.step();
        if (opsBeforeBuilt < 0 && hasEvent(logs(), 'index-built')) opsBeforeBuilt = churn.ops;
        if (churn.ops > 20_000) throw new Error('the first build did not finish within 20,000 churn operations');
      }
    })();
    await wire.handshake();
    // A storm sent while the first build runs: it waits for the build, then every request is answered once.
    const early = [
      ...names.slice(0, 50).map((name) => ({ method: 'skills/get', params: { uri: `skill://${name}/SKILL.md` } })),
      ...Array.from({ length: 50 }, () => ({ method: 'skills/list', params: {} })),
    ];
    const ids = early.map(({ method, params }) => {
      const id = wire.nextId();
      wire.send({ jsonrpc: '2.0', id, method, params });
      return id;
    });
    await waitFor(() => ids.every((id) => wire.responses(id).length > 0), {
      timeoutMs: 60_000,
      describe: () => wire.stderr().slice(-1500),
    });
    for (const id of ids) {
      const answer = wire.responses(id)[0] as Message;
      const error = errorOf(answer);
      // skills/get of a skill the churn removed, renamed or broke is -32602; everything else is a result.
      if (error !== undefined) expect(error.code, JSON.stringify(error)).toBe(-32602);
    }
    await churning;
    expect(opsBeforeBuilt, 'no churn operation happened before the first build was served').toBeGreaterThan(0);

    await converge(wire, root, 60_000);
    const { skills } = await listAll(wire);
    const sample = skills.filter((_, index) => index % 20 === 0).flatMap((skill) => skill.resources);
    for (const file of sample)
      expect(sha256(bytesOfRead(await wire.request('resources/read', { uri: file.uri }))), file.uri).toBe(file.digest);
    await expectEachAnsweredOnce(wire, ids);
    expect(wire.badLines).toEqual([]);
  }, 180_000);
});

describe('a request storm during a rebuild', () => {
  it('400 skills rewritten, 40 added and 40 removed while 1,200 requests are in flight: answered once each, no replaced bytes served', async () => {
    const root = await makeTempDir();
    dirs.push(root);
    const names = writeFlatTree(root, 400);
    const wire = spawnWire({ args: [root] });
    await wire.handshake();
    await waitForEvent(wire.stderr, 'watching');
    await converge(wire, root, 30_000);

    const history = new PublishedHistory();
    const first = await listAll(wire);
    history.observe(first.skills, first.requestedAt, first.answeredAt);
    const files = first.skills.flatMap((skill) => skill.resources.map((file) => file.uri));
    const removed = new Set(names.filter((_, index) => index % 10 === 3));
    const gone = (uri: string): boolean => removed.has(new URL(uri).host);

    // The mass change (like a `git checkout` of another branch), written while the storm runs.
    const writing = (async () => {
      for (const name of names) {
        if (removed.has(name)) await fsp.rm(path.join(root, name), { recursive: true, force: true });
        else
          await fsp.writeFile(
            path.join(root, name, 'notes.md'),
            `notes of ${name}, version 2 after the rebuild\n`.repeat(3),
          );
      }
      for (let index = 0; index < 40; index++) {
        const name = `added${String(index).padStart(2, '0')}`;
        await fsp.mkdir(path.join(root, name));
        await fsp.writeFile(path.join(root, name, 'SKILL.md'), skillMd(name, `Added during the storm ${index}.`));
      }
    })();

    const reads: { uri: string; sentAt: number; answer: Message }[] = [];
    const ids: string[] = [];
    const others: Promise<void>[] = [];
    const pick = (index: number): string => files[(index * 7919) % files.length] as string;
    for (let wave = 0; wave < 6; wave++) {
      const batch: Promise<void>[] = [];
      for (let index = 0; index < 200; index++) {
        const n = wave * 200 + index;
        const kind = n % 5;
        const uri = pick(n);
        const skillUri = `${uri.slice(0, uri.indexOf('/', 'skill://'.length))}/SKILL.md`;
        const sentAt = performance.now();
        const id = wire.nextId();
        ids.push(id);
        const method = kind < 3 ? 'resources/read' : kind === 3 ? 'skills/get' : 'resources/directory/read';
        const params =
          kind < 3 ? { uri } : kind === 3 ? { uri: skillUri } : { uri: skillUri.slice(0, -'/SKILL.md'.length) };
        wire.send({ jsonrpc: '2.0', id, method, params });
        const answered = wire
          .waitFor((message) => message['id'] === id && !('method' in message), 60_000)
          .then((answer) => {
            const answeredAt = performance.now();
            if (method === 'resources/read') reads.push({ uri, sentAt, answer });
            else if (method === 'skills/get' && errorOf(answer) === undefined) {
              history.observe(
                reduceListing([resultOf<{ skill: { uri: string; resources: unknown } }>(answer).skill]),
                sentAt,
                answeredAt,
              );
            } else if (errorOf(answer) !== undefined && !(errorOf(answer)?.code === -32602 && gone(params.uri))) {
              throw new Error(`${method} ${params.uri}: ${JSON.stringify(errorOf(answer))}`);
            }
          });
        batch.push(answered);
      }
      // A full enumeration in every wave, observed like any answer.
      others.push(
        listAll(wire, 60_000).then((listing) =>
          history.observe(listing.skills, listing.requestedAt, listing.answeredAt),
        ),
      );
      await Promise.all(batch);
    }
    await Promise.all(others);
    await writing;
    await converge(wire, root, 30_000);
    const last = await listAll(wire);
    history.observe(last.skills, last.requestedAt, last.answeredAt);

    expect(judgeReads(history, reads, gone)).toEqual([]);
    await expectEachAnsweredOnce(wire, ids);
    for (const file of last.skills.flatMap((skill) => skill.resources).filter((_, index) => index % 10 === 0)) {
      expect(sha256(bytesOfRead(await wire.request('resources/read', { uri: file.uri }))), file.uri).toBe(file.digest);
    }
    expect(wire.badLines).toEqual([]);
  }, 120_000);
});
