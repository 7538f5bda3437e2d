/**
 * The entry of `dist/cli.js`: turns on Node's compile cache, then loads the command line (`main.ts`, its own chunk).
 * Every host session spawns a server and compiles the same bundle again; with the cache (Node 22.1 and later) V8
 * reads the compiled code of the last start from `<cache>/compile/` instead (docs/ARCHITECTURE.md, "Caches"). On
 * Node 20 and 22.0, which lack it, this does nothing. Node checks each cached entry against the source it was
 * compiled from, and a cache directory it cannot write costs only the cache; `NODE_DISABLE_COMPILE_CACHE=1` turns it
 * off.
 */
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';

import { cacheDirArgument, resolveCacheDir } from '../cache-dir.js';

const enable = (module as { enableCompileCache?: (dir: string) => unknown }).enableCompileCache;
if (enable !== undefined) {
  try {
    const cacheDir = resolveCacheDir({
      flag: cacheDirArgument(process.argv),
      env: process.env,
      home: os.homedir(),
      platform: process.platform,
      cwd: process.cwd(),
    });
    enable(path.join(cacheDir, 'compile'));
  } catch {
    // No home directory, say: the start compiles as without the cache.
  }
}

await import('./main.js');
