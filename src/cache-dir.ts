/**
 * The one cache directory every persistent cache of the server lives in (docs/ARCHITECTURE.md, "Caches"): git roots
 * (`<cache>/git/`), the digest cache of folder roots (`<cache>/digests/`) and compiled code (`<cache>/compile/`).
 */
import path from 'node:path';

/** Where the cache directory comes from: the flag, the environment, the user's home. */
export interface CacheDirInputs {
  /** `--cache-dir`, when given. */
  readonly flag?: string | undefined;
  /** The process environment (`SKILLS_SERVE_CACHE_DIR`, `XDG_CACHE_HOME`, `LOCALAPPDATA`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The user's home directory (`os.homedir()`). */
  readonly home: string;
  /** `process.platform`. */
  readonly platform: NodeJS.Platform;
  /** Directory relative paths resolve against. */
  readonly cwd: string;
}

/**
 * Resolves the cache directory: `--cache-dir`, else `SKILLS_SERVE_CACHE_DIR`, else `$XDG_CACHE_HOME/skills-serve`,
 * else `%LOCALAPPDATA%\skills-serve\Cache` on Windows, else `~/.cache/skills-serve`. Pure.
 *
 * @returns an absolute path (not created).
 */
export function resolveCacheDir(inputs: CacheDirInputs): string {
  const given = nonEmpty(inputs.flag) ?? nonEmpty(inputs.env['SKILLS_SERVE_CACHE_DIR']);
  if (given !== undefined) return path.resolve(inputs.cwd, given);
  const xdg = nonEmpty(inputs.env['XDG_CACHE_HOME']);
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, 'skills-serve');
  const local = nonEmpty(inputs.env['LOCALAPPDATA']);
  if (inputs.platform === 'win32' && local !== undefined) return path.join(local, 'skills-serve', 'Cache');
  return path.join(inputs.home, '.cache', 'skills-serve');
}

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === '' ? undefined : value;

/**
 * The `--cache-dir` value on a command line, read before the command line is parsed (the last one wins, as in the
 * parser). Tolerant: a malformed command line is the parser's to report.
 *
 * @param argv `process.argv`.
 * @returns the value, or undefined when there is none.
 */
export function cacheDirArgument(argv: readonly string[]): string | undefined {
  let found: string | undefined;
  for (let index = 2; index < argv.length; index++) {
    const arg = argv[index] as string;
    if (arg === '--') break;
    if (arg === '--cache-dir') found = argv[++index];
    else if (arg.startsWith('--cache-dir=')) found = arg.slice('--cache-dir='.length);
  }
  return found;
}
