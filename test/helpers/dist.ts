/**
 * The build output some tests inspect or run as shipped (`dist/`, made by `npm run build`; `npm test` builds first).
 * A test that needs it fails with one clear message when it is missing, never skips silently.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const DIST = path.resolve(import.meta.dirname, '..', '..', 'dist');

/** The bundle's entry, which `bin/skills-serve.js` imports. */
export const DIST_ENTRY = path.join(DIST, 'cli.js');

/**
 * Throws unless the build output is there.
 *
 * @throws Error `dist/cli.js is missing: run npm run build first` (the path names what is missing).
 */
export function requireDist(): void {
  if (!existsSync(DIST_ENTRY))
    throw new Error(`${path.relative(process.cwd(), DIST_ENTRY)} is missing: run npm run build first`);
}

/**
 * A copy of what the CLI needs to run (`bin/`, `dist/`, `package.json`) in a new world-readable temp directory, for a
 * server started as another user (`setpriv` to `nobody`): the checkout itself may sit under a private folder (a
 * `mktemp -d` clone, `/root`) that user cannot enter. The caller removes `dir` when done.
 *
 * @returns the copy's directory and its `bin/skills-serve.js`.
 */
export async function readableInstall(): Promise<{ dir: string; bin: string }> {
  requireDist();
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'skills-serve-install-'));
  const repo = path.dirname(DIST);
  for (const part of ['bin', 'dist', 'package.json'])
    await fsp.cp(path.join(repo, part), path.join(dir, part), { recursive: true });
  // mkdtemp makes 0700; the copies keep the checkout's modes (umask 022 in CI, but not everywhere).
  spawnSync('chmod', ['-R', 'a+rX', dir]);
  return { dir, bin: path.join(dir, 'bin', 'skills-serve.js') };
}
