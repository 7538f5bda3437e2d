/**
 * A git root (docs/git-roots.md, "Versions"): turns `git+<url>#<ref>:<subdir>` into a directory on disk that the
 * index serves like any folder, and follows a branch.
 *
 * - A commit id or a tag is immutable: fetched once, then served from the cache without touching the network.
 * - A branch (or the default branch) is looked up every `pollMs` (`git ls-remote`, one ref advertisement); a new
 *   commit is fetched (shallow) and materialized beside the old tree, then announced with a `commit` event. The
 *   receiver indexes the new tree, swaps it in, and calls {@link GitRoot.release} on the old checkout once no read
 *   uses it; the old tree is then deleted.
 * - An unreachable remote at startup is survived when the cache holds an earlier fetch of the ref (served with a
 *   warning); without one, {@link GitRoot.start} fails naming the URL and the ref.
 * - With an allowed signers file, every commit is verified in the cache's repository before its tree is written or
 *   served (`signature.ts`); a followed branch's unverified commit is refused (`refused` event, `refusal`) and the
 *   last verified commit stays served.
 *
 * Reference counting: every checkout handed out (by `start()` and by each `commit` event, also a commit handed out
 * again when the branch moves back to it) carries one reference owned by the receiver; `release()` drops one. Every
 * tree held is registered in the cache as used by this root (`enterTree`), so that servers sharing the cache never
 * remove a tree another one serves: a branch's tree whose count reaches 0 and that is no longer current is removed
 * by the last root of any process to leave it (`leaveTree`). Trees of tags and commits are kept.
 */
import { EventEmitter } from 'node:events';
import { promises as fsp } from 'node:fs';

import type { RootSpec } from '../../index/types.js';
import type { RootRefusal } from '../kind.js';
import {
  directoryExists,
  enterTree,
  leaveTree,
  readRefRecord,
  type RemoteCache,
  remoteCache,
  removeAbandonedTrees,
  treeDir,
  treeUserName,
  writeRefRecord,
} from './cache.js';
import { checkGitVersion } from './command.js';
import { GitSourceError } from './errors.js';
import { type MaterializedTree, materializeTree } from './materialize.js';
import type { Provenance } from './provenance.js';
import { ensureBareRepository, fetchRef, hasCommit, type RefKind, type RemoteContext, resolveRef } from './remote.js';
import { GIT_NETWORK_TIMEOUT_MS, type GitLimits } from './settings.js';
import {
  type CommitVerifier,
  findSshKeygen,
  SIGNATURE_REFUSED,
  type Signer,
  UnverifiedCommitError,
  verifyCommit,
} from './signature.js';
import type { GitRootSpec } from './spec.js';
import { tokenAuth } from './token.js';
import { type GitAllowEntry, isGitRemoteAllowed } from './url.js';

/** The logging a git root does (a pino logger fits). Objects carry `source`, `ref` and `commit`, never a token. */
export interface GitLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

/** How to run one git root. */
export interface GitRootOptions {
  /** The root as parsed by `parseGitRootArg`. */
  readonly spec: GitRootSpec;
  /** The resolved cache directory (`resolveCacheDir`). */
  readonly cacheDir: string;
  /** The process environment, passed in by the CLI (git needs `PATH`, `HOME`, the user's credential setup). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Branch poll interval (ms; `--git-poll`, checked by the command line). */
  readonly pollMs: number;
  /** Limits on what one fetch may download and one tree may hold. */
  readonly limits: GitLimits;
  /** `--git-allow` entries; empty or absent: every remote. */
  readonly allow?: readonly GitAllowEntry[];
  /** `SKILLS_SERVE_GIT_TOKEN`: sent as HTTP Basic auth to this remote's https origin (or loopback http). */
  readonly token?: string;
  /** `--git-allowed-signers`: absolute path of the allowed signers file; only commits its keys signed are served. */
  readonly allowedSigners?: string;
  readonly logger?: GitLogger;
}

/** One materialized commit, ready to index. */
export interface Checkout {
  /** The root to give the index: the tree's directory and the configured prefix. */
  readonly root: RootSpec;
  /** Where the tree came from (for each entry's `_meta`). */
  readonly provenance: Provenance;
  /** `branch` trees are followed; `tag` and `commit` trees never change. */
  readonly kind: RefKind;
  /** True when the remote could not be reached and this is the last fetched commit from the cache. */
  readonly stale: boolean;
  /** When the commit was fetched into the cache (ms since the epoch; the ref record's), when known. */
  readonly fetchedAt: number | undefined;
  /** Files, bytes and skipped paths when this instance wrote the tree; `undefined` when it came from the cache. */
  readonly materialized: Omit<MaterializedTree, 'dir'> | undefined;
}

/** Reference count and ownership of one handed-out tree. */
interface Held {
  count: number;
  /** A branch's tree: removed once released, unless another root sharing the cache still serves it. */
  readonly deletable: boolean;
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- typed EventEmitter on/once
export interface GitRoot {
  on(event: 'commit', listener: (next: Checkout, previous: Checkout) => void): this;
  /** After each poll of a followed branch: whether it went through. */
  on(event: 'polled', listener: (ok: boolean) => void): this;
  /** A new commit of the branch was refused (its signature); the current tree stays served. */
  on(event: 'refused', listener: (refusal: RootRefusal) => void): this;
  once(event: 'commit', listener: (next: Checkout, previous: Checkout) => void): this;
}

/** A git root: start it, listen for `commit`, release old checkouts, stop it. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- see the interface above
export class GitRoot extends EventEmitter {
  readonly #options: GitRootOptions;
  readonly #limits: GitLimits;
  readonly #pollMs: number;
  readonly #cache: RemoteCache;
  readonly #context: RemoteContext;
  readonly #abort = new AbortController();
  readonly #held = new Map<string, Held>();
  /** This root's name among the users of the cache's trees. */
  readonly #user = treeUserName();
  #current: Checkout | undefined;
  #timer: NodeJS.Timeout | undefined;
  #nextPollAt: number | undefined;
  #polling: Promise<boolean> | undefined;
  #stopped = false;
  /** The kind of the last poll failure (`GitSourceError.reason`, else the message): an outage is warned once. */
  #lastPollFailure: string | undefined;
  /** A commit refused (over the limits, or without the subdirectory), not fetched again until the branch moves on. */
  #refusedCommit: string | undefined;
  /** How commits are verified (`--git-allowed-signers`), set by `start()`; `undefined`: they are not. */
  #verifier: CommitVerifier | undefined;
  /** The branch's newest commit, refused for its signature while an older one is served. */
  #refusal: RootRefusal | undefined;

  /** @param options the root, cache, environment and policies. */
  constructor(options: GitRootOptions) {
    super();
    this.#options = options;
    this.#limits = options.limits;
    this.#pollMs = options.pollMs;
    this.#cache = remoteCache(options.cacheDir, options.spec.remote);
    const auth = tokenAuth(options.spec.remote, options.token);
    if (auth.warning !== undefined) this.#warn(auth.warning);
    this.#context = {
      remote: options.spec.remote,
      env: options.env,
      secretConfig: auth.secretConfig,
      secrets: auth.secrets,
      timeoutMs: GIT_NETWORK_TIMEOUT_MS,
      signal: this.#abort.signal,
    };
  }

  /** The ref as configured, for messages (`HEAD` for the default branch). */
  get #ref(): string {
    return this.#options.spec.ref ?? 'HEAD';
  }

  /** Text naming this root in messages: `<url>#<ref>[:<subdir>]`, credential-free. */
  get #describe(): string {
    const { remote, subdir } = this.#options.spec;
    return `${remote.display}#${this.#ref}${subdir === '' ? '' : `:${subdir}`}`;
  }

  /**
   * Fetches (or finds in the cache) the configured ref and materializes its tree; for a branch, starts polling.
   *
   * @returns the first checkout, carrying one reference for the caller.
   * @throws GitSourceError: `not-allowed` (URL not on `--git-allow`), `git-unavailable`, `unknown-ref` naming the
   *   ref, `unknown-subdir`, `unreachable` (remote down and nothing cached: names the URL and the ref),
   *   `over-limits`, `git-failed`.
   */
  async start(): Promise<Checkout> {
    const { spec } = this.#options;
    if (!isGitRemoteAllowed(spec.remote, this.#options.allow ?? [])) {
      const allowed = (this.#options.allow ?? []).map((entry) => entry.text).join(', ');
      throw new GitSourceError(
        'not-allowed',
        `git root ${spec.remote.display} is not allowed by --git-allow (allowed: ${allowed})`,
      );
    }
    await checkGitVersion({ env: this.#options.env });
    const file = this.#options.allowedSigners;
    if (file !== undefined) this.#verifier = { file, program: await findSshKeygen(this.#options.env) };
    await fsp.mkdir(this.#cache.dir, { recursive: true });
    await ensureBareRepository(this.#cache.gitDir, this.#options.env);
    await removeAbandonedTrees(this.#cache);
    let checkout = await this.#first();
    await enterTree(this.#cache, checkout.root.dir, this.#user);
    // Its last user in another process may have removed it between the look and the registration: look again.
    if (!(await directoryExists(checkout.root.dir))) checkout = await this.#first();
    this.#current = checkout;
    this.#held.set(checkout.root.dir, { count: 1, deletable: checkout.kind === 'branch' });
    if (checkout.kind === 'branch') this.#schedule();
    this.#options.logger?.info(
      {
        event: 'git-serving',
        ...this.#logFields(checkout.provenance.commit),
        stale: checkout.stale,
        ...this.#treeFields(checkout),
        ...this.#signerFields(checkout),
      },
      `serving ${this.#describe} at commit ${checkout.provenance.commit}${checkout.stale ? ' (from the cache)' : ''}`,
    );
    this.#logSkipped(checkout);
    return checkout;
  }

  /** The first checkout: from the cache when the ref is immutable and cached, else from the remote. */
  async #first(): Promise<Checkout> {
    const { spec } = this.#options;
    const record = await readRefRecord(this.#cache, spec.ref);
    if (record !== undefined && record.kind !== 'branch' && (await directoryExists(this.#treeDir(record.commit)))) {
      return this.#checkout(
        record.commit,
        record.kind,
        false,
        undefined,
        await this.#verify(record.commit),
        record.fetchedAt,
      );
    }
    let resolved;
    try {
      resolved = await resolveRef(this.#context, spec.ref);
    } catch (error) {
      if (!(error instanceof GitSourceError) || error.reason !== 'unreachable') throw error;
      if (record !== undefined && (await directoryExists(this.#treeDir(record.commit)))) {
        const signer = await this.#verify(record.commit);
        this.#lastPollFailure = error.reason;
        this.#warn(
          `${error.message}; serving commit ${record.commit} fetched ${new Date(record.fetchedAt).toISOString()} from the cache`,
        );
        return this.#checkout(record.commit, record.kind, true, undefined, signer, record.fetchedAt);
      }
      throw new GitSourceError(
        'unreachable',
        `${error.message}; no earlier fetch of ${this.#describe} is cached in ${this.#options.cacheDir}`,
      );
    }
    if (resolved.kind === 'commit' && (await directoryExists(this.#treeDir(resolved.source))))
      return this.#checkout(resolved.source, 'commit', false, undefined, await this.#verify(resolved.source));
    if (
      resolved.kind === 'branch' &&
      record?.commit === resolved.advertised &&
      (await directoryExists(this.#treeDir(record.commit)))
    ) {
      return this.#checkout(
        record.commit,
        'branch',
        false,
        undefined,
        await this.#verify(record.commit),
        record.fetchedAt,
      );
    }
    try {
      const commit =
        resolved.kind === 'commit' && (await hasCommit(this.#cache.gitDir, resolved.source, this.#options.env))
          ? resolved.source
          : await fetchRef(this.#context, this.#cache.gitDir, resolved, spec.ref, this.#limits.maxFetchBytes);
      // Verified in the cache's repository before its tree is written: an unverified tree is never written to serve.
      const signer = await this.#verify(commit);
      const tree = await this.#materialize(commit);
      const fetchedAt = Date.now();
      await writeRefRecord(this.#cache, spec.ref, { kind: resolved.kind, commit, fetchedAt });
      return this.#checkout(commit, resolved.kind, false, tree, signer, fetchedAt);
    } catch (error) {
      // A followed branch whose newest commit cannot be served (refused, or its fetch failed) starts from the last
      // commit fetched for it, as a running server keeps serving it: a bad push must not turn every restart (a
      // Kubernetes rollout, a host session) into a failed start.
      const fallback =
        resolved.kind === 'branch' &&
        record?.kind === 'branch' &&
        error instanceof GitSourceError &&
        ['over-limits', 'unknown-subdir', 'unverified', 'unreachable', 'git-failed'].includes(error.reason) &&
        (await directoryExists(this.#treeDir(record.commit)));
      if (!fallback || record === undefined) throw error;
      // The commit served instead must verify too; if it does not, no verified commit is available: the newest
      // commit's reason is the one to tell.
      const signer = await this.#verify(record.commit).catch(() => {
        throw error;
      });
      const fetched = `serving commit ${record.commit} fetched ${new Date(record.fetchedAt).toISOString()} from the cache`;
      if (error instanceof UnverifiedCommitError) this.#refuse(resolved.advertised, record.commit, error, fetched);
      else if (error.reason === 'over-limits' || error.reason === 'unknown-subdir') {
        this.#refusedCommit = resolved.advertised;
        this.#warn(`${error.message}; ${fetched}`);
      } else {
        this.#lastPollFailure = error.reason;
        this.#warn(`${error.message}; ${fetched}`);
      }
      // Stale only for want of the remote: a refused newest commit was reached, and the older one is served by choice.
      const stale = this.#lastPollFailure !== undefined;
      return this.#checkout(record.commit, 'branch', stale, undefined, signer, record.fetchedAt);
    }
  }

  /** Directory of the tree of `commit` for this root's subdirectory. */
  #treeDir(commit: string): string {
    return treeDir(this.#cache, commit, this.#options.spec.subdir);
  }

  /** Materializes `commit` unless its tree is already in the cache. */
  async #materialize(commit: string): Promise<MaterializedTree | undefined> {
    const target = this.#treeDir(commit);
    if (await directoryExists(target)) return undefined;
    return materializeTree({
      gitDir: this.#cache.gitDir,
      commit,
      subdir: this.#options.spec.subdir,
      target,
      tmpDir: this.#cache.tmpDir,
      limits: this.#limits,
      env: this.#options.env,
      describe: this.#describe,
    });
  }

  /**
   * Verifies `commit` in the cache's repository when commits are verified.
   *
   * @returns its signer, or `undefined` without `--git-allowed-signers`.
   * @throws GitSourceError `unverified` naming the root, the commit and the reason; `git-failed`.
   */
  async #verify(commit: string): Promise<Signer | undefined> {
    const verifier = this.#verifier;
    if (verifier === undefined) return undefined;
    return verifyCommit({
      gitDir: this.#cache.gitDir,
      commit,
      verifier,
      env: this.#options.env,
      describe: this.#describe,
    });
  }

  /**
   * Refuses the branch's newest commit for its signature: not fetched again until the branch moves on, logged once
   * (`git-signature-refused`, with the commit refused and the one served), kept as {@link GitRoot.refusal} and
   * announced (`refused`).
   */
  #refuse(refused: string, serving: string, error: UnverifiedCommitError, still: string): void {
    this.#refusedCommit = refused;
    const reason = error.why;
    this.#refusal = Object.freeze({ code: SIGNATURE_REFUSED, root: this.#describe, refused, serving, reason });
    this.#options.logger?.warn(
      { event: SIGNATURE_REFUSED, ...this.#logFields(refused), serving, reason },
      `${error.message}; ${still}`,
    );
    this.emit('refused', this.#refusal);
  }

  /** The branch's newest commit refused for its signature while an older one is served; `undefined` for none. */
  get refusal(): RootRefusal | undefined {
    return this.#refusal;
  }

  #checkout(
    commit: string,
    kind: RefKind,
    stale: boolean,
    tree: MaterializedTree | undefined,
    signer: Signer | undefined,
    fetchedAt?: number,
  ): Checkout {
    const { spec } = this.#options;
    const provenance = { source: spec.remote.display, ref: this.#ref, commit, subdir: spec.subdir };
    return Object.freeze({
      root: Object.freeze({ dir: this.#treeDir(commit), prefix: spec.prefix }),
      provenance: Object.freeze(signer === undefined ? provenance : { ...provenance, signer: Object.freeze(signer) }),
      kind,
      stale,
      fetchedAt,
      materialized:
        tree === undefined ? undefined : Object.freeze({ files: tree.files, bytes: tree.bytes, skipped: tree.skipped }),
    });
  }

  #logFields(commit?: string): object {
    return { source: this.#options.spec.remote.display, ref: this.#ref, ...(commit === undefined ? {} : { commit }) };
  }

  /** The `signer` of a verified checkout (nothing without `--git-allowed-signers`). */
  #signerFields(checkout: Checkout): object {
    const { signer } = checkout.provenance;
    return signer === undefined ? {} : { signer };
  }

  /** `files` and `bytes` of a tree this instance wrote (nothing for one found in the cache). */
  #treeFields(checkout: Checkout): object {
    const { materialized } = checkout;
    return materialized === undefined ? {} : { files: materialized.files, bytes: materialized.bytes };
  }

  /**
   * Says which paths of a written tree were left out: submodules (not fetched, so their skills are missing) and links
   * that resolve outside the tree or to nothing (removed). One warning each kind.
   */
  #logSkipped(checkout: Checkout): void {
    const skipped = checkout.materialized?.skipped ?? [];
    const { commit } = checkout.provenance;
    const submodules = skipped.filter((entry) => entry.reason === 'submodule').map((entry) => entry.path);
    if (submodules.length > 0) {
      this.#options.logger?.warn(
        { event: 'git-submodules-skipped', ...this.#logFields(commit), paths: submodules },
        `${this.#describe} at commit ${commit}: ${submodules.length} submodule(s) not fetched, so not served: ${submodules.join(', ')}`,
      );
    }
    const links = skipped.filter((entry) => entry.reason === 'link-outside-tree').map((entry) => entry.path);
    if (links.length > 0) {
      this.#options.logger?.warn(
        { event: 'git-links-skipped', ...this.#logFields(commit), paths: links },
        `${this.#describe} at commit ${commit}: ${links.length} symlink(s) resolving outside the tree or to nothing removed, so not served: ${links.join(', ')}`,
      );
    }
  }

  #warn(message: string): void {
    this.#options.logger?.warn({ event: 'git-warning', ...this.#logFields(this.#current?.provenance.commit) }, message);
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#nextPollAt = Date.now() + this.#pollMs;
    this.#timer = setTimeout(() => {
      void this.pollNow().finally(() => this.#schedule());
    }, this.#pollMs);
    this.#timer.unref();
  }

  /**
   * Looks the branch up now and, when it moved, fetches and materializes the new commit and emits `commit`
   * (`next`, `previous`). Failures never throw: an unreachable remote or a refused tree is a warning (once per
   * outage), and the current tree stays served. Polls never overlap: a call during a poll waits for it.
   *
   * @returns whether a new commit was announced.
   */
  async pollNow(): Promise<boolean> {
    if (this.#polling !== undefined) return this.#polling;
    this.#polling = this.#poll().finally(() => {
      this.#polling = undefined;
    });
    return this.#polling;
  }

  async #poll(): Promise<boolean> {
    const previous = this.#current;
    if (previous === undefined || previous.kind !== 'branch' || this.#stopped) return false;
    try {
      const moved = await this.#pollOnce(previous);
      // The end of an outage is a whole poll that went through, not just an answered ls-remote.
      if (this.#lastPollFailure !== undefined && !this.#stopped) {
        const was = this.#lastPollFailure;
        this.#lastPollFailure = undefined;
        this.#options.logger?.info(
          { event: 'git-reachable', ...this.#logFields(this.#current?.provenance.commit) },
          was === 'unreachable' ? `${this.#describe} is reachable again` : `${this.#describe}: polls go through again`,
        );
      }
      this.emit('polled', true);
      return moved;
    } catch (error) {
      if (this.#stopped) return false;
      this.emit('polled', false);
      const message = error instanceof Error ? error.message : String(error);
      // One warning per kind of failure: git's messages can differ from poll to poll for the same outage (curl
      // names how long it waited).
      const kind = error instanceof GitSourceError ? error.reason : message;
      if (kind !== this.#lastPollFailure) this.#warn(`${message}; still serving commit ${previous.provenance.commit}`);
      this.#lastPollFailure = kind;
      return false;
    }
  }

  /**
   * One poll of a followed branch: looks it up and, when it moved, fetches, materializes and announces the new
   * commit.
   *
   * @returns whether a new commit was announced.
   * @throws whatever looking up, fetching or materializing threw, except a commit refused for good (warned here).
   */
  async #pollOnce(previous: Checkout): Promise<boolean> {
    const resolved = await resolveRef(this.#context, this.#options.spec.ref);
    if (resolved.advertised === this.#refusedCommit) return false;
    // Back at the served commit, or moved past the commit refused for its signature: that refusal no longer stands.
    this.#refusal = undefined;
    if (resolved.advertised === previous.provenance.commit) return false;
    let commit: string;
    let tree: MaterializedTree | undefined;
    let signer: Signer | undefined;
    try {
      commit = await fetchRef(
        this.#context,
        this.#cache.gitDir,
        resolved,
        this.#options.spec.ref,
        this.#limits.maxFetchBytes,
      );
      if (commit === previous.provenance.commit || this.#stopped) return false;
      signer = await this.#verify(commit);
      tree = await this.#materialize(commit);
    } catch (error) {
      // Not signed by an allowed key: refused for good, like a tree over the limits; the verified tree stays served.
      if (error instanceof UnverifiedCommitError) {
        if (!this.#stopped)
          this.#refuse(
            resolved.advertised,
            previous.provenance.commit,
            error,
            `still serving commit ${previous.provenance.commit}`,
          );
        return false;
      }
      // Over a limit, or without the subdirectory: the same answer for this commit at every poll, so it is refused
      // (warned about once, not fetched again) until the branch moves on. The remote itself is fine.
      if (error instanceof GitSourceError && (error.reason === 'over-limits' || error.reason === 'unknown-subdir')) {
        this.#refusedCommit = resolved.advertised;
        if (!this.#stopped) this.#warn(`${error.message}; still serving commit ${previous.provenance.commit}`);
        return false;
      }
      throw error;
    }
    if (!this.#held.has(this.#treeDir(commit))) {
      await enterTree(this.#cache, this.#treeDir(commit), this.#user);
      // Removed by its last user in another process between the look and the registration: written again.
      tree ??= await this.#materialize(commit);
    }
    const fetchedAt = Date.now();
    await writeRefRecord(this.#cache, this.#options.spec.ref, { kind: 'branch', commit, fetchedAt });
    const next = this.#checkout(commit, 'branch', false, tree, signer, fetchedAt);
    const held = this.#held.get(next.root.dir);
    if (held === undefined) this.#held.set(next.root.dir, { count: 1, deletable: true });
    else held.count += 1;
    this.#current = next;
    this.#options.logger?.info(
      {
        event: 'git-moved',
        ...this.#logFields(commit),
        previous: previous.provenance.commit,
        ...this.#treeFields(next),
        ...this.#signerFields(next),
      },
      `${this.#describe} moved from ${previous.provenance.commit} to ${commit}`,
    );
    this.#logSkipped(next);
    this.emit('commit', next, previous);
    return true;
  }

  /**
   * Drops one reference. When none is left and the checkout is no longer current, this root leaves the tree and a
   * branch's tree is deleted unless another root sharing the cache still serves it (its removal is awaited; a failure
   * to remove it is logged, never thrown).
   *
   * @throws RangeError when the checkout holds no reference.
   */
  async release(checkout: Checkout): Promise<void> {
    const held = this.#held.get(checkout.root.dir);
    if (held === undefined || held.count === 0)
      throw new RangeError(`the tree of commit ${checkout.provenance.commit} holds no reference`);
    held.count -= 1;
    if (held.count > 0 || this.#current?.root.dir === checkout.root.dir) return;
    this.#held.delete(checkout.root.dir);
    try {
      await leaveTree(this.#cache, checkout.root.dir, this.#user, held.deletable);
    } catch (error) {
      this.#warn(`cannot remove the old tree of commit ${checkout.provenance.commit}: ${(error as Error).message}`);
    }
  }

  /**
   * When the next poll of a followed branch is due (ms since the epoch), or `undefined` for a tag or commit (never
   * polled) and before {@link GitRoot.start}: what a cache hint for the served tree may promise.
   */
  get nextPollAt(): number | undefined {
    return this.#nextPollAt;
  }

  /**
   * The commit served, when it was fetched, and whether it is a fallback: the remote could not be reached (at start or
   * at the last poll) and the cached commit is served. Valid after {@link GitRoot.start}.
   */
  get status(): { version: string; fetchedAt: number | undefined; stale: boolean } {
    return {
      version: this.#current?.provenance.commit ?? '',
      fetchedAt: this.#current?.fetchedAt,
      stale: this.#lastPollFailure !== undefined,
    };
  }

  /** Whether the served tree is a branch's (a moving ref), followed or not. */
  get servesBranch(): boolean {
    return this.#current?.kind === 'branch';
  }

  /** Stops polling and kills any git command in flight; resolves once a running poll has ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#nextPollAt = undefined;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#abort.abort();
    await this.#polling;
    // Its trees stay (a later start serves them from the cache); this root no longer holds them.
    await Promise.all(
      [...this.#held.keys()].map((dir) => leaveTree(this.#cache, dir, this.#user, false).catch(() => undefined)),
    );
  }
}
