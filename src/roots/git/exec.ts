/**
 * The one place in `src/` that starts a process: the system `git` binary, for git roots (the choice and its
 * reasons: docs/git-roots.md, "Which git"). The no-code-execution guard (test/unit/no-code-execution.test.ts) allows
 * `node:child_process` in this file only.
 *
 * What makes it safe to point at a hostile repository:
 * - Only the executable `git` runs, with an argument vector (no shell). Callers never pass a repository's content as
 *   an argument; refs and URLs are validated before they get here (`root-arg.ts`, `url.ts`).
 * - Every run carries {@link SAFETY_CONFIG} on its command line, which outranks every config file: hooks point at
 *   `/dev/null`, only the one transport the URL needs is allowed (never `ext::`), fetched objects are fsck'ed, no
 *   submodule recursion, no automatic gc or maintenance (which would fork in the background), no fsmonitor.
 *   Trees are materialized from `ls-tree` and `cat-file --batch` (`materialize.ts`), never `checkout`, so no
 *   clean/smudge filter, `ident`/eol conversion or LFS smudge can run.
 * - The environment is the caller's minus every `GIT_*` variable that could redirect git (`GIT_DIR`, …) or print
 *   secrets (`GIT_TRACE*`, `GIT_CURL_VERBOSE`), plus `GIT_TERMINAL_PROMPT=0` and `GIT_ALLOW_PROTOCOL` naming the one
 *   transport allowed: unlike `protocol.allow`, it overrides every `protocol.<name>.allow` in the user's config, so
 *   a `url.<base>.insteadOf` rewrite to `ext::` cannot run a command. Secret configuration (the HTTP
 *   `Authorization` header) travels in `GIT_CONFIG_COUNT` variables, never in the argument vector that `ps` shows.
 * - Each run is its own process group without a controlling terminal (so ssh cannot prompt and hang the server) and
 *   is killed, group and all, when its time runs out or the caller aborts.
 */
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

/** Configuration every git run gets, as `-c key=value` (command-line scope: no config file can override it). */
export const SAFETY_CONFIG: readonly (readonly [string, string])[] = [
  ['core.hooksPath', '/dev/null'],
  ['core.fsmonitor', 'false'],
  ['protocol.allow', 'never'],
  // A user's `protocol.ext.allow=always` would outrank `protocol.allow=never`; this outranks it (and see
  // GIT_ALLOW_PROTOCOL).
  ['protocol.ext.allow', 'never'],
  ['protocol.version', '2'],
  ['transfer.fsckObjects', 'true'],
  ['fetch.recurseSubmodules', 'false'],
  ['submodule.recurse', 'false'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  ['fetch.writeCommitGraph', 'false'],
  ['init.templateDir', ''],
  // A redirect could lead off the --git-allow list (checked on the URL as given), and with a token it would carry
  // the Authorization header along: no run follows one. A moved repository fails with git's redirect message.
  ['http.followRedirects', 'false'],
  // Keep every fetched pack as a pack (not loose objects), so the download watchdog can measure it as it grows.
  ['fetch.unpackLimit', '1'],
];

/** Environment variables passed on to git: the user's transport and credential setup, and nothing that redirects. */
const KEPT_GIT_VARIABLES = new Set([
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_SSH_VARIANT',
  'GIT_ASKPASS',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_NOSYSTEM',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
  'GIT_SSL_NO_VERIFY',
  'GIT_HTTP_USER_AGENT',
  'GIT_EXEC_PATH',
]);

/** How to run git. */
export interface GitRunOptions {
  /** Base environment (the process environment, passed in by the CLI). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The one transport this run may use (`protocol.<scheme>.allow=always`); none for purely local commands. */
  readonly protocol?: 'file' | 'http' | 'https' | 'ssh';
  /** Extra configuration kept out of the argument vector (secrets), as `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`. */
  readonly secretConfig?: readonly (readonly [string, string])[];
  /** Working directory. */
  readonly cwd?: string;
  /** Kill the run after this many ms. */
  readonly timeoutMs: number;
  /** Kill the run when this signal aborts. */
  readonly signal?: AbortSignal;
}

/** A running git process. */
export interface GitProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  /** Settles when the process has exited: its exit code (`null` when killed) and the last 64 KiB of stderr. */
  readonly exited: Promise<{
    code: number | null;
    stderr: string;
    timedOut: boolean;
    spawnError?: NodeJS.ErrnoException;
  }>;
  /** Kills the process group now. */
  kill(): void;
}

/** Bytes of stderr kept for messages. */
const STDERR_KEEP_BYTES = 64 * 1024;

/**
 * The environment of a git run.
 *
 * @param options base environment, the one transport allowed, and secret configuration.
 * @returns a new environment object.
 */
export function gitEnvironment(
  options: Pick<GitRunOptions, 'env' | 'secretConfig' | 'protocol'>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.env)) {
    if (value === undefined) continue;
    if (name.startsWith('GIT_') && !KEPT_GIT_VARIABLES.has(name)) continue;
    env[name] = value;
  }
  env['GIT_TERMINAL_PROMPT'] = '0';
  // A list with no real transport in it ("none") allows none: purely local commands need none.
  env['GIT_ALLOW_PROTOCOL'] = options.protocol ?? 'none';
  const secret = options.secretConfig ?? [];
  if (secret.length > 0) {
    env['GIT_CONFIG_COUNT'] = String(secret.length);
    secret.forEach(([key, value], index) => {
      env[`GIT_CONFIG_KEY_${index}`] = key;
      env[`GIT_CONFIG_VALUE_${index}`] = value;
    });
  }
  return env;
}

/**
 * The full argument vector: safety configuration, the allowed protocol, then `args`.
 *
 * @param args the git subcommand and its arguments.
 * @param protocol the transport to allow, if any.
 */
export function gitArguments(args: readonly string[], protocol?: GitRunOptions['protocol']): string[] {
  const config = [
    ...SAFETY_CONFIG,
    ...(protocol === undefined ? [] : [[`protocol.${protocol}.allow`, 'always'] as const]),
  ];
  return [...config.flatMap(([key, value]) => ['-c', `${key}=${value}`]), ...args];
}

/**
 * Starts `git <safety config> <args>`.
 *
 * @param args the subcommand and its arguments (never repository content).
 * @param options environment, protocol, timeout.
 * @returns the process; it never throws: a missing binary is reported through `exited.spawnError` (`ENOENT`).
 */
export function spawnGit(args: readonly string[], options: GitRunOptions): GitProcess {
  const child = spawn('git', gitArguments(args, options.protocol), {
    cwd: options.cwd,
    env: gitEnvironment(options),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    windowsHide: true,
  });
  let timedOut = false;
  const kill = (): void => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, options.timeoutMs);
  timer.unref();
  const onAbort = (): void => kill();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let stderr = Buffer.alloc(0);
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = Buffer.concat([stderr, chunk]);
    if (stderr.length > STDERR_KEEP_BYTES) stderr = stderr.subarray(stderr.length - STDERR_KEEP_BYTES);
  });
  // A reader that stops early (or a process that dies) must not turn into an unhandled stream error.
  child.stdin.on('error', () => undefined);
  child.stdout.on('error', () => undefined);
  const exited = new Promise<{
    code: number | null;
    stderr: string;
    timedOut: boolean;
    spawnError?: NodeJS.ErrnoException;
  }>((resolve) => {
    let spawnError: NodeJS.ErrnoException | undefined;
    child.on('error', (error: NodeJS.ErrnoException) => {
      spawnError = error;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ code, stderr: stderr.toString('utf8'), timedOut, ...(spawnError === undefined ? {} : { spawnError }) });
    });
  });
  return { stdin: child.stdin, stdout: child.stdout, exited, kill };
}
