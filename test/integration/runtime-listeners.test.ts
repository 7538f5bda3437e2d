/**
 * No error vanishes (docs/ARCHITECTURE.md, "Runtime"): a swap listener or a runtime event listener that throws is
 * logged as `listener-failed`, the other listeners still hear the change, and the new snapshot is served. Runs the
 * real runtime in process on a real, watched directory.
 */
import { Writable } from 'node:stream';

import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';

import type { Config } from '../../src/config.js';
import { DEFAULT_GIT_LIMITS, DEFAULT_GIT_POLL_MS } from '../../src/roots/git/settings.js';
import { Runtime, type RuntimeChange } from '../../src/runtime.js';
import { addToTree, makeTree, removeTree, skillMd } from '../helpers/tree.js';
import { waitFor } from '../helpers/wait.js';

/** A pino logger writing JSON lines into `lines`. */
function memoryLogger(lines: Record<string, unknown>[]): pino.Logger {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return pino({ level: 'info' }, stream);
}

function configFor(dir: string): Config {
  return {
    sources: [{ kind: 'folder', root: { dir, prefix: [] } }],
    rootKinds: {
      git: { pollMs: DEFAULT_GIT_POLL_MS, allow: [], limits: DEFAULT_GIT_LIMITS, token: undefined, env: {} },
    },
    cacheDir: dir,
    ttlMs: undefined,
    cacheScope: 'private',
    logLevel: 'info',
    pageSize: 100,
    watch: true,
    digestCache: false,
    pollMs: undefined,
    strict: false,
    symlinks: 'within',
    compat: 'auto',
    catalogMax: 4096,
    resources: 'skills',
  };
}

describe('listeners that throw', () => {
  let root: string | undefined;
  let runtime: Runtime | undefined;
  afterEach(async () => {
    runtime?.close();
    if (root !== undefined) await removeTree(root);
  });

  it('are logged as listener-failed; the other listeners hear the change and the new snapshot is served', async () => {
    root = await makeTree({ 'alpha/SKILL.md': skillMd('alpha', 'First.') });
    const lines: Record<string, unknown>[] = [];
    const exits: number[] = [];
    runtime = new Runtime(configFor(root), {
      logger: memoryLogger(lines),
      version: 'test',
      exit: (code) => exits.push(code),
    });
    runtime.store.onSwap(() => {
      throw new Error('a swap listener broke');
    });
    runtime.on('changed', () => {
      throw new Error('an adapter broke');
    });
    const changes: RuntimeChange[] = [];
    runtime.on('changed', (change) => changes.push(change));
    await runtime.start();
    expect(runtime.store.current.ordered.map((skill) => skill.uri)).toEqual(['skill://alpha/SKILL.md']);

    await addToTree(root, { 'beta/SKILL.md': skillMd('beta', 'Second.') });
    await waitFor(() => changes.length > 0, { describe: () => `no change heard:\n${JSON.stringify(lines)}` });
    expect(runtime.store.current.ordered.map((skill) => skill.uri)).toEqual([
      'skill://alpha/SKILL.md',
      'skill://beta/SKILL.md',
    ]);
    expect(changes[0]?.diff.skillsChanged).toEqual(['skill://beta/SKILL.md']);
    const failures = lines
      .filter((line) => line['event'] === 'listener-failed')
      .map((line) => ({ on: line['on'], level: line['level'], message: (line['err'] as { message: string }).message }));
    // The first build's swap, then the update's: the runtime's own listener (registered first) emits `changed`.
    expect(failures).toEqual([
      { on: 'swap', level: 50, message: 'a swap listener broke' },
      { on: 'changed', level: 50, message: 'an adapter broke' },
      { on: 'swap', level: 50, message: 'a swap listener broke' },
    ]);
    expect(exits).toEqual([]);
  });
});
