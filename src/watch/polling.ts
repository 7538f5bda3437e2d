/**
 * Polling (docs/ARCHITECTURE.md, "Watching": `--poll`, and the fallback when the OS refuses more watches): one pass
 * `stat`s each directory the walk listed (a changed mtime or inode is a `rename` of it) and each file the index holds
 * (a changed identity is a `change`).
 */
import { type Stats, statSync } from 'node:fs';

import { sameIdentity } from '../index/record.js';
import { createSlicer } from '../index/slice.js';
import type { FileNode } from '../index/types.js';
import type { WatchEvent } from './classify.js';

/** Polling interval when the OS refused watches and `--poll` gave none (ms). */
export const FALLBACK_POLL_MS = 1000;

/** A file the index holds, for polling. */
export interface IndexedFile {
  readonly rel: string;
  readonly real: string;
  readonly node: FileNode;
}

/** A listed directory as polling last saw it. */
export interface PolledDir {
  readonly real: string;
  mtimeMs: number;
  ino: number;
}

/** Records what `dir` looks like now (when the walk lists it, and after each pass). */
export function notePolledDir(dir: PolledDir): void {
  const stat = statOrUndefined(dir.real);
  dir.mtimeMs = stat?.mtimeMs ?? 0;
  dir.ino = stat?.ino ?? 0;
}

/**
 * One polling pass over one root, yielding to the event loop as the walk does.
 *
 * @param rootIndex the root's index (events are reported under it).
 * @param dirs its listed directories by root-relative path.
 * @param files the files the index holds for it.
 * @param push told each change found.
 */
export async function pollRoot(
  rootIndex: number,
  dirs: ReadonlyMap<string, PolledDir>,
  files: Iterable<IndexedFile>,
  push: (event: WatchEvent) => void,
): Promise<void> {
  const slice = createSlicer();
  for (const [rel, dir] of dirs) {
    const stat = statOrUndefined(dir.real);
    if (stat === undefined || stat.mtimeMs !== dir.mtimeMs || stat.ino !== dir.ino) {
      dir.mtimeMs = stat?.mtimeMs ?? 0;
      dir.ino = stat?.ino ?? 0;
      push({ rootIndex, kind: 'rename', rel });
    }
    await slice();
  }
  for (const file of files) {
    const stat = statOrUndefined(file.real);
    if (stat === undefined || !stat.isFile() || !sameIdentity(file.node, stat))
      push({ rootIndex, kind: 'change', rel: file.rel });
    await slice();
  }
}

function statOrUndefined(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}
