/**
 * Sources: what the roots given on the command line resolve to, for the index (docs/ARCHITECTURE.md, "Sources"). A
 * folder is itself; a git root is the directory of a materialized commit in the cache, with its provenance in each
 * entry's `_meta`, and, for a branch, a new directory whenever the branch moves. The index does not know which is
 * which: it serves directories.
 */
import { EventEmitter } from 'node:events';

import type { RootSpec } from '../index/types.js';
import { provenanceMeta } from './git/provenance.js';
import { type Checkout, type GitLogger, GitRoot } from './git/root.js';
import type { GitSettings } from './git/settings.js';
import type { SourceSpec } from './root-arg.js';

/** How long a replaced tree stays on disk after the swap, for reads that began before it (ms). */
export const RELEASE_GRACE_MS = 5000;

/** The root a checkout is served as: its tree, the configured prefix, and its provenance for `_meta`. */
function rootOf(checkout: Checkout): RootSpec {
  return { dir: checkout.root.dir, prefix: checkout.root.prefix, meta: provenanceMeta(checkout.provenance) };
}

/** The resolved sources of a server or a command. */
export class Sources extends EventEmitter<{
  commit: [rootIndex: number, root: RootSpec, done: () => void];
  /** A poll of a followed branch ended: whether it went through. */
  polled: [ok: boolean];
}> {
  readonly #specs: readonly SourceSpec[];
  readonly #git: (GitRoot | undefined)[];
  #roots: RootSpec[] = [];

  private constructor(specs: readonly SourceSpec[], git: (GitRoot | undefined)[]) {
    super();
    this.#specs = specs;
    this.#git = git;
  }

  /**
   * Resolves every source: folders as they are, git roots fetched (or found in the cache) and materialized.
   *
   * @param follow follow branches (a server); `false` for one-shot commands, which fetch once.
   * @throws GitSourceError (a `SkillsServeError`) when a git root cannot be served: unknown ref, unreachable remote
   *   without a cache, over the limits, not allowed.
   */
  static async open(
    specs: readonly SourceSpec[],
    settings: GitSettings,
    logger: GitLogger | undefined,
    follow: boolean,
  ): Promise<Sources> {
    const git = specs.map((spec) =>
      spec.kind === 'folder'
        ? undefined
        : new GitRoot({
            spec: spec.git,
            cacheDir: settings.cacheDir,
            env: settings.env,
            pollMs: settings.pollMs,
            limits: settings.limits,
            allow: settings.allow,
            ...(settings.token === undefined ? {} : { token: settings.token }),
            ...(logger === undefined ? {} : { logger }),
          }),
    );
    const sources = new Sources(specs, git);
    try {
      // eslint-disable-next-line @typescript-eslint/await-thenable -- undefined for folder roots keeps the indexes
      const checkouts = await Promise.all(git.map((root) => root?.start()));
      sources.#roots = specs.map((spec, index) =>
        spec.kind === 'folder' ? spec.root : rootOf(checkouts[index] as Checkout),
      );
    } catch (error) {
      await sources.stop();
      throw error;
    }
    if (!follow) {
      for (const root of git) await root?.stop();
      return sources;
    }
    for (const [rootIndex, root] of git.entries()) {
      root?.on('polled', (ok) => sources.emit('polled', ok));
      root?.on('commit', (next, previous) => {
        const served = rootOf(next);
        sources.#roots[rootIndex] = served;
        // The listener indexes the new tree and calls `done` once it is served; the old tree goes after a grace.
        sources.emit('commit', rootIndex, served, () => {
          setTimeout(() => void root.release(previous), RELEASE_GRACE_MS).unref();
        });
      });
    }
    return sources;
  }

  /** The roots to index, in command-line order (a git root's directory changes with each commit it follows). */
  get roots(): readonly RootSpec[] {
    return this.#roots;
  }

  /** Whether root `rootIndex` is a git tree (never changed in place: not watched). */
  isGit(rootIndex: number): boolean {
    return this.#specs[rootIndex]?.kind === 'git';
  }

  /** Whether every root is a git root pinned to a tag or commit (nothing served can change, even after a restart). */
  get pinned(): boolean {
    return this.#git.every((root) => root !== undefined && !root.servesBranch);
  }

  /** Milliseconds until the next poll of a followed branch, the soonest of them; `undefined` when none is followed. */
  msUntilNextPoll(now = Date.now()): number | undefined {
    const due = this.#git.flatMap((root) => (root?.nextPollAt === undefined ? [] : [root.nextPollAt]));
    return due.length === 0 ? undefined : Math.max(0, Math.min(...due) - now);
  }

  /** Stops following branches. Idempotent. */
  async stop(): Promise<void> {
    // eslint-disable-next-line @typescript-eslint/await-thenable -- folder roots map to undefined
    await Promise.all(this.#git.map((root) => root?.stop()));
  }
}
