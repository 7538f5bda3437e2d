/**
 * Running one git command to completion and turning its failure into a clear, redacted message (on top of
 * `exec.ts`, the only module that starts processes).
 */
import { GitSourceError } from './errors.js';
import { type GitRunOptions, spawnGit } from './exec.js';
import { redactSecrets } from './url.js';

/** Oldest git with every option used here (`GIT_CONFIG_COUNT` 2.31, `--no-write-fetch-head` 2.29). */
export const MIN_GIT_VERSION = [2, 31] as const;

/** A git command that exited non-zero, was killed at its timeout, or wrote too much. `message` is redacted. */
export class GitCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GitCommandError';
  }
}

/** Options of {@link runGit}. */
export interface RunGitOptions extends GitRunOptions {
  /** Bytes written to stdin, then stdin is closed. */
  readonly input?: string;
  /** Secrets to redact from messages (the token). */
  readonly secrets?: readonly string[];
  /** Refuse (kill) when stdout grows past this many bytes; default 64 MiB. */
  readonly maxStdoutBytes?: number;
}

/**
 * The first meaningful line of git's stderr (`fatal: …`, `error: …`), redacted, or a fallback.
 *
 * @param stderr git's stderr, already redacted.
 */
export function gitReason(stderr: string): string {
  const lines = stderr
    .split(/\r?\n/u)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const line = lines.find((text) => /^(?:fatal|error|remote):/u.test(text)) ?? lines.at(-1) ?? '';
  return line.replace(/^(?:fatal|error): /u, '').slice(0, 500);
}

/**
 * Runs `git <args>` and collects stdout.
 *
 * @param args subcommand and arguments.
 * @param options environment, protocol, timeout, stdin, secrets to redact.
 * @returns stdout bytes.
 * @throws GitSourceError `git-unavailable` when the binary is missing; GitCommandError when git exits non-zero,
 *   is killed at its timeout, or writes more than `maxStdoutBytes`.
 */
export async function runGit(args: readonly string[], options: RunGitOptions): Promise<Buffer> {
  const child = spawnGit(args, options);
  const limit = options.maxStdoutBytes ?? 64 * 1024 * 1024;
  const chunks: Buffer[] = [];
  let length = 0;
  let overflow = false;
  child.stdout.on('data', (chunk: Buffer) => {
    length += chunk.length;
    if (length > limit) {
      overflow = true;
      child.kill();
    } else chunks.push(chunk);
  });
  child.stdin.end(options.input ?? '');
  const { code, stderr, timedOut, spawnError } = await child.exited;
  if (spawnError !== undefined) throw gitUnavailable(spawnError);
  if (overflow) throw new GitCommandError(`git ${args[0] ?? ''} wrote more than ${limit} bytes`);
  if (code !== 0) {
    throw new GitCommandError(
      timedOut
        ? `did not finish within ${options.timeoutMs} ms`
        : gitReason(redactSecrets(stderr, options.secrets ?? [])) || `exited with code ${String(code)}`,
    );
  }
  return Buffer.concat(chunks);
}

/** The error for a git binary that cannot be started. */
export function gitUnavailable(error: NodeJS.ErrnoException): GitSourceError {
  return new GitSourceError(
    'git-unavailable',
    error.code === 'ENOENT'
      ? 'git roots need the git program, which is not installed or not on PATH (install git 2.31 or later)'
      : `git roots need the git program, which cannot be started (${error.code ?? error.message})`,
  );
}

/**
 * Checks that git is installed and recent enough.
 *
 * @param options environment for the run.
 * @returns the version text (`2.39.5`).
 * @throws GitSourceError `git-unavailable` naming what is missing.
 */
export async function checkGitVersion(options: Pick<GitRunOptions, 'env'>): Promise<string> {
  const text = (await runGit(['--version'], { env: options.env, timeoutMs: 10_000 })).toString('utf8').trim();
  const match = /(\d+)\.(\d+)(?:\.(\d+))?/u.exec(text);
  const [major, minor] = [Number(match?.[1] ?? 0), Number(match?.[2] ?? 0)];
  if (match === null || major < MIN_GIT_VERSION[0] || (major === MIN_GIT_VERSION[0] && minor < MIN_GIT_VERSION[1])) {
    throw new GitSourceError(
      'git-unavailable',
      `git roots need git ${MIN_GIT_VERSION.join('.')} or later (found "${text}")`,
    );
  }
  return match[0];
}
