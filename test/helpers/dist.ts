/**
 * The build output some tests inspect or run as shipped (`dist/`, made by `npm run build`; `npm test` builds first).
 * A test that needs it fails with one clear message when it is missing, never skips silently.
 */
import { existsSync } from 'node:fs';
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
