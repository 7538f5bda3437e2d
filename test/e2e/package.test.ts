/**
 * The published package as `npx skills-serve` gets it: `npm pack` the built checkout, install the tarball into an
 * empty directory with no registry access, and run the installed bin. Proves the bundle needs no dependency at run
 * time (the install holds one package) and that the tarball holds exactly the whitelisted files.
 * Packs with --ignore-scripts: `npm test` has already built dist/, and `prepack` would rewrite dist/cli.js while other
 * test files are spawning it.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { requireDist } from '../helpers/dist.js';
import { SAMPLE_SKILL_URIS } from '../helpers/sample.js';
import { connect, type Connection, ERAS, REPO, SAMPLE_SKILLS } from '../helpers/server.js';

const PACKAGE = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { name: string; version: string };

/**
 * What the tarball must hold, and nothing else (package.json `files` plus what npm always adds): the bundle's
 * entry, its worker and its chunks (every `.js` the build wrote), no source map.
 */
function publishedFiles(): string[] {
  const bundle = readdirSync(path.join(REPO, 'dist'))
    .filter((name) => name.endsWith('.js'))
    .map((name) => `dist/${name}`);
  return [
    'CHANGELOG.md',
    'LICENSE',
    'README.md',
    'bin/skills-serve.js',
    'dist/THIRD-PARTY-LICENSES.txt',
    ...bundle,
    'package.json',
  ].sort();
}

/** The environment for child npm runs, without the variables `npm test` sets for this package's own scripts. */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(npm_package_|npm_lifecycle_|INIT_CWD$)/u.test(key)),
  );
}

function run(command: string, args: readonly string[], cwd: string): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: npmEnv(), timeout: 45_000 });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited ${result.status ?? result.signal}\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result;
}

describe('the npm package', () => {
  let temp: string;
  let tarball: { filename: string; size: number; files: { path: string }[] };
  let app: string;
  let installedBin: string;

  beforeAll(() => {
    requireDist();
    temp = mkdtempSync(path.join(os.tmpdir(), 'skills-serve-package-'));
    const packDir = path.join(temp, 'pack');
    mkdirSync(packDir);
    const packed = run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', packDir], REPO);
    tarball = (JSON.parse(packed.stdout) as (typeof tarball)[])[0]!;

    app = path.join(temp, 'app');
    mkdirSync(app);
    writeFileSync(
      path.join(app, 'package.json'),
      `${JSON.stringify({ name: 'skills-serve-install-test', private: true })}\n`,
    );
    // --offline: the tarball must install without the registry, i.e. without any dependency.
    run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--offline', '--omit=dev', path.join(packDir, tarball.filename)],
      app,
    );
    installedBin = path.join(app, 'node_modules', '.bin', 'skills-serve');
  }, 60_000);

  afterAll(() => {
    if (temp !== undefined) rmSync(temp, { recursive: true, force: true });
  });

  it('holds exactly the whitelisted files', () => {
    expect(tarball.files.map((file) => file.path).sort()).toEqual(publishedFiles());
  });

  it('installs as a single package with no dependencies', () => {
    expect(readdirSync(path.join(app, 'node_modules')).filter((name) => !name.startsWith('.'))).toEqual([PACKAGE.name]);
    const installed = JSON.parse(
      readFileSync(path.join(app, 'node_modules', PACKAGE.name, 'package.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(installed['version']).toBe(PACKAGE.version);
    expect(installed['dependencies']).toBeUndefined();
  });

  it('prints the package version from the installed bin', () => {
    const result = spawnSync(installedBin, ['--version'], {
      encoding: 'utf8',
      env: { PATH: [path.dirname(process.execPath), process.env['PATH'] ?? ''].join(path.delimiter) },
      timeout: 20_000,
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(PACKAGE.version);
  });

  it('serves sample-skills from the installed bin to the official client', async () => {
    let connection: Connection | undefined;
    try {
      connection = await connect([SAMPLE_SKILLS], ERAS[1], { command: installedBin });
      const listing = await connection.skills.list();
      expect(listing.invalid).toEqual([]);
      expect(listing.skills.map((skill) => skill.uri)).toEqual(SAMPLE_SKILL_URIS);
      const file = await connection.skills.read(listing.skills[0]!);
      expect(file.verified).toBe(true);
    } finally {
      await connection?.close();
    }
  });
});

describe('a clone that was never built', () => {
  it('says to build it, in one line, instead of a module-not-found stack trace', () => {
    const clone = mkdtempSync(path.join(os.tmpdir(), 'skills-serve-unbuilt-'));
    try {
      mkdirSync(path.join(clone, 'bin'));
      writeFileSync(path.join(clone, 'package.json'), '{ "type": "module" }\n');
      writeFileSync(
        path.join(clone, 'bin', 'skills-serve.js'),
        readFileSync(path.join(REPO, 'bin', 'skills-serve.js')),
      );
      const run = spawnSync(process.execPath, [path.join(clone, 'bin', 'skills-serve.js'), 'sample-skills'], {
        encoding: 'utf8',
        input: '',
      });
      expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({
        status: 1,
        stdout: '',
        stderr:
          'skills-serve: dist/cli.js is missing: this clone is not built yet; run npm ci && npm run build in it\n',
      });
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
  });
});
