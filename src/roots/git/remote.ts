/**
 * Talking to a git remote (docs/git-roots.md, "Versions", "Safety"): what a ref names (`ls-remote`, one ref
 * advertisement: also what a branch poll costs), and a shallow fetch of one ref into the cache's bare repository,
 * watched so that a hostile remote cannot fill the disk.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { repositoryLockFile } from './cache.js';
import { GitCommandError, gitReason, gitUnavailable, runGit } from './command.js';
import { GitSourceError } from './errors.js';
import { spawnGit } from './exec.js';
import { LockTimeoutError, STALE_MS, waitUntilGone, withLock } from './lock.js';
import { isCommitId } from './spec.js';
import type { GitRemote } from './url.js';
import { redactSecrets } from './url.js';

/** How a ref behaves: branches (and other non-tag refs, and the default branch) move; tags and commit ids do not. */
export type RefKind = 'branch' | 'tag' | 'commit';

/** What a ref names on the remote right now. */
export interface ResolvedRef {
  readonly kind: RefKind;
  /** What to fetch: a full ref name (`refs/heads/main`, `refs/tags/v1`, `HEAD`) or a commit id. */
  readonly source: string;
  /** The object the remote advertises for it (a commit, or an annotated tag object); the commit id for `commit`. */
  readonly advertised: string;
}

/** What every remote operation needs. */
export interface RemoteContext {
  readonly remote: GitRemote;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Secret configuration (the token's HTTP header) for this remote. */
  readonly secretConfig: readonly (readonly [string, string])[];
  /** Secrets to redact from every message. */
  readonly secrets: readonly string[];
  /** Kill a network operation after this many ms. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/** The ref a fetch writes to in the cache's bare repository. */
const FETCHED_REF = 'refs/skills-serve/fetched';

/** The git options of a remote operation. */
function runOptions(context: RemoteContext): Parameters<typeof runGit>[1] {
  return {
    env: context.env,
    protocol: context.remote.scheme,
    secretConfig: context.secretConfig,
    secrets: context.secrets,
    timeoutMs: context.timeoutMs,
    ...(context.signal === undefined ? {} : { signal: context.signal }),
  };
}

/** The error for a remote that cannot be reached or refuses us. */
function unreachable(context: RemoteContext, ref: string | undefined, error: unknown): GitSourceError {
  if (error instanceof GitSourceError) return error;
  const why = error instanceof GitCommandError ? error.message : String(error);
  return new GitSourceError(
    'unreachable',
    `cannot fetch ${context.remote.display} (ref ${ref ?? 'HEAD'}): ${redactSecrets(why, context.secrets)}`,
  );
}

/**
 * Asks the remote what `ref` names (`git ls-remote`). A tag wins over a branch of the same name (git's own order).
 *
 * @param context the remote and how to reach it.
 * @param ref a branch, tag, full ref name, or `undefined` for the default branch. (Commit ids are not looked up.)
 * @returns the ref's kind, what to fetch and the advertised object id.
 * @throws GitSourceError `unknown-ref` naming the ref when the remote has no such branch or tag; `unreachable` when
 *   the remote cannot be reached or refuses the request (git's reason, redacted, in the message).
 */
export async function resolveRef(context: RemoteContext, ref: string | undefined): Promise<ResolvedRef> {
  if (ref !== undefined && isCommitId(ref)) return { kind: 'commit', source: ref, advertised: ref };
  const candidates =
    ref === undefined ? ['HEAD'] : ref.startsWith('refs/') ? [ref] : [`refs/tags/${ref}`, `refs/heads/${ref}`];
  let output: string;
  try {
    output = (
      await runGit(['ls-remote', '--end-of-options', context.remote.url, ...candidates], runOptions(context))
    ).toString('utf8');
  } catch (error) {
    throw unreachable(context, ref, error);
  }
  const advertised = new Map<string, string>();
  for (const line of output.split('\n')) {
    const match = /^([0-9a-f]{40,64})\t(\S+)$/u.exec(line);
    if (match !== null) advertised.set(match[2] as string, match[1] as string);
  }
  for (const name of candidates) {
    const id = advertised.get(name);
    if (id !== undefined)
      return { kind: name.startsWith('refs/tags/') ? 'tag' : 'branch', source: name, advertised: id };
  }
  throw new GitSourceError(
    'unknown-ref',
    ref === undefined
      ? `${context.remote.display} has no default branch (HEAD); name a branch or tag with #ref`
      : `${context.remote.display} has no branch or tag "${ref}"`,
  );
}

/**
 * Creates the cache's bare repository if it does not exist yet (no templates, so no sample hooks).
 *
 * @param gitDir path of the bare repository.
 * @param env base environment.
 */
export async function ensureBareRepository(
  gitDir: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<void> {
  try {
    await fsp.access(path.join(gitDir, 'HEAD'));
    return;
  } catch {
    // Not there yet.
  }
  // Made beside its place and renamed into it: two roots of one URL (in one process or two sharing the cache) that
  // start together must not run `git init` in the same directory (one of them fails to lock its config).
  await fsp.mkdir(path.dirname(gitDir), { recursive: true });
  const temp = `${gitDir}.init-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await runGit(['init', '--quiet', '--bare', '--template=', '--end-of-options', temp], { env, timeoutMs: 30_000 });
    await fsp.rename(temp, gitDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw error;
    // Another start made it first: theirs is as good.
  } finally {
    await fsp.rm(temp, { recursive: true, force: true });
  }
}

/** Sum of the sizes of the files in a directory that are not in `baseline`. */
async function newBytes(dir: string, baseline: ReadonlySet<string>): Promise<number> {
  let total = 0;
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (baseline.has(name)) continue;
    try {
      total += (await fsp.stat(path.join(dir, name))).size;
    } catch {
      // Renamed or removed while we looked.
    }
  }
  return total;
}

/** How often the download watchdog measures a running fetch (ms). */
const WATCHDOG_MS = 100;

/** How often one fetch is tried again after git found one of its own lock files taken (`shallow.lock`, …). */
const GIT_LOCK_ATTEMPTS = 5;

/** How long a fetch waits for a git lock file of the cache's repository to go before giving up this time (ms). */
const GIT_LOCK_WAIT_MS = 10_000;

/**
 * Git refused to run because one of its lock files in the cache's repository exists (`Unable to create
 * '…/shallow.lock': File exists`): another git works on it, or one was killed there. Contention, never an unreachable
 * remote.
 */
class GitLockBusy extends Error {
  constructor(readonly lockFile: string) {
    super(`${lockFile} exists`);
    this.name = 'GitLockBusy';
  }
}

/**
 * The git lock file a failed git run ran into, from its stderr: the one it names (`Unable to create '<file>.lock':
 * File exists`), or `shallow.lock` when another git rewrote `shallow` under it (`shallow file has changed since we
 * read it`); `undefined` for any other failure.
 *
 * @param gitDir the repository git ran on.
 * @param stderr git's stderr.
 */
export function gitLockInTheWay(gitDir: string, stderr: string): string | undefined {
  const named = /Unable to create '([^'\n]+\.lock)': File exists/u.exec(stderr)?.[1];
  if (named !== undefined) return named;
  return /shallow file has changed since we read it/u.test(stderr) ? path.join(gitDir, 'shallow.lock') : undefined;
}

/**
 * Fetches one ref or commit, shallow (`--depth=1`, no tags, no submodules), into the bare repository, and returns
 * the commit it names. Processes sharing the cache take turns: the fetch runs holding the repository's lock
 * (`lock.ts`; in this process too, roots of one URL share the repository), and a process that waited for it first
 * looks whether what it wants arrived meanwhile, so N servers started together download a commit once. A git lock
 * file in the way (a git not run by a server of this version, or one killed) is waited for ({@link GIT_LOCK_WAIT_MS})
 * and the fetch tried again, {@link GIT_LOCK_ATTEMPTS} times in all; one older than the network timeout is removed (no
 * git run of ours lives longer).
 * While git receives the pack, the new files under `objects/pack` are measured every {@link WATCHDOG_MS} ms; past
 * `maxFetchBytes` the fetch is killed and its partial pack removed.
 *
 * @param context the remote and how to reach it.
 * @param gitDir the cache's bare repository (created by {@link ensureBareRepository}).
 * @param resolved what to fetch.
 * @param ref the ref as the user wrote it, for messages.
 * @param maxFetchBytes the download limit (bytes).
 * @returns the full commit id fetched (an annotated tag peeled to its commit).
 * @throws GitSourceError `over-limits` past the download limit; `unknown-ref` when the remote refuses the commit id
 *   (`not our ref`); `git-failed` when the repository stays locked (by another process past the network timeout, or
 *   by a git lock file that does not go); `unreachable` for any other failure to fetch.
 */
export async function fetchRef(
  context: RemoteContext,
  gitDir: string,
  resolved: ResolvedRef,
  ref: string | undefined,
  maxFetchBytes: number,
): Promise<string> {
  const task = async (): Promise<string> => {
    // Fetched by another process (or root) while this one waited: nothing to download.
    const present = await peelToCommit(gitDir, `${resolved.advertised}^{commit}`, context.env).catch(() => '');
    if (present !== '') return present;
    for (let attempt = 1; ; attempt++) {
      try {
        return await fetchRefNow(context, gitDir, resolved, ref, maxFetchBytes);
      } catch (error) {
        if (!(error instanceof GitLockBusy)) throw error;
        const gone =
          (await waitUntilGone(error.lockFile, GIT_LOCK_WAIT_MS, context.signal)) ||
          (await removeIfOlder(error.lockFile, context.timeoutMs));
        if (!gone || attempt >= GIT_LOCK_ATTEMPTS) {
          throw new GitSourceError(
            'git-failed',
            `cannot fetch ${context.remote.display} (ref ${ref ?? 'HEAD'}) into the cache: git's lock file ${error.lockFile} ${gone ? 'keeps getting' : 'stays'} in the way (another git works on the cache's repository, or one was killed there: remove the file if no git runs)`,
          );
        }
      }
    }
  };
  try {
    return await withLock(repositoryLockFile(gitDir), task, {
      timeoutMs: context.timeoutMs + STALE_MS,
      ...(context.signal === undefined ? {} : { signal: context.signal }),
    });
  } catch (error) {
    if (!(error instanceof LockTimeoutError)) throw error;
    throw new GitSourceError(
      'git-failed',
      `cannot fetch ${context.remote.display} (ref ${ref ?? 'HEAD'}) into the cache: ${error.message}`,
    );
  }
}

/** Removes `file` if it was last modified more than `ageMs` ago; whether it did. */
async function removeIfOlder(file: string, ageMs: number): Promise<boolean> {
  try {
    if (Date.now() - (await fsp.stat(file)).mtimeMs <= ageMs) return false;
    await fsp.rm(file, { force: true });
    return true;
  } catch {
    return true;
  }
}

/**
 * The lock files a fetch takes in the repository (`--depth` rewrites `shallow`, the refspec writes one ref, a ref
 * deletion rewrites `packed-refs`). A git killed by us (timeout, download limit, stop) cannot remove its own.
 */
const FETCH_GIT_LOCKS = ['shallow.lock', 'packed-refs.lock', `${FETCHED_REF}.lock`];

async function fetchRefNow(
  context: RemoteContext,
  gitDir: string,
  resolved: ResolvedRef,
  ref: string | undefined,
  maxFetchBytes: number,
): Promise<string> {
  const packDir = path.join(gitDir, 'objects', 'pack');
  await fsp.mkdir(packDir, { recursive: true });
  const baseline = new Set(await fsp.readdir(packDir));
  const startedAt = Date.now();
  const child = spawnGit(
    [
      '--git-dir',
      gitDir,
      'fetch',
      '--quiet',
      '--depth=1',
      '--no-tags',
      '--no-write-fetch-head',
      '--no-recurse-submodules',
      '--no-auto-gc',
      '--end-of-options',
      context.remote.url,
      `+${resolved.source}:${FETCHED_REF}`,
    ],
    {
      env: context.env,
      protocol: context.remote.scheme,
      secretConfig: context.secretConfig,
      timeoutMs: context.timeoutMs,
      ...(context.signal === undefined ? {} : { signal: context.signal }),
    },
  );
  child.stdin.end();
  child.stdout.resume();
  let received = 0;
  let overLimit = false;
  let measuring = false;
  const watchdog = setInterval(() => {
    if (measuring) return;
    measuring = true;
    void newBytes(packDir, baseline).then((bytes) => {
      measuring = false;
      received = Math.max(received, bytes);
      if (bytes > maxFetchBytes && !overLimit) {
        overLimit = true;
        child.kill();
      }
    });
  }, WATCHDOG_MS);
  const { code, stderr, timedOut, spawnError } = await child.exited;
  clearInterval(watchdog);
  if (spawnError !== undefined) throw gitUnavailable(spawnError);
  // A fetch that finished between two measurements is measured once more, complete.
  if (!overLimit && code === 0) {
    received = Math.max(received, await newBytes(packDir, baseline));
    overLimit = received > maxFetchBytes;
  }
  if (code === null) {
    // Killed (timeout, download limit, stop): remove the git lock files it held. The repository lock is held, so
    // any made since the fetch began are its own.
    for (const name of FETCH_GIT_LOCKS) {
      const file = path.join(gitDir, ...name.split('/'));
      const stat = await fsp.stat(file).catch(() => undefined);
      if (stat !== undefined && stat.mtimeMs >= startedAt - 1_000) await fsp.rm(file, { force: true });
    }
  }
  if (overLimit || code !== 0) {
    // Drop what this fetch brought: a partial pack (tmp_*) after a failure; past the limit, complete packs too and the
    // ref that would point into them.
    for (const name of await fsp.readdir(packDir)) {
      if (!baseline.has(name) && (overLimit || name.startsWith('tmp_')))
        await fsp.rm(path.join(packDir, name), { force: true });
    }
    if (overLimit)
      await runGit(['--git-dir', gitDir, 'update-ref', '-d', FETCHED_REF], {
        env: context.env,
        timeoutMs: 30_000,
      }).catch(() => undefined);
  }
  if (overLimit) {
    throw new GitSourceError(
      'over-limits',
      `fetching ${context.remote.display} (ref ${ref ?? 'HEAD'}) was stopped at ${received} bytes: over the download limit of ${maxFetchBytes} bytes (--git-max-fetch-bytes)`,
    );
  }
  if (code !== 0) {
    const busy = timedOut ? undefined : gitLockInTheWay(gitDir, stderr);
    if (busy !== undefined) throw new GitLockBusy(busy);
    const reason = timedOut
      ? `did not finish within ${context.timeoutMs} ms`
      : gitReason(redactSecrets(stderr, context.secrets)) || `git exited with code ${String(code)}`;
    if (
      resolved.kind === 'commit' &&
      /not our ref|unadvertised object|couldn't find remote ref|no such remote ref/iu.test(stderr)
    ) {
      throw new GitSourceError(
        'unknown-ref',
        `${context.remote.display} has no commit ${resolved.source} (or does not serve it by id)`,
      );
    }
    if (/couldn't find remote ref/iu.test(stderr))
      throw new GitSourceError('unknown-ref', `${context.remote.display} has no branch or tag "${ref ?? 'HEAD'}"`);
    throw new GitSourceError('unreachable', `cannot fetch ${context.remote.display} (ref ${ref ?? 'HEAD'}): ${reason}`);
  }
  return peelToCommit(gitDir, `${FETCHED_REF}^{commit}`, context.env);
}

/**
 * The full commit id an expression names in the cache's bare repository (`<id>^{commit}`), or throws.
 *
 * @throws GitCommandError when it names no commit there.
 */
async function peelToCommit(
  gitDir: string,
  expression: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<string> {
  return (
    await runGit(['--git-dir', gitDir, 'rev-parse', '--verify', '--quiet', '--end-of-options', expression], {
      env,
      timeoutMs: 30_000,
    })
  )
    .toString('utf8')
    .trim();
}

/**
 * Whether the bare repository already holds a commit (so a pinned commit can be materialized offline).
 *
 * @param gitDir the cache's bare repository.
 * @param commit full commit id.
 */
export async function hasCommit(
  gitDir: string,
  commit: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<boolean> {
  try {
    return (await peelToCommit(gitDir, `${commit}^{commit}`, env)) === commit;
  } catch {
    return false;
  }
}
