/**
 * The server never executes skill content (SEP-2640 "Security": the server "never executes skill content").
 * A static guard over `src/`: no module that can run code (`child_process`, `vm`, `worker_threads`,
 * `module.createRequire`), no `eval` / `new Function`, and no `require()` / `import()` whose argument is not a string
 * literal (such a call could load a file out of a skills folder as code).
 *
 * The TypeScript sources are parsed with the TypeScript compiler (a devDependency), so comments and docstrings that
 * mention these names, and string literals such as `'skill://'`, can never trip or hide a match. A second, cruder
 * pass runs regular expressions over the comment-free token stream, so that a construct the AST walk does not model
 * (say, `globalThis['ev' + 'al']`) is still caught by name.
 *
 * One file is exempt from the `child_process` rule, and only from it: {@link PROCESS_SITE}, the system `git` call site
 * of git roots (docs/git-roots.md says why git runs as a process). Its exemption is itself checked: it may
 * import `spawn` and nothing else from `node:child_process`, call it exactly once, with the literal program `'git'`
 * and no `shell` option; any other file that mentions `child_process` still fails.
 *
 * The bundle `dist/*.js` is checked too, but differently: it contains third-party code we do not write. Its
 * `child_process` / `worker_threads` / code-generation sites are attributed to the module they come from through
 * each file's source map (the bundle is whitespace-minified: there are no section comments to go by). Any such site
 * in a `src/` module fails; third-party sites must match the reviewed allowlist below, so that a NEW dependency (or a
 * dependency update) that brings one in is looked at before it ships, instead of silently passing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import path from 'node:path';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

import { DIST, requireDist } from '../helpers/dist.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const SRC = path.join(REPO, 'src');
/** Every file of the bundle: the entry and the chunks (throws when the bundle was not built). */
const bundleFiles = (): string[] => {
  requireDist();
  return readdirSync(DIST)
    .filter((name) => name.endsWith('.js'))
    .map((name) => path.join(DIST, name));
};

/** Modules that run code or processes. Importing any of them from `src/` fails the build. */
const FORBIDDEN_MODULES = ['child_process', 'vm', 'worker_threads', 'cluster', 'inspector', 'repl', 'wasi'];

function isForbiddenModule(specifier: string): boolean {
  const bare = specifier.replace(/^node:/u, '').split('/')[0] ?? '';
  return FORBIDDEN_MODULES.includes(bare);
}

function listTypeScript(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const abs = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listTypeScript(abs));
    else if (entry.isFile() && /\.(?:c|m)?tsx?$/u.test(entry.name)) out.push(abs);
  }
  return out.sort();
}

/** One finding: file:line and what was found. */
interface Finding {
  readonly where: string;
  readonly what: string;
}

/** Walks the AST of one source file and reports every code-execution construct. */
function findCodeExecution(fileName: string, text: string): Finding[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const findings: Finding[] = [];
  const report = (node: ts.Node, what: string): void => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    findings.push({ where: `${path.relative(REPO, fileName)}:${line + 1}`, what });
  };
  const isStringLiteral = (node: ts.Node | undefined): node is ts.StringLiteralLike =>
    node !== undefined && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node));

  const visit = (node: ts.Node): void => {
    // import … from 'x'; export … from 'x'; import x = require('x')
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      isStringLiteral(node.moduleSpecifier)
    ) {
      if (isForbiddenModule(node.moduleSpecifier.text)) report(node, `imports ${node.moduleSpecifier.text}`);
    }
    if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expression = node.moduleReference.expression;
      if (!isStringLiteral(expression)) report(node, 'import = require() with a non-literal argument');
      else if (isForbiddenModule(expression.text)) report(node, `imports ${expression.text}`);
    }
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const first = node.arguments[0];
      // Dynamic import(…)
      if (callee.kind === ts.SyntaxKind.ImportKeyword) {
        if (!isStringLiteral(first)) report(node, 'dynamic import() with a non-literal argument');
        else if (isForbiddenModule(first.text)) report(node, `dynamic import of ${first.text}`);
      }
      // require(…), also through `module.require` / `createRequire(…)(…)`
      const calleeName = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : undefined;
      if (calleeName === 'require') {
        if (!isStringLiteral(first)) report(node, 'require() with a non-literal argument');
        else if (isForbiddenModule(first.text)) report(node, `requires ${first.text}`);
      }
      if (calleeName === 'eval') report(node, 'calls eval()');
      if (calleeName === 'createRequire')
        report(node, 'calls createRequire() (loads CommonJS modules by computed path)');
      if (calleeName === 'Function') report(node, 'calls Function() (compiles a string as code)');
      // setTimeout('code') / setInterval('code') evaluate strings in browsers; Node throws, but never write it.
      if (
        (calleeName === 'setTimeout' || calleeName === 'setInterval') &&
        first !== undefined &&
        (isStringLiteral(first) || ts.isTemplateExpression(first))
      ) {
        report(node, `${calleeName} with a string argument`);
      }
    }
    if (ts.isNewExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : undefined;
      if (name === 'Function' || name === 'AsyncFunction' || name === 'GeneratorFunction')
        report(node, `new ${name}()`);
      if (name === 'Worker' || name === 'Script') report(node, `new ${name}()`);
    }
    // Indirect eval / Function through element access: globalThis['eval'], x['Function']
    if (ts.isElementAccessExpression(node) && isStringLiteral(node.argumentExpression)) {
      const key = node.argumentExpression.text;
      if (key === 'eval' || key === 'Function' || key === 'require') report(node, `element access ['${key}']`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return findings;
}

/**
 * The source text with every comment removed: the parsed AST printed back without comments (strings and regexes
 * intact).
 */
function stripComments(text: string): string {
  const source = ts.createSourceFile('strip.ts', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  return ts.createPrinter({ removeComments: true }).printFile(source);
}

/** Name-level patterns for the crude pass over comment-free source. */
const NAME_PATTERNS: readonly [RegExp, string][] = [
  [/\bchild_process\b/u, 'mentions child_process'],
  [/['"`](?:node:)?vm['"`]/u, "mentions the 'vm' module"],
  [/\bworker_threads\b/u, 'mentions worker_threads'],
  [/(?<![.\w$])eval\s*\(/u, 'calls eval('],
  [/\bnew\s+Function\s*\(/u, 'new Function('],
  [/(?<![.\w$])require\s*\(\s*(?!['"][^'"]*['"]\s*\))/u, 'require( with a non-literal argument'],
  [/(?<![.\w$])import\s*\(\s*(?!['"][^'"]*['"]\s*\))/u, 'import( with a non-literal argument'],
];

const SOURCES = listTypeScript(SRC);

/** The one file of `src/` allowed to start a process (the system `git`, for git roots). */
const PROCESS_SITE = path.join(SRC, 'roots', 'git', 'exec.ts');

/** What the process site alone may do: import `node:child_process` (findings and name matches it is excused from). */
const PROCESS_SITE_EXCUSED = { findings: ['imports node:child_process'], names: ['mentions child_process'] } as const;

/**
 * Checks the process site's use of `node:child_process`: imports exactly `{ spawn }`, calls `spawn` exactly once,
 * with the string literal `'git'` as program, an array literal of arguments and an options object without `shell`.
 *
 * @returns the problems found (empty when the site is as reviewed).
 */
function checkProcessSite(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const problems: string[] = [];
  const imported: string[] = [];
  const spawnCalls: ts.CallExpression[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isImportDeclaration(node) &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      isForbiddenModule(node.moduleSpecifier.text)
    ) {
      const bindings = node.importClause?.namedBindings;
      if (node.moduleSpecifier.text !== 'node:child_process') problems.push(`imports ${node.moduleSpecifier.text}`);
      else if (node.importClause?.name !== undefined || bindings === undefined || !ts.isNamedImports(bindings))
        problems.push('imports child_process other than by name');
      else
        imported.push(
          ...bindings.elements.map(
            (element) => `${element.propertyName?.text ?? element.name.text}→${element.name.text}`,
          ),
        );
    }
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'spawn')
      spawnCalls.push(node);
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (imported.join(',') !== 'spawn→spawn')
    problems.push(`imports ${JSON.stringify(imported)} from node:child_process (only spawn is allowed)`);
  if (spawnCalls.length !== 1)
    problems.push(`calls spawn ${spawnCalls.length} times (exactly one call site is allowed)`);
  for (const call of spawnCalls) {
    const [program, args, options] = call.arguments;
    if (program === undefined || !ts.isStringLiteral(program) || program.text !== 'git')
      problems.push('spawns a program other than the literal "git"');
    if (args === undefined || (!ts.isCallExpression(args) && !ts.isArrayLiteralExpression(args)))
      problems.push('spawn arguments are not an argument vector');
    if (options === undefined || !ts.isObjectLiteralExpression(options))
      problems.push('spawn options are not an object literal');
    else if (
      options.properties.some(
        (property) => property.name !== undefined && ts.isIdentifier(property.name) && property.name.text === 'shell',
      )
    )
      problems.push('spawn uses a shell');
    else if (options.properties.some((property) => ts.isSpreadAssignment(property)))
      problems.push('spawn options are spread (a shell could hide in them)');
  }
  return problems;
}

describe('src/ never executes code it did not ship (static guard)', () => {
  it('finds the TypeScript sources (the guard is not vacuous)', () => {
    expect(SOURCES.length).toBeGreaterThan(10);
    expect(SOURCES.some((file) => file.endsWith(path.join('src', 'cli', 'main.ts')))).toBe(true);
  });

  it.each(SOURCES.map((file) => [path.relative(REPO, file), file]))(
    '%s: no child_process/vm/worker_threads, eval, new Function, or computed require/import',
    (_name, file) => {
      const text = readFileSync(file, 'utf8');
      const excused = file === PROCESS_SITE ? PROCESS_SITE_EXCUSED : { findings: [], names: [] };
      expect(
        findCodeExecution(file, text).filter(
          (finding) => !(excused.findings as readonly string[]).includes(finding.what),
        ),
      ).toEqual([]);
      const stripped = stripComments(text);
      const hits = NAME_PATTERNS.filter(([pattern]) => pattern.test(stripped)).map(([, what]) => what);
      expect(hits.filter((what) => !(excused.names as readonly string[]).includes(what))).toEqual([]);
    },
  );

  it('src/roots/git/exec.ts, the one process site, spawns only "git", once, without a shell', () => {
    expect(SOURCES).toContain(PROCESS_SITE);
    const text = readFileSync(PROCESS_SITE, 'utf8');
    // The exemption is not stale: the file does use child_process.
    expect(findCodeExecution(PROCESS_SITE, text).map((finding) => finding.what)).toEqual([
      'imports node:child_process',
    ]);
    expect(checkProcessSite(PROCESS_SITE, text)).toEqual([]);
  });
});

describe('the guard itself (self-test: every forbidden construct is caught, docstrings and strings are not)', () => {
  it.each([
    ["import { spawn } from 'node:child_process';", 'imports node:child_process'],
    ["import cp from 'child_process';", 'imports child_process'],
    ["import vm from 'node:vm';", 'imports node:vm'],
    ["import { Worker } from 'worker_threads';", 'imports worker_threads'],
    ["export { fork } from 'node:child_process';", 'imports node:child_process'],
    ["const cp = await import('node:child_process');", 'dynamic import of node:child_process'],
    ['const mod = await import(skillPath);', 'dynamic import() with a non-literal argument'],
    ['const mod = await import(`./${name}.js`);', 'dynamic import() with a non-literal argument'],
    ['const mod = require(file);', 'require() with a non-literal argument'],
    ["const cp = require('child_process');", 'requires child_process'],
    ['const r = createRequire(import.meta.url);', 'calls createRequire() (loads CommonJS modules by computed path)'],
    ['eval(code);', 'calls eval()'],
    ['globalThis.eval(code);', 'calls eval()'],
    ["globalThis['eval'](code);", "element access ['eval']"],
    ['const f = new Function("a", body);', 'new Function()'],
    ['const f = Function(body);', 'calls Function() (compiles a string as code)'],
    ["setTimeout('doIt()', 1);", 'setTimeout with a string argument'],
  ])('%s → %s', (code, what) => {
    expect(findCodeExecution('/virtual/bad.ts', code).map((finding) => finding.what)).toContain(what);
  });

  it.each([
    ["import { spawn } from 'node:child_process';\nspawn('git', ['--version'], { stdio: 'pipe' });", []],
    [
      "import { spawn, execSync } from 'node:child_process';\nspawn('git', [], {});",
      ['imports ["spawn→spawn","execSync→execSync"] from node:child_process (only spawn is allowed)'],
    ],
    [
      "import cp from 'node:child_process';\ncp.spawn('git', [], {});",
      [
        'imports child_process other than by name',
        'imports [] from node:child_process (only spawn is allowed)',
        'calls spawn 0 times (exactly one call site is allowed)',
      ],
    ],
    [
      "import { spawn } from 'node:child_process';\nspawn('sh', ['-c', x], {});",
      ['spawns a program other than the literal "git"'],
    ],
    [
      "import { spawn } from 'node:child_process';\nspawn(program, [], {});",
      ['spawns a program other than the literal "git"'],
    ],
    ["import { spawn } from 'node:child_process';\nspawn('git', [], { shell: true });", ['spawn uses a shell']],
    [
      "import { spawn } from 'node:child_process';\nspawn('git', [], { ...options });",
      ['spawn options are spread (a shell could hide in them)'],
    ],
    [
      "import { spawn } from 'node:child_process';\nspawn('git', [], {});\nspawn('git', [], {});",
      ['calls spawn 2 times (exactly one call site is allowed)'],
    ],
    [
      "import { spawn } from 'node:child_process';\nimport vm from 'node:vm';\nspawn('git', [], {});",
      ['imports node:vm'],
    ],
  ])('process site check: %s → %j', (code, problems) => {
    expect(checkProcessSite('/virtual/exec.ts', code)).toEqual(problems);
  });

  it('exempts the process site only: the same code in any other file of src/ is caught', () => {
    const text = readFileSync(PROCESS_SITE, 'utf8');
    expect(findCodeExecution(path.join(SRC, 'sources', 'git-command.ts'), text).map((finding) => finding.what)).toEqual(
      ['imports node:child_process'],
    );
    expect(NAME_PATTERNS.filter(([pattern]) => pattern.test(stripComments(text))).map(([, what]) => what)).toEqual([
      'mentions child_process',
    ]);
  });

  it('ignores comments, docstrings and string contents', () => {
    const code = [
      '/** Never uses eval(x) or new Function(y) or child_process; see require(name). */',
      "// import cp from 'node:child_process';",
      "const scheme = 'skill://'; // require(x)",
      "const doc = 'call eval(code) or require(x) here';",
      'const re = /require\\(x\\)/u;',
      "const ok = await import('./local.js');",
      "const data = JSON.parse('{}');",
    ].join('\n');
    expect(findCodeExecution('/virtual/ok.ts', code)).toEqual([]);
    const stripped = stripComments(code);
    expect(stripped).not.toContain('Never uses');
    expect(stripped).not.toContain("import cp from 'node:child_process'");
    expect(stripped).toContain('"skill://"');
    expect(stripped).toContain('/require\\(x\\)/u');
    expect(
      NAME_PATTERNS.filter(([pattern]) =>
        pattern.test(stripped.replace(/"[^"\n]*"|\/require\\\(x\\\)\/u/gu, '""')),
      ).map(([, what]) => what),
    ).toEqual([]);
  });
});

/**
 * The source module (`src/…` or `node_modules/<pkg>/…`, relative to the repository) of every match of `pattern` in
 * one bundle file, through its source map.
 *
 * @param file absolute path of a `dist/*.js` file; its `.map` must sit beside it.
 * @param pattern a regular expression (made global here).
 * @returns one source path per match, `(unmapped)` where the map has no entry.
 */
function sourcesOfMatches(file: string, pattern: RegExp): string[] {
  const bundle = readFileSync(file, 'utf8');
  const map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as SourceMapPayload);
  const lineStarts = [0];
  for (let index = bundle.indexOf('\n'); index !== -1; index = bundle.indexOf('\n', index + 1))
    lineStarts.push(index + 1);
  const sources: string[] = [];
  for (const match of bundle.matchAll(new RegExp(pattern.source, `${pattern.flags}g`))) {
    let line = lineStarts.length - 1;
    while ((lineStarts[line] as number) > match.index) line--;
    const entry = map.findEntry(line, match.index - (lineStarts[line] as number)) as { originalSource?: string };
    const source = entry.originalSource;
    sources.push(
      source === undefined
        ? '(unmapped)'
        : path.relative(REPO, source.startsWith('file:') ? new URL(source).pathname : path.resolve(DIST, source)),
    );
  }
  return sources;
}

/**
 * The package a source belongs to (`@scope/name` or `name`: the innermost `node_modules/` segment, since a bundled
 * package's own source map may name the files it bundled, like pnpm's `node_modules/.pnpm/ajv@…/node_modules/ajv/…`),
 * or the `src/` file.
 */
function ownerOf(source: string): string {
  const match = /node_modules\/((?:@[^/]+\/)?[^/.][^/]*)\/(?!.*node_modules\/)/u.exec(source);
  return match === null ? source : (match[1] as string);
}

/**
 * Reviewed third-party sites in the bundle, by package. Each is unreachable from skills-serve or runs only code the
 * package itself generates, never skill content:
 * - commander spawns `<program>-<subcommand>` executables only for subcommands declared with an executable
 *   description; skills-serve declares action-handler subcommands only.
 * - pino / thread-stream start a worker thread only for `transport:` targets; skills-serve logs through
 *   `pino.destination({ dest: 2, sync: true })` (src/log.ts).
 * - ajv (bundled inside @modelcontextprotocol/server, whose source map names it) compiles validators with
 *   `new Function` from JSON Schemas of the protocol, never from files in a skills folder.
 */
const REVIEWED: Readonly<Record<string, readonly string[]>> = {
  child_process: ['commander'],
  worker_threads: ['thread-stream', 'pino'],
  'new Function': ['ajv'],
  eval: [],
  vm: [],
};

const BUNDLE_PATTERNS: Readonly<Record<keyof typeof REVIEWED, RegExp>> = {
  child_process: /\bchild_process\b/u,
  worker_threads: /\bworker_threads\b/u,
  'new Function': /\bnew Function\s*\(/u,
  eval: /(?<![.\w$])eval\s*\(/u,
  vm: /["'](?:node:)?vm["']/u,
};

describe('dist/*.js (third-party code reviewed, our own sections clean)', () => {
  it('attributes every child_process / worker_threads / new Function site to a reviewed package, none to src/', () => {
    const found: Record<string, Set<string>> = Object.fromEntries(
      Object.keys(BUNDLE_PATTERNS).map((name) => [name, new Set<string>()]),
    );
    let ownSites = 0;
    for (const file of bundleFiles()) {
      // The map attributes code to src/ at all (a broken map would attribute nothing and pass everything).
      ownSites += sourcesOfMatches(file, /\bskill:\/\//u).filter((source) => source.startsWith('src/')).length;
      for (const [name, pattern] of Object.entries(BUNDLE_PATTERNS))
        for (const source of sourcesOfMatches(file, pattern)) found[name]?.add(ownerOf(source));
    }
    expect(ownSites).toBeGreaterThan(0);
    const report = Object.fromEntries(Object.entries(found).map(([name, owners]) => [name, [...owners].sort()]));
    // What the bundle holds today (printed so that a reviewer sees it in the test log).
    console.info(`dist/*.js code-execution sites by package: ${JSON.stringify(report)}`);
    for (const [name, owners] of Object.entries(report)) {
      const exempt = (owner: string): boolean => name === 'child_process' && owner === 'src/roots/git/exec.ts';
      const ownSites = owners.filter((owner) => owner.startsWith('src/') && !exempt(owner));
      expect(ownSites, `${name} in our own code`).toEqual([]);
      expect(
        owners.filter((owner) => !owner.startsWith('src/') && !(REVIEWED[name] ?? []).includes(owner)),
        `${name} from a package nobody reviewed`,
      ).toEqual([]);
    }
  });
});
