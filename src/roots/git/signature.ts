/**
 * Verified git sources (docs/git-roots.md, "Verified commits"; docs/security.md): with `--git-allowed-signers FILE`,
 * a commit is served only when it carries an SSH signature by a key that FILE (git's `gpg.ssh.allowedSignersFile`
 * format) lists for the `git` namespace. The commit object is read from the cache's bare repository, so the check
 * runs before its tree is written; a depth-1 fetch is enough, since a commit carries its own signature.
 *
 * Two git runs, both through `exec.ts`: `git cat-file commit <id>` (our code reads the signature header: absent, or
 * not an SSH signature, is refused without running anything else), then `git verify-commit`, which runs the
 * `ssh-keygen` found on PATH (`-Y find-principals`, `-Y verify`, `-Y check-novalidate`). Every program git could
 * start for a signature (`gpg.ssh.program`, `gpg.program`, `gpg.x509.program`) is pinned on the command line to that
 * absolute path, and the allowed signers to FILE, so no configuration file (the user's, or the cache repository's)
 * can choose another program or another list.
 */
import { constants, promises as fsp } from 'node:fs';
import path from 'node:path';

import { gitUnavailable, runGit } from './command.js';
import { GitSourceError } from './errors.js';
import { spawnGit } from './exec.js';

/** Who signed a served commit: the principal FILE lists for the key, and the key's fingerprint. */
export interface Signer {
  /** The principal of the allowed signers line that matched (`alice@example.com`). */
  readonly principal: string;
  /** The key's fingerprint as `ssh-keygen` prints it (`SHA256:9OyQp5K4…`). */
  readonly key: string;
}

/** How commits are verified: the allowed signers file and the `ssh-keygen` that checks signatures against it. */
export interface CommitVerifier {
  /** Absolute path of the allowed signers file (`--git-allowed-signers`). */
  readonly file: string;
  /** Absolute path of `ssh-keygen`, found on PATH ({@link findSshKeygen}). */
  readonly program: string;
}

/** The stable code of a refused commit, in logs, `/readyz` and metrics. */
export const SIGNATURE_REFUSED = 'git-signature-refused';

/** A commit not signed by an allowed key (`reason` `unverified`, exit 1 at start). */
export class UnverifiedCommitError extends GitSourceError {
  /**
   * @param why the reason alone (`it is not signed`), for logs and `/readyz`.
   * @param message the whole message, naming the root and the commit.
   */
  constructor(
    readonly why: string,
    message: string,
  ) {
    super('unverified', message);
    this.name = 'UnverifiedCommitError';
  }
}

/**
 * The first `ssh-keygen` on PATH (absolute directories only: a relative entry would depend on the working directory).
 *
 * @param env the process environment (its `PATH`).
 * @returns its absolute path.
 * @throws GitSourceError `git-unavailable` when no directory of PATH holds an executable `ssh-keygen`.
 */
export async function findSshKeygen(env: Readonly<Record<string, string | undefined>>): Promise<string> {
  for (const dir of (env['PATH'] ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, 'ssh-keygen');
    try {
      await fsp.access(candidate, constants.X_OK);
      if ((await fsp.stat(candidate)).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  throw new GitSourceError(
    'git-unavailable',
    '--git-allowed-signers needs the ssh-keygen program (OpenSSH 8.2 or later) to verify signatures; it is not on PATH',
  );
}

/**
 * The signature header of a raw commit object (`gpgsig`, or `gpgsig-sha256` in a SHA-256 repository), unfolded.
 *
 * @param commit the text of `git cat-file commit`.
 * @returns the signature text, or `undefined` for an unsigned commit.
 */
export function commitSignature(commit: string): string | undefined {
  const headers = commit.split('\n\n', 1)[0] ?? '';
  const match = /^gpgsig(?:-sha256)? (.*(?:\n .*)*)/mu.exec(headers);
  return match?.[1]?.replace(/\n /gu, '\n');
}

/**
 * Verifies the signature of `commit` in the bare repository `gitDir` against the allowed signers.
 *
 * @param options the repository, the commit (full id), the verifier, the environment, and `describe` (the root as
 *   `<url>#<ref>[:<subdir>]`, for the message).
 * @returns the signer.
 * @throws UnverifiedCommitError (a GitSourceError, `unverified`: exit 1 at start): `<root> at commit <id> is not
 *   served: <reason> (--git-allowed-signers <file>)`, the reason one of `it is not signed`, `its signature is not an
 *   SSH signature (OpenPGP and X.509 signatures are not verified)`, `it is signed by a key not in the allowed signers
 *   (<type> key <fingerprint>)`, `its signature does not verify (<ssh-keygen's words>)`; GitSourceError `git-failed`
 *   when the commit cannot be read from the cache, `git-unavailable` when git cannot be started.
 */
export async function verifyCommit(options: {
  readonly gitDir: string;
  readonly commit: string;
  readonly verifier: CommitVerifier;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly describe: string;
}): Promise<Signer> {
  const { gitDir, commit, verifier, env } = options;
  const refuse = (why: string): UnverifiedCommitError =>
    new UnverifiedCommitError(
      why,
      `${options.describe} at commit ${commit} is not served: ${why} (--git-allowed-signers ${verifier.file})`,
    );
  let text: string;
  try {
    text = (
      await runGit(['--git-dir', gitDir, 'cat-file', 'commit', '--end-of-options', commit], { env, timeoutMs: 30_000 })
    ).toString('utf8');
  } catch (error) {
    throw new GitSourceError(
      'git-failed',
      `cannot read commit ${commit} of ${options.describe} from the cache: ${(error as Error).message}`,
    );
  }
  const signature = commitSignature(text);
  if (signature === undefined) throw refuse('it is not signed');
  if (!signature.startsWith('-----BEGIN SSH SIGNATURE-----'))
    throw refuse('its signature is not an SSH signature (OpenPGP and X.509 signatures are not verified)');
  const pinned = [
    ['gpg.ssh.program', verifier.program],
    ['gpg.program', verifier.program],
    ['gpg.x509.program', verifier.program],
    ['gpg.ssh.allowedSignersFile', verifier.file],
  ].flatMap(([key, value]) => ['-c', `${key}=${value}`]);
  const child = spawnGit([...pinned, '--git-dir', gitDir, 'verify-commit', '--raw', '--end-of-options', commit], {
    env,
    timeoutMs: 30_000,
  });
  child.stdin.end();
  child.stdout.resume();
  const { code, stderr, spawnError } = await child.exited;
  if (spawnError !== undefined) throw gitUnavailable(spawnError);
  const good = /^Good "git" signature for (.+) with \S+ key (\S+)$/mu.exec(stderr);
  if (code === 0 && good !== null) return { principal: good[1] as string, key: good[2] as string };
  const unknown = /^Good "git" signature with (\S+ key \S+)$/mu.exec(stderr);
  if (unknown !== null) throw refuse(`it is signed by a key not in the allowed signers (${unknown[1] as string})`);
  const why = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .at(-1);
  throw refuse(`its signature does not verify (${why ?? `git verify-commit exited with code ${String(code)}`})`);
}
