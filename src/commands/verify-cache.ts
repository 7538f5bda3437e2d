/**
 * `skills-serve check --verify-cache`: trust, not faith (docs/ARCHITECTURE.md, "Digest cache"). Every entry of each
 * folder root's digest cache file is put to the rule a start trusts it by (`StoredDigests.lookup` on a fresh `stat`),
 * and every entry the rule trusts is hashed again: one whose stored digest is not the file's is a lie. Nothing is
 * indexed and the cache is not written (a plain `check` would rewrite it before it could be verified).
 */
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';

import { hashFile, NotHashableError } from '../index/digest.js';
import { digestText } from '../index/digest-algorithm.js';
import { digestCacheFile, readDigestCache, type StoredDigests } from '../index/digest-cache.js';
import { digestOf } from '../index/record.js';
import { kindOf, ROOT_KINDS, type SourceSpec } from '../roots/kinds.js';
import { displayPath, plural } from './check.js';

/** What one folder root's cache file held, entry by entry. */
export interface VerifiedRoot {
  /** The root's directory, absolute (as given, before symlinks are resolved). */
  readonly root: string;
  /** The cache file read ({@link digestCacheFile} of the root's real path). */
  readonly cacheFile: string;
  /** Why the file is not used (`missing`, `written for another root`, …): a start ignores it, nothing is verified. */
  readonly ignored?: string;
  /** Entries in the file. */
  readonly entries: number;
  /** Entries the trust rule accepts whose digest is the file's own. */
  readonly right: number;
  /** Entries the trust rule accepts whose digest is not: root-relative path (`/`-separated) and both digests. */
  readonly lied: readonly { readonly file: string; readonly cached: string; readonly actual: string }[];
  /** Entries the rule does not trust (the file's identity changed, or changed while it was hashed here). */
  readonly stale: number;
  /** Entries whose file is gone, or is no longer a regular file that can be read. */
  readonly missing: number;
}

/** The `--json` document of `check --verify-cache`. */
export interface VerifyCacheReport {
  readonly roots: readonly VerifiedRoot[];
  /**
   * Per kind of root without a fixed directory, under `<kind>Roots` (`gitRoots`: their trees are written from git's
   * objects), the roots left out, as described in logs.
   */
  readonly [kindRoots: `${string}Roots`]: readonly string[];
}

/** A root left out, and why (`RootKind.notVerified`). */
interface LeftOut {
  readonly root: string;
  readonly why: string;
}

/** What the trust rule says of the file's stored entry now: its record key when trusted, or why not. */
function trust(
  stored: StoredDigests,
  dirRel: string,
  name: string,
  file: string,
): { key: string } | 'stale' | 'missing' {
  try {
    const stat = statSync(file);
    if (!stat.isFile()) return 'missing';
    const key = stored.lookup(dirRel, name, stat);
    return key === undefined ? 'stale' : { key };
  } catch {
    return 'missing';
  }
}

/**
 * Verifies one folder root's cache file: each entry trusted by the rule is hashed again (one file at a time, in
 * chunks), and trusted once more after hashing, so a file changed meanwhile counts as stale, not as a lie.
 *
 * @param dir the root directory (absolute; checked to be a directory by `resolveSources`).
 * @param cacheDir the cache directory (`--cache-dir`, resolved as `serve` resolves it).
 * @throws the file system's error when `dir` cannot be resolved to its real path.
 */
async function verifyRoot(dir: string, cacheDir: string): Promise<VerifiedRoot> {
  const real = realpathSync(dir);
  const cacheFile = digestCacheFile(cacheDir, real);
  const stored = readDigestCache(cacheFile, real);
  const counts = { entries: 0, right: 0, stale: 0, missing: 0 };
  const lied: { file: string; cached: string; actual: string }[] = [];
  if ('ignored' in stored) return { root: dir, cacheFile, ignored: stored.ignored, ...counts, lied };
  for (const { dirRel, name } of stored.names()) {
    counts.entries++;
    const rel = dirRel === '' ? name : `${dirRel}/${name}`;
    const file = path.join(real, ...rel.split('/'));
    const trusted = trust(stored, dirRel, name, file);
    if (typeof trusted === 'string') {
      counts[trusted]++;
      continue;
    }
    let actual: string;
    try {
      actual = digestText((await hashFile(file)).digest);
    } catch (error) {
      if (!(error instanceof NotHashableError)) throw error;
      counts.missing++;
      continue;
    }
    const cached = digestOf(trusted);
    const again = trust(stored, dirRel, name, file);
    if (typeof again === 'string' || again.key !== trusted.key) counts.stale++;
    else if (actual === cached) counts.right++;
    else lied.push({ file: rel, cached, actual });
  }
  return { root: dir, cacheFile, ...counts, lied };
}

/**
 * Renders the report as text: per root, one line per lie (root-relative path, both digests), then its counts; then
 * one line per root left out, saying why.
 *
 * @param cwd paths under it are shown relative to it.
 */
function formatVerifyCacheReport(roots: readonly VerifiedRoot[], leftOut: readonly LeftOut[], cwd: string): string {
  const lines: string[] = [];
  for (const root of roots) {
    const shown = displayPath(root.root, cwd);
    if (root.ignored !== undefined) {
      lines.push(`${shown}: no digest cache to verify (${root.ignored}): ${root.cacheFile}`);
      continue;
    }
    for (const lie of root.lied)
      lines.push(`lied    ${lie.file}: the cache says ${lie.cached}, the file hashes to ${lie.actual}`);
    const count = (n: number): string => n.toLocaleString('en-US');
    lines.push(
      `${shown}: ${plural(root.entries, 'cache entry', 'cache entries')}: ${count(root.right)} trusted and right, ` +
        `${count(root.lied.length)} lied, ${count(root.stale)} not trusted (changed since hashed), ` +
        `${count(root.missing)} missing`,
    );
  }
  for (const { root, why } of leftOut) lines.push(`${root}: ${why}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Runs `check --verify-cache` over `sources`.
 *
 * @param options.cacheDir the cache directory, resolved as `serve` resolves it.
 * @param options.json print {@link VerifyCacheReport} as JSON instead of text.
 * @returns the exit code: 1 when any trusted entry lied, else 0 (also for roots without a usable cache file).
 * @throws the file system's error when a root cannot be resolved to its real path.
 */
export async function runVerifyCache(
  sources: readonly SourceSpec[],
  options: { cacheDir: string; json: boolean; write: (text: string) => void; cwd?: string },
): Promise<number> {
  const roots: VerifiedRoot[] = [];
  const leftOut: (LeftOut & { kind: string })[] = [];
  for (const source of sources) {
    const kind = kindOf(source);
    const dir = kind.fixedDirectory?.(source);
    if (dir !== undefined) roots.push(await verifyRoot(dir, options.cacheDir));
    else leftOut.push({ kind: kind.name, root: kind.describe(source), why: kind.notVerified ?? 'not verified' });
  }
  const report: VerifyCacheReport = {
    roots,
    ...Object.fromEntries(
      ROOT_KINDS.filter((kind) => kind.notVerified !== undefined).map((kind) => [
        `${kind.name}Roots`,
        leftOut.filter((left) => left.kind === kind.name).map((left) => left.root),
      ]),
    ),
  };
  options.write(
    options.json
      ? `${JSON.stringify(report, null, 2)}\n`
      : formatVerifyCacheReport(roots, leftOut, options.cwd ?? process.cwd()),
  );
  return roots.some((root) => root.lied.length > 0) ? 1 : 0;
}
