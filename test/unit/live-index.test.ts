/**
 * The live index's queue (src/watch/live-index.ts) over a scripted builder: what each rebuild is handed. The builder
 * stands in for the filesystem-facing IndexBuilder (which the integration and e2e tests run for real) so that the
 * order of rebuilds, retries and distrusted paths can be set exactly.
 */
import { describe, expect, it } from 'vitest';

import type { IndexBuilder } from '../../src/index/build.js';
import type { Region } from '../../src/index/region.js';
import type { ServedFile } from '../../src/index/snapshot.js';
import { EMPTY_SNAPSHOT } from '../../src/index/snapshot.js';
import { SnapshotStore } from '../../src/index/store.js';
import { FIRST_RETRY_MS, LiveIndex } from '../../src/watch/live-index.js';
import { waitFor } from '../helpers/wait.js';

/** A builder whose rebuilds record what they were given and end with the retries the script says. */
function scriptedBuilder(retriesPerRebuild: Region[][]) {
  const calls: { regions: readonly Region[]; distrusted: string[] }[] = [];
  let distrusted: string[] = [];
  let retries: Region[] = [];
  let release: (() => void) | undefined;
  const builder = {
    gate: undefined as Promise<void> | undefined,
    async buildAll() {
      return EMPTY_SNAPSHOT;
    },
    async rebuild(regions: readonly Region[]) {
      calls.push({ regions, distrusted });
      if (builder.gate !== undefined) await builder.gate;
      distrusted = []; // what IndexBuilder does at the end of every rebuild
      retries = retriesPerRebuild.shift() ?? [];
      return EMPTY_SNAPSHOT;
    },
    candidates: () => new Set<string>(['s']),
    regionsLinkedTo: () => [],
    distrust(realPath: string) {
      distrusted.push(realPath);
    },
    takeRetries() {
      const taken = retries.map((region) => ({ region, reason: 'EMFILE' }));
      retries = [];
      return taken;
    },
    hold() {
      builder.gate = new Promise((resolve) => (release = resolve));
    },
    letGo() {
      builder.gate = undefined;
      release?.();
    },
  };
  return { builder, calls };
}

const store = () =>
  new SnapshotStore((error) => {
    throw error;
  });

describe('LiveIndex', () => {
  it('retries every region that failed, when a second failure comes while the first waits for its timer', async () => {
    const a = { rootIndex: 0, rel: 'a' };
    const b = { rootIndex: 0, rel: 'b' };
    const { builder, calls } = scriptedBuilder([[a], [b]]);
    const live = new LiveIndex(builder as unknown as IndexBuilder, store(), () => undefined);
    await live.buildAll();
    await live.apply([{ rootIndex: 0, kind: 'rename', rel: 'a' }]); // fails: region a waits 100 ms
    await live.apply([{ rootIndex: 0, kind: 'rename', rel: 'b' }]); // fails too, while a waits
    await waitFor(() => calls.length === 3, { timeoutMs: 20 * FIRST_RETRY_MS });
    expect(calls.map((call) => call.regions.map((region) => region.rel))).toEqual([['a'], ['b'], ['a', 'b']]);
    live.close();
  });

  it('hands a distrusted path to the rebuild that takes the re-index, not to one already running', async () => {
    const { builder, calls } = scriptedBuilder([]);
    const live = new LiveIndex(builder as unknown as IndexBuilder, store(), () => undefined);
    await live.buildAll();
    builder.hold();
    const running = live.apply([{ rootIndex: 0, kind: 'rename', rel: 'other' }]);
    await waitFor(() => calls.length === 1);
    const file = { path: '/real/s/notes.md', rel: 's/notes.md', top: { rootIndex: 0 } } as unknown as ServedFile;
    const reindexed = live.reindexFile(file);
    builder.letGo();
    await Promise.all([running, reindexed]);
    expect(calls.map((call) => call.distrusted)).toEqual([[], ['/real/s/notes.md']]);
    live.close();
  });
});
