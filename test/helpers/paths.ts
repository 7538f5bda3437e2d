/**
 * Where the checkout's parts are, and the cache directory of every server a test starts: the leaf that the spawn
 * helpers (`wire.ts`, `server.ts`, `cli.ts`) share.
 */
import path from 'node:path';

export const REPO = path.resolve(import.meta.dirname, '..', '..');
export const BIN = path.join(REPO, 'bin', 'skills-serve.js');
export const SAMPLE_SKILLS = path.join(REPO, 'sample-skills');
export const FIXTURES = path.join(REPO, 'test', 'fixtures');

/**
 * The cache directory of every server a test starts (`test/global-cache.ts`), so that none writes into the user's own
 * cache; a test that names `SKILLS_SERVE_CACHE_DIR` or `--cache-dir` itself wins.
 */
export const TEST_CACHE: Record<string, string> =
  process.env['SKILLS_SERVE_TEST_CACHE_DIR'] === undefined
    ? {}
    : { SKILLS_SERVE_CACHE_DIR: process.env['SKILLS_SERVE_TEST_CACHE_DIR'] };
