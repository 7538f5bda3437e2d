// How `npm run test:container` runs podman, shared by scripts/container-image.mjs (which builds the image) and the
// tests (which run it): plain JavaScript, so that the script runs under Node without a compile step.
//
// CI's machine has no Docker daemon and cannot reach Docker Hub, so podman runs daemonless, as root, with the flags
// that machine needs (docs/container.md, "Daemonless machines"): runc, because crun refuses the cgroup hybrid mode
// there; cgroupfs, as no systemd manages the cgroups; and resource limits no higher than the machine's own (podman's
// defaults would raise them, which is refused). The storage driver is left to podman: overlay where it can be mounted
// (there), vfs otherwise, which copies every layer whole and made the build 3 times and each start 3 times slower.
import { spawnSync } from 'node:child_process';

/** Global flags of every podman command. */
export const PODMAN_FLAGS = Object.freeze(['--runtime', 'runc', '--cgroup-manager=cgroupfs']);

/** Flags of every `podman run` and `podman build` (whose RUN steps are containers too). */
export const LIMIT_FLAGS = Object.freeze(['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1000:1000']);

/**
 * The Dockerfile's base image under the name `FROM node:22-bookworm-slim` resolves to (podman's short-name alias for
 * `node` is `docker.io/library/node`). Where it cannot be pulled, scripts/container-image.mjs assembles a stand-in.
 */
export const BASE_IMAGE = 'docker.io/library/node:22-bookworm-slim';

/** The image built from the repository's Dockerfile, which the tests run. */
export const IMAGE = 'localhost/skills-serve:test';

/** The Debian packages the script installs with apt-get when a command is missing: command → package. */
export const TOOLS = Object.freeze({ podman: 'podman', runc: 'runc', mmdebstrap: 'mmdebstrap', newuidmap: 'uidmap' });

/** The argument list of `podman <args>` with the global flags first. @param {readonly string[]} args */
export function podmanArgs(args) {
  return [...PODMAN_FLAGS, ...args];
}

/**
 * Runs `podman <args>` to completion (global flags added) and returns its exit status and output.
 *
 * @param {readonly string[]} args
 * @param {{ input?: string, inherit?: boolean, timeoutMs?: number }} [options] `inherit` passes stdout and stderr
 *   through instead of capturing them.
 * @returns {{ status: number | null, stdout: string, stderr: string }}
 */
export function podman(args, options = {}) {
  const result = spawnSync('podman', podmanArgs(args), {
    encoding: 'utf8',
    input: options.input ?? '',
    stdio: ['pipe', options.inherit === true ? 'inherit' : 'pipe', options.inherit === true ? 'inherit' : 'pipe'],
    timeout: options.timeoutMs ?? 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error !== undefined) throw result.error;
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

/** Whether the image `name` is in local storage. @param {string} name */
export function imageExists(name) {
  return podman(['image', 'exists', name]).status === 0;
}

/** The size in bytes of the local image `name`, as `podman images` reports it. @param {string} name */
export function imageSize(name) {
  const result = podman(['image', 'inspect', '--format', '{{.Size}}', name]);
  if (result.status !== 0) throw new Error(`podman image inspect ${name}: ${result.stderr.trim()}`);
  return Number(result.stdout.trim());
}
