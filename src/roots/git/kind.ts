/**
 * Git roots as a kind of root (docs/git-roots.md): `git+<url>#<ref>:<subdir>` and `github:owner/repo…` arguments, a
 * materialized commit in `<cache>/git/` served with its provenance, a followed branch replaced by each new commit.
 */
import type { RootSpec } from '../../index/types.js';
import type { RootKind, RootListener, RootSource, RootStatus } from '../kind.js';
import { provenanceMeta } from './provenance.js';
import { type Checkout, GitRoot } from './root.js';
import type { GitSettings } from './settings.js';
import { describeGitRoot, type GitRootSpec, parseGitRootArg } from './spec.js';

/** A git root argument, parsed. */
export interface GitSourceSpec {
  readonly kind: 'git';
  readonly git: GitRootSpec;
}

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

  status(): RootStatus {
    return this.#root.status;
  }

  follow(listener: RootListener): void {
    this.#root.on('polled', (ok) => listener.refreshed(ok));
    this.#root.on('commit', (next, previous) => listener.replaced(served(next), () => this.#root.release(previous)));
  }

  stop(): Promise<void> {
    return this.#root.stop();
  }
}

/** The git kind. */
export const gitKind: RootKind<GitSourceSpec, GitSettings> = {
  name: 'git',
  parse(arg) {
    const git = parseGitRootArg(arg);
    return git === undefined ? undefined : { kind: 'git', git };
  },
  describe: (spec) => describeGitRoot(spec.git),
  notVerified: "a git root, not verified (its tree is written from git's objects under git/ in the cache directory)",
  refreshMetric: {
    name: 'skills_serve_git_polls_total',
    help: 'Polls of followed git branches, by outcome (ok, failed)',
  },
  source: (spec, { cacheDir, settings, logger }) =>
    new GitSource(
      new GitRoot({
        spec: spec.git,
        cacheDir,
        env: settings.env,
        pollMs: settings.pollMs,
        limits: settings.limits,
        allow: settings.allow,
        ...(settings.token === undefined ? {} : { token: settings.token }),
        ...(logger === undefined ? {} : { logger }),
      }),
    ),
};
