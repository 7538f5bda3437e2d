/**
 * Harness for git-root tests: a remote reachable over `file://` or smart HTTP on 127.0.0.1, a fresh cache, a
 * recording logger, and {@link GitRoot}s that are stopped after each test.
 */
import { afterEach } from 'vitest';

import { type GitLogger, GitRoot, type GitRootOptions } from '../../src/roots/git/root.js';
import { DEFAULT_GIT_LIMITS, DEFAULT_GIT_POLL_MS, type GitLimits } from '../../src/roots/git/settings.js';
import type { GitRootSpec } from '../../src/roots/git/spec.js';
import { parseSourceArg } from '../../src/roots/root-arg.js';
import { type GitHttpOptions, type GitHttpServer, startGitHttp } from './git-http.js';
import { isolatedGitEnv, type TestRemote } from './git-repo.js';
import { makeTempDir } from './tree.js';

/** How the code under test reaches a remote. */
export type Transport = 'file' | 'http';
export const TRANSPORTS: readonly Transport[] = ['file', 'http'];

/** One logged line. */
export interface LogLine {
  readonly level: 'info' | 'warn';
  readonly object: object;
  readonly message: string;
}

/** A logger that records everything, for assertions (and for proving a token never appears). */
export function recordingLogger(): GitLogger & { lines: LogLine[]; text(): string; warnings(): string[] } {
  const lines: LogLine[] = [];
  return {
    lines,
    info: (object, message) => lines.push({ level: 'info', object, message }),
    warn: (object, message) => lines.push({ level: 'warn', object, message }),
    text: () => lines.map((line) => `${line.level} ${JSON.stringify(line.object)} ${line.message}`).join('\n'),
    warnings: () => lines.filter((line) => line.level === 'warn').map((line) => line.message),
  };
}

/** Everything a test started, for cleanup. */
const started: { roots: GitRoot[]; servers: GitHttpServer[] } = { roots: [], servers: [] };

afterEach(async () => {
  await Promise.all(started.roots.splice(0).map((root) => root.stop()));
  await Promise.all(started.servers.splice(0).map((server) => server.close()));
});

/**
 * The URL of a remote over a transport: its `file://` URL, or a fresh HTTP bridge serving its project root.
 *
 * @returns the URL (without `git+`) and the bridge when there is one.
 */
export async function remoteUrl(
  remote: TestRemote,
  transport: Transport,
  options: GitHttpOptions = {},
): Promise<{ url: string; server?: GitHttpServer }> {
  if (transport === 'file') return { url: remote.fileUrl };
  const server = await startGitHttp(remote.projectRoot, options);
  started.servers.push(server);
  return { url: `${server.base}/${remote.name}`, server };
}

/** Parses `git+<url>#<suffix>` into a git root spec. */
export function gitSpec(url: string, suffix = ''): GitRootSpec {
  const source = parseSourceArg(`git+${url}${suffix === '' ? '' : `#${suffix}`}`, '/');
  if (source.kind !== 'git') throw new Error('not a git root');
  return source.git;
}

/**
 * A git root over a fresh (or given) cache, with the isolated git environment; stopped after the test.
 *
 * @param spec the root.
 * @param options anything to override (`cacheDir`, `pollMs`, `limits`, `env`, …); `limits` are merged into the
 *   defaults.
 */
export async function makeGitRoot(
  spec: GitRootSpec,
  options: Partial<Omit<GitRootOptions, 'limits'>> & { limits?: Partial<GitLimits> } = {},
): Promise<GitRoot> {
  const root = new GitRoot({
    spec,
    cacheDir: options.cacheDir ?? (await makeTempDir()),
    env: isolatedGitEnv(),
    pollMs: DEFAULT_GIT_POLL_MS,
    ...options,
    limits: { ...DEFAULT_GIT_LIMITS, ...options.limits },
  });
  started.roots.push(root);
  return root;
}
