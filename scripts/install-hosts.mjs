// Installs what `npm run test:hosts` needs on a fresh machine, outside the project: Claude Code, Gemini CLI, Codex
// CLI and opencode (the last two ship native binaries in platform packages npm picks) at pinned versions from the npm
// registry into a cache directory (SKILLS_SERVE_HOSTS_CACHE, default
// ~/.cache/skills-serve/hosts), tmux through apt-get when it is missing, and a check that `unshare -n` can cut the
// network (the host tests run every host in a network namespace of its own, with loopback only).
// Already-installed versions are reused. Prints one line per step; exits 1 with the reason when a step fails.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';

import { hostBinary, HOSTS, hostsCacheDir, SKILLS_CLI, skillsCli } from '../test/hosts/hosts.mjs';

/** Runs a command, inheriting stdio; returns whether it exited 0. */
function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  return result.status === 0;
}

/** Whether `command args` runs and exits 0 (output discarded). */
function works(command, args) {
  const result = spawnSync(command, args, { stdio: 'ignore' });
  return result.error === undefined && result.status === 0;
}

function fail(message) {
  process.stderr.write(`install-hosts: ${message}\n`);
  process.exit(1);
}

if (works('tmux', ['-V'])) {
  process.stdout.write('install-hosts: tmux is present\n');
} else {
  process.stdout.write('install-hosts: tmux is missing; installing it with apt-get\n');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (
    !run('apt-get', ['update'], { env }) ||
    !run('apt-get', ['install', '-y', '--no-install-recommends', 'tmux'], { env })
  ) {
    fail('could not install tmux with apt-get (run as root, or install tmux yourself)');
  }
}

if (!works('unshare', ['-n', 'sh', '-c', 'ip link set lo up'])) {
  fail(
    '`unshare -n` with `ip link set lo up` failed: the host tests need a network namespace (run as root, with iproute2)',
  );
}
process.stdout.write('install-hosts: unshare -n works (hosts will run with loopback only)\n');

const cache = hostsCacheDir();
mkdirSync(cache, { recursive: true });
for (const host of HOSTS) {
  const binary = hostBinary(host);
  if (existsSync(binary) && works(binary, ['--version'])) {
    process.stdout.write(`install-hosts: ${host.package}@${host.version} is in ${cache}\n`);
    continue;
  }
  process.stdout.write(`install-hosts: installing ${host.package}@${host.version} into ${cache}\n`);
  const prefix = `${cache}/${host.dir}`;
  if (
    !run('npm', [
      'install',
      '--prefix',
      prefix,
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      `${host.package}@${host.version}`,
    ])
  ) {
    fail(`npm could not install ${host.package}@${host.version}`);
  }
  if (!works(binary, ['--version']))
    fail(`${binary} --version failed after installing ${host.package}@${host.version}`);
}

// The `skills` installer and the Node 22 it runs on (test/hosts/feed.test.ts).
const installer = skillsCli();
if (existsSync(installer.cli) && works(installer.node, [installer.cli, '--version'])) {
  process.stdout.write(`install-hosts: ${SKILLS_CLI.package}@${SKILLS_CLI.version} is in ${cache}\n`);
} else {
  process.stdout.write(
    `install-hosts: installing ${SKILLS_CLI.package}@${SKILLS_CLI.version} and ${SKILLS_CLI.node} into ${cache}\n`,
  );
  const prefix = `${cache}/${SKILLS_CLI.dir}`;
  const args = ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error'];
  if (!run('npm', [...args, `${SKILLS_CLI.package}@${SKILLS_CLI.version}`, SKILLS_CLI.node]))
    fail(`npm could not install ${SKILLS_CLI.package}@${SKILLS_CLI.version}`);
  if (!works(installer.node, [installer.cli, '--version']))
    fail(`${installer.cli} --version failed after installing it`);
}
