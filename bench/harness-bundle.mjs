// Bundles bench/harness.ts (which imports ../src/index/build.ts) for a run, as `npm run bench` and bench/warm.mjs do.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const REPO = fileURLToPath(new URL('..', import.meta.url));

/**
 * Bundles the harness into `<work>/harness/` (ESM, split, with a `require` for the CommonJS modules it pulls in).
 *
 * @param {string} work the run's work directory
 * @returns {Promise<string>} the path of `harness.mjs`
 */
export async function bundleHarness(work) {
  const outdir = path.join(work, 'harness');
  await build({
    absWorkingDir: REPO,
    entryPoints: ['bench/harness.ts'],
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20.19',
    logLevel: 'warning',
    banner: {
      js: "import { createRequire as __benchCreateRequire } from 'node:module'; const require = __benchCreateRequire(import.meta.url);",
    },
  });
  return path.join(outdir, 'harness.mjs');
}
