/**
 * A git root behind the shape every kind shares (`RootSource`): the commit of its ref materialized in the cache and
 * served with its provenance, a followed branch replaced by each new commit (docs/git-roots.md). Loaded only when a
 * git root is opened (`kind.ts`), so a server of folders loads none of the git layer.
 */
import type { RootSpec } from '../../index/types.js';
import type { RootContext, RootListener, RootRefusal, RootSource, RootStatus } from '../kind.js';
import { provenanceMeta } from './provenance.js';
import { type Checkout, GitRoot } from './root.js';
import type { GitSettings } from './settings.js';
import type { GitRootSpec } from './spec.js';

/** The root a checkout is served as: its tree, the configured prefix, its provenance for `_meta`, its commit. */
function served(checkout: Checkout): RootSpec {
  return {
    dir: checkout.root.dir,
    prefix: checkout.root.prefix,
    meta: provenanceMeta(checkout.provenance),
    version: checkout.provenance.commit,
  };
}

/** One git root behind the shape every kind shares. */
class GitSource implements RootSource {
  readonly changesInPlace = false;
  readonly #root: GitRoot;

  constructor(root: GitRoot) {
    this.#root = root;
  }

  async start(): Promise<RootSpec> {
    return served(await this.#root.start());
  }

  get pinned(): boolean {
    return !this.#root.servesBranch;
  }

  get nextRefreshAt(): number | undefined {
    return this.#root.nextPollAt;
  }

  get refusal(): RootRefusal | undefined {
    return this.#root.refusal;
  }

  status(): RootStatus {
    return this.#root.status;
  }

  follow(listener: RootListener): void {
    this.#root.on('polled', (ok) => listener.refreshed(ok));
    this.#root.on('refused', (refusal) => listener.refused(refusal));
    this.#root.on('commit', (next, previous) => listener.replaced(served(next), () => this.#root.release(previous)));
  }

  stop(): Promise<void> {
    return this.#root.stop();
  }
}

/**
 * Makes the source of one git root (nothing runs before `start`).
 *
 * @param spec the parsed root argument.
 * @param context the cache directory, the git settings (`--git-*` flags) and the logger.
 */
export function gitSource(spec: GitRootSpec, { cacheDir, settings, logger }: RootContext<GitSettings>): RootSource {
  return new GitSource(
    new GitRoot({
      spec,
      cacheDir,
      env: settings.env,
      pollMs: settings.pollMs,
      limits: settings.limits,
      allow: settings.allow,
      ...(settings.token === undefined ? {} : { token: settings.token }),
      ...(settings.allowedSigners === undefined ? {} : { allowedSigners: settings.allowedSigners }),
      ...(logger === undefined ? {} : { logger }),
    }),
  );
}
