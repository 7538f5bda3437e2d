/**
 * The entry of `dist/cli.js`: turns on Node's compile cache, answers a host's `initialize` from the record of the
 * last identical start when there is one (`transports/answer-ahead.ts`), then loads the command line (`main.ts`, its
 * own chunk). Every host session spawns a server and pays this start again (docs/ARCHITECTURE.md, "Caches" and
 * "Answering ahead").
 *
 * The compile cache (Node 22.1 and later) lets V8 read the compiled code of the last start from `<cache>/compile/`
 * instead of compiling the bundle again; on Node 20 and 22.0, which lack it, that step does nothing. Node checks each
 * cached entry against the source it was compiled from, and a cache directory it cannot write costs only the cache;
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off.
 */
import { statSync } from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { cacheDirArgument, resolveCacheDir } from '../cache-dir.js';
import { lookAhead } from '../transports/answer-ahead.js';

declare const SKILLS_SERVE_VERSION: string | undefined;

let cacheDir: string | undefined;
try {
  cacheDir = resolveCacheDir({
    flag: cacheDirArgument(process.argv),
    env: process.env,
    home: os.homedir(),
    platform: process.platform,
    cwd: process.cwd(),
  });
} catch {
  // No home directory, say: the start goes on without the caches.
}

const enable = (module as { enableCompileCache?: (dir: string) => unknown }).enableCompileCache;
if (enable !== undefined && cacheDir !== undefined) {
  try {
    enable(path.join(cacheDir, 'compile'));
  } catch {
    // A cache it cannot use: the start compiles as without it.
  }
}

if (cacheDir !== undefined) {
  const entry = statSync(fileURLToPath(import.meta.url));
  const version = typeof SKILLS_SERVE_VERSION === 'string' ? SKILLS_SERVE_VERSION : '0.0.0-dev';
  await lookAhead(
    cacheDir,
    {
      build: `${version} ${entry.size} ${entry.mtimeMs}`,
      node: process.version,
      cwd: process.cwd(),
      args: process.argv.slice(2),
      env: process.env,
    },
    () => process.stdin,
    () => process.stdout,
  );
}

await import('./main.js');
