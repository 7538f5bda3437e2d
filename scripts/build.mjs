// Bundles src/cli/boot.ts (dist/cli.js, which loads src/cli/main.ts as a chunk) into ESM files in dist/, so
// `npx skills-serve` starts without resolving a module graph and installs no dependencies. Code splitting keeps what
// a command does not need out of its start: the HTTP transport and the one-shot commands are chunks loaded when used.
// CommonJS dependencies (pino, commander) call require(): the banner gives every file a real one.
// The bundle is the only copy of its dependencies' code that users receive, so their license texts (MIT, and
// Apache-2.0 for the MCP SDK, which must travel with redistributed copies) are collected into
// dist/THIRD-PARTY-LICENSES.txt, which is published next to it.
// dist/*.js.map are written for local debugging (`node --enable-source-maps`) but not published (package.json
// `files`): they are more than twice the size of the bundle, and identifiers are not minified, so stack traces keep
// their function names. Whitespace and comments are minified away: V8 keeps every module's source text for the life
// of the process, and one non-Latin-1 character in a comment (…, —) makes a whole file's text two bytes per character;
// measured at startup on an empty root, 66 MB peak RSS against 71 MB and about 10% less time to `initialize`.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

rmSync(path.join(ROOT, 'dist'), { recursive: true, force: true });
const result = await build({
  absWorkingDir: ROOT,
  entryPoints: { cli: 'src/cli/boot.ts' },
  outdir: 'dist',
  entryNames: '[name]',
  chunkNames: '[name]-[hash]',
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  sourcemap: true,
  legalComments: 'none',
  minifyWhitespace: true,
  logLevel: 'warning',
  metafile: true,
  define: { SKILLS_SERVE_VERSION: JSON.stringify(version) },
  banner: {
    js: "import { createRequire as __skillsServeCreateRequire } from 'node:module'; const require = __skillsServeCreateRequire(import.meta.url);",
  },
});

writeFileSync(path.join(ROOT, 'dist', 'THIRD-PARTY-LICENSES.txt'), thirdPartyLicenses(result.metafile));
writeFileSync(path.join(ROOT, 'dist', 'modes.json'), `${JSON.stringify(loadedPerMode(result.metafile), null, 2)}\n`);

/**
 * What each way of running loads before it does its work: the chunks reached from `dist/cli.js` through static imports
 * and the dynamic imports that mode makes (the command line `main.ts` always; `--http` the HTTP transport; each
 * command its module; a git root its kind's source), with the source files and packages in them. Written to
 * dist/modes.json (not published) for `test/unit/bundle-modes.test.ts` and `npm run bench`.
 *
 * @param {import('esbuild').Metafile} metafile esbuild's metafile.
 * @returns {Record<string, { bytes: number, chunks: string[], inputs: string[] }>} per mode: the bytes of the
 *   chunks loaded, their file names, and the inputs bundled in them (`src/…` paths and `node_modules/<package>`).
 */
function loadedPerMode(metafile) {
  const outputs = Object.entries(metafile.outputs).filter(([file]) => file.endsWith('.js'));
  const byEntry = new Map(outputs.flatMap(([file, output]) => (output.entryPoint ? [[output.entryPoint, file]] : [])));
  const byFile = new Map(outputs);
  const closure = (roots) => {
    const seen = new Set();
    const visit = (file) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const { path: next, kind } of byFile.get(file)?.imports ?? [])
        if (kind === 'import-statement' && byFile.has(next)) visit(next);
    };
    for (const root of roots) visit(root);
    return seen;
  };
  const entryOf = (source) => {
    const file = byEntry.get(source);
    if (file === undefined) throw new Error(`no chunk has ${source} as its entry: is it still imported dynamically?`);
    return file;
  };
  const base = ['src/cli/boot.ts', 'src/cli/main.ts'];
  const modes = {
    stdio: base,
    'stdio, git root': [...base, 'src/roots/git/source.ts'],
    http: [...base, 'src/transports/http.ts'],
    check: [...base, 'src/commands/check.ts'],
    manifest: [...base, 'src/commands/manifest.ts'],
  };
  return Object.fromEntries(
    Object.entries(modes).map(([mode, sources]) => {
      const files = [...closure(sources.map(entryOf))].sort();
      const inputs = new Set();
      for (const file of files)
        for (const input of Object.keys(byFile.get(file)?.inputs ?? {}))
          inputs.add(input.replace(/^.*node_modules\/((?:@[^/]+\/)?[^/]+)\/.*$/u, 'node_modules/$1'));
      const bytes = files.reduce((sum, file) => sum + (byFile.get(file)?.bytes ?? 0), 0);
      return [mode, { bytes, chunks: files.map((file) => path.basename(file)), inputs: [...inputs].sort() }];
    }),
  );
}

/**
 * The license files of every npm package with at least one module in the bundle.
 *
 * @param {import('esbuild').Metafile} metafile esbuild's metafile; input paths are relative to ROOT, `/`-separated.
 * @returns {string} one section per package (name@version, declared license, then its license/notice files).
 * @throws Error when a bundled package ships no license file, so that nothing is published without one.
 */
function thirdPartyLicenses(metafile) {
  const packageDirs = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//u.exec(input);
    if (match !== null) packageDirs.add(path.join(ROOT, match[1]));
  }
  const sections = [...packageDirs].map((dir) => {
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const files = readdirSync(dir)
      .filter((name) => /^(licen[cs]e|copying|notice)/iu.test(name))
      .sort();
    if (files.length === 0)
      throw new Error(`${manifest.name}@${manifest.version} is bundled but ships no license file`);
    const texts = files.map((name) => readFileSync(path.join(dir, name), 'utf8').trim()).join('\n\n');
    return {
      id: `${manifest.name}@${manifest.version}`,
      text: `${manifest.name}@${manifest.version} (${manifest.license})\n\n${texts}\n`,
    };
  });
  sections.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const rule = `\n${'-'.repeat(78)}\n\n`;
  return `skills-serve bundles the following packages into dist/*.js. Their licenses follow.\n${rule}${sections.map((section) => section.text).join(rule)}`;
}
