/**
 * Vitest global setup: one cache directory for every server the tests start (`SKILLS_SERVE_CACHE_DIR`, through the
 * spawn helpers), so that no test writes into the user's own cache (the persistent digest cache, git trees), and it
 * is removed when the run ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skills-serve-test-cache-'));
  process.env['SKILLS_SERVE_TEST_CACHE_DIR'] = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
