/**
 * Git roots as a kind of root (docs/git-roots.md): `git+<url>#<ref>:<subdir>` and `github:owner/repo…` arguments, a
 * materialized commit in `<cache>/git/` served with its provenance, a followed branch replaced by each new commit.
 * Parsing and describing arguments is all that loads with the command line; the rest (`source.ts`) loads when a git
 * root is opened.
 */
import { deferredSource, type RootKind } from '../kind.js';
import type { GitSettings } from './settings.js';
import { describeGitRoot, type GitRootSpec, parseGitRootArg } from './spec.js';

/** A git root argument, parsed. */
export interface GitSourceSpec {
  readonly kind: 'git';
  readonly git: GitRootSpec;
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
  refusalMetric: {
    name: 'skills_serve_git_signature_refusals_total',
    help: 'Commits refused for their signature (--git-allowed-signers) while the last verified one stays served, by root',
  },
  source: (spec, context) =>
    deferredSource(false, async () => (await import('./source.js')).gitSource(spec.git, context)),
};
