/**
 * One-shot runs of the built CLI (`bin/skills-serve.js`): `check`, `manifest`, `--version`, `--help`, usage errors.
 * For a server kept running, see `wire.ts` (raw stdio) and `server.ts` (an SDK client).
 */
import { spawnSync } from 'node:child_process';

import { BIN, REPO, TEST_CACHE } from './paths.js';

/** How a CLI run ended. */
export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `skills-serve <args>` to completion with empty stdin and a clean environment: `PATH` plus `env` only, so no
 * `SKILLS_SERVE_*` variable of the test's own environment leaks in. Output up to 256 MiB (the `manifest` of a large
 * tree) is kept. Throws if the process could not be started or ran past 60 s.
 *
 * @param args CLI arguments.
 * @param cwd the working directory (default: the repository, where `sample-skills` names the sample tree).
 * @param env extra environment variables (`{ SKILLS_SERVE_JSON: '1' }`).
 */
export function cli(args: readonly string[], cwd = REPO, env: Record<string, string> = {}): CliRun {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    encoding: 'utf8',
    input: '',
    timeout: 60_000,
    maxBuffer: 256 * 1024 * 1024,
    env: { PATH: process.env['PATH'] ?? '', ...TEST_CACHE, ...env },
  });
  if (result.error !== undefined) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
