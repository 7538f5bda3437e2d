/**
 * `skills-serve export --well-known DIR`: the discovery feed `--http` serves for the whole catalog, written as static
 * files (`DIR/.well-known/agent-skills/index.json` and one artifact per skill, URLs relative to the index), for any
 * static host or CDN. The artifacts are byte-identical to what `--http` serves for the same tree (`feed/feed.ts`).
 * Skills the feed leaves out are reported as warnings (docs/feed.md).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { artifactBytes, buildFeed, FEED_DIR, FEED_INDEX, type FileBytes, StaleFileError } from '../feed/feed.js';
import type { SourceSpec } from '../roots/kinds.js';
import { diagnosticLines, plural } from './check.js';
import { type CommandOptions, snapshotOf } from './snapshot-once.js';

/**
 * Builds the catalog once and writes its feed under `dir`. `DIR/.well-known/agent-skills/` is emptied first, so it
 * holds exactly the feed; nothing else under `dir` is touched.
 *
 * @param options.dir the directory the static host serves as the site's root (created when missing).
 * @returns the exit code: 0; 1 when a file changed while it was exported (run it again); a source that cannot be
 *   served exits with its error's code.
 */
export async function runExport(
  sources: readonly SourceSpec[],
  options: CommandOptions & { dir: string; cwd?: string },
): Promise<number> {
  const snapshot = await snapshotOf(sources, options);
  if (typeof snapshot === 'number') return snapshot;
  const read: FileBytes = async (file) => readFileSync(file.real);
  const feedDir = path.join(options.dir, FEED_DIR);
  try {
    const feed = await buildFeed(snapshot.ordered, read);
    rmSync(feedDir, { recursive: true, force: true });
    mkdirSync(feedDir, { recursive: true });
    writeFileSync(path.join(feedDir, FEED_INDEX), feed.index);
    for (const [file, { artifact }] of feed.artifacts) {
      const target = path.join(feedDir, file);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, await artifactBytes(artifact, read));
    }
    const lines = diagnosticLines(feed.problems, options.cwd ?? process.cwd());
    options.write(
      `${[...lines, `${plural(feed.artifacts.size, 'skill')} exported to ${feedDir}, ${feed.problems.length} left out`].join('\n')}\n`,
    );
    return 0;
  } catch (error) {
    if (!(error instanceof StaleFileError)) throw error;
    options.logger.error({ event: 'export-failed', uri: error.uri }, `${error.message}; run export again`);
    return 1;
  }
}
