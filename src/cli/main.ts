/**
 * The `skills-serve` command line: argv + env → frozen {@link Config} → `serve` (default), `check` or `manifest`.
 * The only module that reads `process.argv`/`process.env` or exits (docs/ARCHITECTURE.md, "Layers").
 * Every flag has an environment twin `SKILLS_SERVE_<FLAG>`.
 */
import './heap.js';

import { readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';

import { resolveCacheDir } from '../cache-dir.js';
import type { CommandOptions } from '../commands/snapshot-once.js';
import {
  type AuthSettings,
  CACHE_SCOPES,
  type CacheScope,
  COMPAT_MODES,
  type CompatMode,
  type Config,
  DEFAULT_AUTH_SCOPE,
  DEFAULT_CATALOG_MAX,
  DEFAULT_PAGE_SIZE,
  DEFAULT_POLL_MS,
  type HttpEndpoint,
  RESOURCE_LIST_MODES,
  type ResourceListMode,
} from '../config.js';
import { editDistance } from '../edit-distance.js';
import { exitCodeOf, SkillsServeError } from '../errors.js';
import { SYMLINK_POLICIES, type SymlinkPolicy } from '../index/policy.js';
import { createLogger, defaultLogLevel, LOG_LEVELS, type LogLevel } from '../log.js';
import { DEFAULT_GIT_LIMITS, DEFAULT_GIT_POLL_MS, type GitSettings } from '../roots/git/settings.js';
import { type GitAllowEntry, parseGitAllow } from '../roots/git/url.js';
import type { RootKindSettings, SourceSpec } from '../roots/kinds.js';
import { resolveSources } from '../roots/root-arg.js';
import { run } from '../runtime.js';
import { StdioAdapter } from '../transports/stdio.js';
import {
  checkAllowedSigners,
  parseAuthAudience,
  parseAuthIssuer,
  parseAuthScopes,
  parseByteSize,
  parseCatalogMax,
  parseGitMaxFiles,
  parseGitPollMs,
  parseHttpEndpoint,
  parseInstructionsMax,
  parseInstructionsWait,
  parsePageSize,
  parsePollMs,
  parseTtlMs,
} from './options.js';

declare const SKILLS_SERVE_VERSION: string | undefined;
/** The package version, injected by the bundler. */
const VERSION = typeof SKILLS_SERVE_VERSION === 'string' ? SKILLS_SERVE_VERSION : '0.0.0-dev';

interface CommonOptions {
  logLevel?: LogLevel;
  digestCache: boolean;
  symlinks: SymlinkPolicy;
  cacheDir?: string;
  gitAllow?: GitAllowEntry[];
  gitMaxFiles?: number;
  gitMaxBytes?: number;
  gitMaxFetchBytes?: number;
  gitAllowedSigners?: string;
}

interface ServeOptions extends CommonOptions {
  pageSize: number;
  gitPoll?: number;
  ttl?: number;
  cacheScope: CacheScope;
  strict: boolean;
  withholdExecutables: boolean;
  watch: boolean;
  poll?: number | true;
  compat: CompatMode;
  catalogMax: number;
  /** Deprecated: `--catalog-max` replaced it ({@link deprecatedOptions}). */
  instructionsMax?: number;
  /** Deprecated: does nothing ({@link deprecatedOptions}). */
  instructionsWait?: number;
  resources: ResourceListMode;
  http?: HttpEndpoint;
  httpToken?: string;
  httpTokens?: string;
  authIssuer?: string[];
  authAudience?: string;
  authScopes: string[];
  authClientId?: string;
  authClientSecret?: string;
  authClaims?: string;
}

/**
 * An option with its environment twin: `SKILLS_SERVE_` and the flag's name in upper snake case (`--git-max-bytes` →
 * `SKILLS_SERVE_GIT_MAX_BYTES`, `--no-watch` → `SKILLS_SERVE_NO_WATCH`), the one rule every flag follows.
 */
function envOption(flags: string, description: string): Option {
  const name = /^--([a-z][a-z-]*)/u.exec(flags)?.[1] ?? '';
  return new Option(flags, description).env(`SKILLS_SERVE_${name.toUpperCase().replaceAll('-', '_')}`);
}

/** One option of an earlier release still accepted, and the warning it is logged with. */
interface Deprecation {
  /** The flag or variable as the user gave it (`--instructions-max`, `SKILLS_SERVE_INSTRUCTIONS_MAX`). */
  readonly option: string;
  /** What replaced it, in the same form; none when nothing is needed any more. */
  readonly replacement: string | undefined;
  readonly message: string;
}

/**
 * The options of earlier releases that `serve` still accepts, hidden from `--help`, each with one warning that names
 * what replaced it (CONTRIBUTING.md, "Compatibility": an option is never removed in one step):
 *
 * - `--instructions-max` (`SKILLS_SERVE_INSTRUCTIONS_MAX`) bounded the catalog in the instructions; the catalog is in
 *   `read_skill`'s description now, bounded by `--catalog-max`, which its value sets unless `--catalog-max` is given.
 * - `--instructions-wait` (`SKILLS_SERVE_INSTRUCTIONS_WAIT`) made `initialize` wait for the index; instructions no
 *   longer name skills nor wait, so it does nothing.
 *
 * @returns the `--catalog-max` to serve with, and one warning per deprecated option given.
 */
function deprecatedOptions(options: ServeOptions, command: Command): { catalogMax: number; warnings: Deprecation[] } {
  const warnings: Deprecation[] = [];
  /** The option as the user gave it: the flag, or its environment twin. */
  const given = (key: string, flag: string): string =>
    command.getOptionValueSource(key) === 'env'
      ? `SKILLS_SERVE_${flag.slice(2).toUpperCase().replaceAll('-', '_')}`
      : flag;
  let { catalogMax } = options;
  if (options.instructionsMax !== undefined) {
    const option = given('instructionsMax', '--instructions-max');
    const replacement = given('instructionsMax', '--catalog-max');
    const catalogGiven = command.getOptionValueSource('catalogMax') !== 'default';
    if (!catalogGiven) catalogMax = options.instructionsMax;
    warnings.push({
      option,
      replacement,
      message:
        `${option} is deprecated: use ${replacement} (the catalog is in read_skill's description now, not in the ` +
        `instructions); ${catalogGiven ? `ignored, since ${given('catalogMax', '--catalog-max')} is given` : `its value ${options.instructionsMax} is used as ${replacement}`}`,
    });
  }
  if (options.instructionsWait !== undefined) {
    const option = given('instructionsWait', '--instructions-wait');
    warnings.push({
      option,
      replacement: undefined,
      message: `${option} is deprecated and does nothing: instructions no longer wait for the index; remove it`,
    });
  }
  return { catalogMax, warnings };
}

/** What a flag given an empty or blank value is told (an unset variable, as in `--flag "$VAR"`). */
const blank = (flag: string, variable: string): string =>
  `${flag} must not be empty (an unset variable, as in ${flag} "$${variable}"?)`;

/**
 * A parser of a value that must not be empty or blank.
 *
 * @param flag the flag, for the message.
 * @param variable the variable a user most likely meant, for the message.
 * @returns the value as given; throws RangeError when it is blank.
 */
function notBlank(flag: string, variable: string): (text: string) => string {
  return (text) => {
    if (text.trim() === '') throw new RangeError(blank(flag, variable));
    return text;
  };
}

/** Wraps a parser that throws into one commander reports as an invalid argument. */
function argParser<T>(parse: (text: string) => T): (text: string) => T {
  return (text) => {
    try {
      return parse(text);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
  };
}

/** Options every command shares: the roots, the log level, the symlink policy and how git roots are fetched. */
function addCommonOptions(command: Command): Command {
  return command
    .argument(
      '<roots...>',
      'skills folders (dir, or prefix=dir to mount it under prefix) and git roots (git+<url>#<ref>:<subdir>, github:owner/repo#ref)',
    )
    .addOption(
      envOption(
        '--log-level <level>',
        'minimum level of the logs written to stderr (default: warn when a host runs it over stdio, info in a terminal or with --http)',
      ).choices(LOG_LEVELS),
    )
    .addOption(
      envOption(
        '--symlinks <policy>',
        'within: follow links that stay inside the roots; skip: never follow; follow: follow all',
      )
        .choices(SYMLINK_POLICIES)
        .default('within'),
    )
    .addOption(
      envOption(
        '--cache-dir <dir>',
        'where git roots are fetched and their trees kept, and file digests remembered between starts (default: the user cache directory)',
      ),
    )
    .addOption(
      envOption(
        '--no-digest-cache',
        'hash every file at startup instead of trusting the digests of files unchanged since the last start',
      ),
    )
    .addOption(
      envOption(
        '--git-allow <host/org>',
        'serve git roots only from these remotes (repeatable, or comma-separated; host, host/org or host/org/repo)',
      )
        // Commas separate entries, so that the environment twin can hold several (`a.com/org,b.com`).
        .argParser((value: string, previous: GitAllowEntry[] | undefined) => [
          ...(previous ?? []),
          ...value
            .split(',')
            .filter((entry) => entry.trim() !== '')
            .map((entry) => argParser(parseGitAllow)(entry)),
        ]),
    )
    .addOption(
      envOption(
        '--git-max-files <n>',
        `most files one git tree may hold (default ${DEFAULT_GIT_LIMITS.maxFiles})`,
      ).argParser(argParser(parseGitMaxFiles)),
    )
    .addOption(
      envOption(
        '--git-max-bytes <size>',
        `most bytes one git tree may hold, e.g. 512M (default ${DEFAULT_GIT_LIMITS.maxBytes})`,
      ).argParser(argParser((text) => parseByteSize(text, '--git-max-bytes'))),
    )
    .addOption(
      envOption(
        '--git-max-fetch-bytes <size>',
        `most bytes one git fetch may download, e.g. 1G (default ${DEFAULT_GIT_LIMITS.maxFetchBytes})`,
      ).argParser(argParser((text) => parseByteSize(text, '--git-max-fetch-bytes'))),
    )
    .addOption(
      envOption(
        '--git-allowed-signers <file>',
        "serve only git commits signed (SSH signatures) by a key this file lists (git's gpg.ssh.allowedSignersFile format)",
      ).argParser(argParser(allowedSignersFile)),
    );
}

/**
 * The absolute path of `--git-allowed-signers` once it is read and lists a signer.
 *
 * @throws RangeError naming the file when it cannot be read or lists no signer (a usage error, exit 2).
 */
function allowedSignersFile(text: string): string {
  const file = path.resolve(notBlank('--git-allowed-signers', 'SKILLS_SERVE_GIT_ALLOWED_SIGNERS')(text));
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch (error) {
    throw new RangeError(
      `--git-allowed-signers ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      { cause: error },
    );
  }
  checkAllowedSigners(content, file);
  return file;
}

/**
 * The `--auth-*` options resolved, or `undefined` without `--auth-issuer` (exits 2 on a flag without it).
 *
 * @param scopesGiven whether `--auth-scopes` was given (it has a default, so its value cannot tell).
 */
function authSettings(options: ServeOptions, scopesGiven: boolean): AuthSettings | undefined {
  const issuers = options.authIssuer ?? [];
  const dependents = [
    ['--auth-audience', options.authAudience],
    ['--auth-scopes', scopesGiven ? options.authScopes : undefined],
    ['--auth-client-id', options.authClientId],
    ['--auth-client-secret', options.authClientSecret],
    ['--auth-claims', options.authClaims],
  ] as const;
  if (issuers.length === 0) {
    for (const [flag, given] of dependents)
      if (given !== undefined) exitWith(`${flag} needs --auth-issuer`, exitCodeOf('CONFIG_INVALID'));
    return undefined;
  }
  const { authClientId: clientId, authClientSecret: clientSecret } = options;
  if ((clientId === undefined) !== (clientSecret === undefined))
    exitWith('--auth-client-id and --auth-client-secret go together', exitCodeOf('CONFIG_INVALID'));
  return Object.freeze({
    issuers: Object.freeze([...new Set(issuers)]),
    audience: options.authAudience,
    scopes: Object.freeze(options.authScopes),
    introspection:
      clientId === undefined || clientSecret === undefined ? undefined : Object.freeze({ clientId, clientSecret }),
    claimsFile: options.authClaims === undefined ? undefined : path.resolve(options.authClaims),
  });
}

/** The cache directory of a command's options (`--cache-dir`, else the environment and the user's home). */
function cacheDirOf(options: CommonOptions): string {
  return resolveCacheDir({
    flag: options.cacheDir,
    env: process.env,
    home: os.homedir(),
    platform: process.platform,
    cwd: process.cwd(),
  });
}

/** Each kind of root's settings from a command's options. */
function rootKindSettings(options: CommonOptions, gitPollMs = DEFAULT_GIT_POLL_MS): RootKindSettings {
  return Object.freeze({ git: gitSettings(options, gitPollMs) });
}

/** The git settings of a command's options (the token only from the environment: never a flag, which `ps` shows). */
function gitSettings(options: CommonOptions, pollMs: number): GitSettings {
  const token = process.env['SKILLS_SERVE_GIT_TOKEN'];
  return Object.freeze({
    pollMs,
    allow: Object.freeze(options.gitAllow ?? []),
    limits: Object.freeze({
      maxFiles: options.gitMaxFiles ?? DEFAULT_GIT_LIMITS.maxFiles,
      maxBytes: options.gitMaxBytes ?? DEFAULT_GIT_LIMITS.maxBytes,
      maxFetchBytes: options.gitMaxFetchBytes ?? DEFAULT_GIT_LIMITS.maxFetchBytes,
    }),
    token: token === undefined || token.trim() === '' ? undefined : token,
    allowedSigners: options.gitAllowedSigners,
    env: process.env,
  });
}

/**
 * What `check` and `manifest` share: their options as the one-shot commands take them (git roots fetched once, never
 * followed; logs at `info` unless `--log-level` says otherwise; results on stdout).
 */
function commandOptions(options: CommonOptions): CommandOptions {
  return {
    symlinks: options.symlinks,
    digestCache: options.digestCache,
    cacheDir: cacheDirOf(options),
    rootKinds: rootKindSettings(options),
    logger: createLogger(options.logLevel ?? 'info'),
    write: (text) => process.stdout.write(text),
  };
}

/**
 * Ends the process with `code` after one line on stderr, `skills-serve: <message>` (no stack trace: an operator's
 * error).
 */
function exitWith(message: string, code: number): never {
  process.stderr.write(`skills-serve: ${message}\n`);
  process.exit(code);
}

/**
 * `manifest --check FILE ROOT…` with its arguments swapped (`--check ROOT FILE`) reads a folder as the saved file and
 * a file as a root: said as that, with the command that was meant, instead of the message of whichever fails first.
 */
function checkArgumentsOrExit(check: string, args: readonly string[]): void {
  const kindOf = (file: string): 'file' | 'folder' | undefined => {
    try {
      return statSync(file).isDirectory() ? 'folder' : 'file';
    } catch {
      return undefined;
    }
  };
  if (kindOf(check) !== 'folder') return;
  const saved = args.find((arg) => kindOf(arg) === 'file');
  exitWith(
    saved === undefined
      ? `--check takes the saved manifest file, and ${check} is a folder`
      : `--check takes the saved manifest file, and ${check} is a folder while ${saved} is a file: did you mean ` +
          `manifest ${[check, ...args.filter((arg) => arg !== saved)].join(' ')} --check ${saved}?`,
    exitCodeOf('CONFIG_INVALID'),
  );
}

/** Turns parsed roots into an exit on failure (with the error message on stderr). */
function sourcesOrExit(args: readonly string[]): SourceSpec[] {
  try {
    return resolveSources(args, process.cwd());
  } catch (error) {
    if (!(error instanceof SkillsServeError)) throw error;
    const meant = error.code === 'ROOT_UNUSABLE' ? commandLike(args[0]) : undefined;
    exitWith(
      meant === undefined ? error.message : `${error.message}; did you mean the command "${meant}"?`,
      exitCodeOf(error.code),
    );
  }
}

/** The commands a mistyped first argument may have meant. */
const COMMANDS = ['serve', 'check', 'manifest', 'export'] as const;

/**
 * The command a root argument that could not be used was probably meant as: a bare word (no `/`, `=` or `:`) at most
 * two edits from a command's name (`chek`, `manifets`).
 */
function commandLike(arg: string | undefined): string | undefined {
  if (arg === undefined || !/^[a-z-]+$/u.test(arg)) return undefined;
  return COMMANDS.find((command) => editDistance(arg, command) <= 2);
}

function buildProgram(): Command {
  const program = new Command('skills-serve')
    .description('Serve folders of Agent Skills over MCP (stdio) through the Skills extension (SEP-2640).')
    .version(VERSION, '-V, --version', 'print the version and exit')
    .addHelpText(
      'after',
      '\n`skills-serve <roots...>` is short for `skills-serve serve <roots...>`; see `skills-serve serve --help` for its options.',
    )
    .showHelpAfterError('(run skills-serve --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => process.stdout.write(text),
      writeErr: (text) => process.stderr.write(text),
    });

  const strictOption = (): Option =>
    envOption(
      '--strict',
      'fail (exit 1) when the index has any diagnostic, warnings included (info, such as executable content, never fails); for CI',
    ).default(false);
  addCommonOptions(
    program.command('serve', { isDefault: true }).description('serve the skills over stdio (the default command)'),
  )
    .addOption(strictOption())
    .addOption(
      envOption(
        '--withhold-executables',
        'do not serve skills that bundle executable content (scripts/, shebangs, native binaries, execute bits); each is named in an info diagnostic',
      ).default(false),
    )
    .addOption(envOption('--no-watch', 'serve a fixed snapshot: do not follow changes on disk'))
    .addOption(
      envOption(
        '--poll [ms]',
        `poll for changes every ms (default ${DEFAULT_POLL_MS}) instead of file events; for Docker Desktop bind mounts and network file systems`,
      ).argParser(argParser(parsePollMs)),
    )
    .addOption(
      envOption(
        '--compat <mode>',
        'instructions, tools and prompts for hosts without the Skills extension: auto (offer them to such hosts), on, off',
      )
        .choices(COMPAT_MODES)
        .default('auto'),
    )
    .addOption(
      envOption(
        '--catalog-max <chars>',
        "most characters of read_skill's description, which lists the skills a host does not list itself",
      )
        .argParser(argParser(parseCatalogMax))
        .default(DEFAULT_CATALOG_MAX),
    )
    // Deprecated, hidden from --help, still accepted: deprecatedOptions.
    .addOption(
      envOption('--instructions-max <chars>', 'deprecated: use --catalog-max')
        .argParser(argParser(parseInstructionsMax))
        .hideHelp(),
    )
    .addOption(
      envOption('--instructions-wait <ms>', 'deprecated: does nothing')
        .argParser(argParser(parseInstructionsWait))
        .hideHelp(),
    )
    .addOption(
      envOption(
        '--resources <list>',
        "what resources/list lists: files (every served file, for @ mentions) or skills (each skill's SKILL.md)",
      )
        .choices(RESOURCE_LIST_MODES)
        .default('files'),
    )
    .addOption(
      envOption(
        '--http <[host:]port>',
        'serve Streamable HTTP at http://host:port/mcp instead of stdio (host defaults to 127.0.0.1)',
      ).argParser(argParser(parseHttpEndpoint)),
    )
    .addOption(
      envOption(
        '--http-token <token>',
        'require Authorization: Bearer <token> on every HTTP request (/mcp; health endpoints stay open)',
      ).argParser(argParser(notBlank('--http-token', 'TOKEN'))),
    )
    .addOption(
      envOption(
        '--http-tokens <file>',
        'per-team tokens: a JSON file of { name, token, prefixes } entries; each token sees only the skills under its prefixes',
      ),
    )
    .addOption(
      envOption(
        '--auth-issuer <url>',
        'accept OAuth 2.0 access tokens from this authorization server (repeatable, or comma-separated); its metadata and keys are discovered',
      ).argParser((value: string, previous: string[] | undefined) => {
        const entries = value.split(',').filter((entry) => entry.trim() !== '');
        if (entries.length === 0) throw new InvalidArgumentError(blank('--auth-issuer', 'ISSUER'));
        return [...(previous ?? []), ...entries.map((entry) => argParser(parseAuthIssuer)(entry))];
      }),
    )
    .addOption(
      envOption(
        '--auth-audience <url>',
        "the resource URL tokens must be issued for (aud); default: this server's URL, http://host:port/mcp",
      ).argParser(argParser(parseAuthAudience)),
    )
    .addOption(
      envOption('--auth-scopes <scopes>', 'scopes every access token must carry (space- or comma-separated)')
        .argParser(argParser(parseAuthScopes))
        .default([DEFAULT_AUTH_SCOPE], DEFAULT_AUTH_SCOPE),
    )
    .addOption(
      envOption(
        '--auth-client-id <id>',
        'client id for introspecting opaque access tokens (RFC 7662) at the issuers',
      ).argParser(argParser(notBlank('--auth-client-id', 'CLIENT_ID'))),
    )
    .addOption(
      envOption(
        '--auth-client-secret <secret>',
        'its client secret (prefer the environment variable: flags show in ps)',
      ).argParser(argParser(notBlank('--auth-client-secret', 'CLIENT_SECRET'))),
    )
    .addOption(
      envOption(
        '--auth-claims <file>',
        'a JSON file of { name, claim, value, prefixes } entries: a token sees the skills under the prefixes of every entry its claims match',
      ),
    )
    .addOption(
      envOption(
        '--git-poll <ms>',
        `look for new commits of followed git branches every ms (default ${DEFAULT_GIT_POLL_MS})`,
      ).argParser(argParser(parseGitPollMs)),
    )
    .addOption(
      envOption(
        '--ttl <ms>',
        'ttlMs of 2026-07-28 skills/list and skills/get results (default: 0 while folders are watched, the time to the next poll of a git branch, a day for pinned commits)',
      ).argParser(argParser(parseTtlMs)),
    )
    .addOption(
      envOption('--cache-scope <scope>', 'cacheScope of those results: private (default) or public')
        .choices(CACHE_SCOPES)
        .default('private'),
    )
    .addOption(
      envOption('--page-size <n>', 'entries per skills/list and resources/directory/read page')
        .argParser(argParser(parsePageSize))
        .default(DEFAULT_PAGE_SIZE),
    )
    .action(async (args: string[], options: ServeOptions, command: Command) => {
      for (const [flag, given] of [
        ['--http-token', options.httpToken],
        ['--http-tokens', options.httpTokens],
        ['--auth-issuer', options.authIssuer],
      ] as const) {
        if (given !== undefined && options.http === undefined) {
          exitWith(
            `${flag} applies to --http only (stdio has no requests to authenticate)`,
            exitCodeOf('CONFIG_INVALID'),
          );
        }
      }
      const auth = authSettings(options, command.getOptionValueSource('authScopes') !== 'default');
      const deprecated = deprecatedOptions(options, command);
      const sources = sourcesOrExit(args);
      const config: Config = Object.freeze({
        sources: Object.freeze(sources),
        rootKinds: rootKindSettings(options, options.gitPoll),
        cacheDir: cacheDirOf(options),
        ttlMs: options.ttl,
        cacheScope: options.cacheScope,
        logLevel: options.logLevel ?? defaultLogLevel(options.http === undefined, process.stderr.isTTY === true),
        pageSize: options.pageSize,
        strict: options.strict,
        symlinks: options.symlinks,
        ...(options.withholdExecutables ? { withholdExecutables: true } : {}),
        watch: options.watch,
        digestCache: options.digestCache,
        pollMs: options.poll === undefined ? undefined : options.poll === true ? DEFAULT_POLL_MS : options.poll,
        compat: options.compat,
        catalogMax: deprecated.catalogMax,
        resources: options.resources,
        ...(options.http === undefined ? {} : { http: options.http }),
        ...(options.httpToken === undefined ? {} : { httpToken: options.httpToken }),
        ...(options.httpTokens === undefined ? {} : { httpTokens: path.resolve(options.httpTokens) }),
        ...(auth === undefined ? {} : { auth }),
      });
      const logger = createLogger(config.logLevel);
      for (const { option, replacement, message } of deprecated.warnings)
        logger.warn(
          { event: 'option-deprecated', option, ...(replacement === undefined ? {} : { replacement }) },
          message,
        );
      if (options.gitAllowedSigners !== undefined && !sources.some((source) => source.kind === 'git'))
        logger.warn(
          { event: 'config-suspect', option: '--git-allowed-signers' },
          '--git-allowed-signers verifies git roots only, and no root given is one: folders are served as they are',
        );
      process.on('uncaughtException', (error) => {
        logger.fatal({ err: error }, 'uncaught exception');
        process.exit(1);
      });
      process.on('unhandledRejection', (error) => logger.error({ err: error }, 'unhandled promise rejection'));
      const runOptions = { logger, version: VERSION, exit: (code: number) => process.exit(code) };
      // stdio (the default) is loaded with the CLI, so a server that starts with almost no file descriptors left
      // opens no module file later; HTTP is loaded only when asked for.
      const adapter =
        config.http === undefined
          ? new StdioAdapter()
          : await import('../transports/http.js').then(
              ({ HttpAdapter }) =>
                new HttpAdapter(config.http as HttpEndpoint, {
                  token: config.httpToken,
                  tokensFile: config.httpTokens,
                  oauth: config.auth,
                }),
            );
      await run(config, runOptions, adapter);
    });

  addCommonOptions(
    program
      .command('check')
      .description('index the roots, print every skill and every diagnostic; exit 1 when a skill was left out'),
  )
    .addOption(envOption('--json', 'print one JSON document instead of text'))
    .addOption(strictOption())
    .addOption(
      envOption(
        '--verify-cache',
        'instead of indexing, hash again every file the digest cache would trust and exit 1 when an entry lied',
      ),
    )
    .addOption(
      envOption(
        '--hosts',
        'show what each host (Claude Code, Gemini CLI, Codex CLI, opencode, Agent Framework, the forks) shows its model and user of the catalog',
      ),
    )
    .addOption(
      envOption(
        '--feed',
        'also report the skills the discovery feed (--http, export) leaves out: names installers skip or two skills share',
      ),
    )
    .addOption(
      envOption('--catalog-max <chars>', "with --hosts: most characters of read_skill's description, as serve takes it")
        .argParser(argParser(parseCatalogMax))
        .default(DEFAULT_CATALOG_MAX),
    )
    .addOption(
      envOption('--page-size <n>', 'with --hosts: entries per skills/list page, as serve takes it')
        .argParser(argParser(parsePageSize))
        .default(DEFAULT_PAGE_SIZE),
    )
    .action(
      async (
        args: string[],
        options: CommonOptions & {
          json?: boolean;
          strict: boolean;
          verifyCache?: boolean;
          hosts?: boolean;
          feed?: boolean;
          catalogMax: number;
          pageSize: number;
        },
      ) => {
        const sources = sourcesOrExit(args);
        if (options.hosts === true && options.verifyCache === true)
          exitWith('--hosts and --verify-cache do not go together', exitCodeOf('CONFIG_INVALID'));
        if (options.hosts === true) {
          const { runCheckHosts } = await import('../commands/check-hosts.js');
          process.exitCode = await runCheckHosts(sources, {
            ...commandOptions(options),
            json: options.json === true,
            strict: options.strict,
            catalogMax: options.catalogMax,
            pageSize: options.pageSize,
          });
          return;
        }
        if (options.verifyCache === true) {
          const { runVerifyCache } = await import('../commands/verify-cache.js');
          process.exitCode = await runVerifyCache(sources, {
            cacheDir: cacheDirOf(options),
            json: options.json === true,
            write: (text) => process.stdout.write(text),
          });
          return;
        }
        const { runCheck } = await import('../commands/check.js');
        process.exitCode = await runCheck(sources, {
          ...commandOptions(options),
          json: options.json === true,
          strict: options.strict,
          feed: options.feed === true,
        });
      },
    );

  addCommonOptions(
    program
      .command('export')
      .description('write the discovery feed --http serves as static files, for a static host or CDN (docs/feed.md)'),
  )
    // No environment twin: the target is named per run.
    .addOption(
      new Option(
        '--well-known <dir>',
        'the site root to write <dir>/.well-known/agent-skills/ into',
      ).makeOptionMandatory(),
    )
    .action(async (args: string[], options: CommonOptions & { wellKnown: string }) => {
      const sources = sourcesOrExit(args);
      const { runExport } = await import('../commands/export.js');
      process.exitCode = await runExport(sources, {
        ...commandOptions(options),
        dir: path.resolve(options.wellKnown),
      });
    });

  addCommonOptions(
    program
      .command('manifest')
      .description('print the exact skills/list entries as JSON, or compare the tree with a saved manifest'),
  )
    // No environment twin: a saved manifest is named per run, and a variable left set would turn every print into a
    // check.
    .addOption(
      new Option('--check <file>', 'exit 1 with a summary when the tree no longer matches this saved manifest'),
    )
    .addOption(new Option('--json', 'with --check: print the comparison as one JSON document'))
    .addOption(
      new Option(
        '--content-only',
        "with --check: compare frontmatter and files only, not provenance (a git root's commit)",
      ),
    )
    .action(
      async (args: string[], options: CommonOptions & { check?: string; json?: boolean; contentOnly?: boolean }) => {
        if (options.check === undefined && (options.json === true || options.contentOnly === true))
          exitWith(
            `${options.json === true ? '--json' : '--content-only'} goes with --check FILE (manifest prints JSON anyway)`,
            exitCodeOf('CONFIG_INVALID'),
          );
        if (options.check !== undefined) checkArgumentsOrExit(options.check, args);
        const sources = sourcesOrExit(args);
        const { runManifest } = await import('../commands/manifest.js');
        process.exitCode = await runManifest(sources, {
          ...commandOptions(options),
          ...(options.check === undefined ? {} : { checkFile: options.check }),
          json: options.json === true,
          contentOnly: options.contentOnly === true,
          warn: (text) => process.stderr.write(text),
        });
      },
    );
  return program;
}

/** Environment twins of on/off flags. */
const BOOLEAN_ENV = [
  'SKILLS_SERVE_NO_WATCH',
  'SKILLS_SERVE_NO_DIGEST_CACHE',
  'SKILLS_SERVE_STRICT',
  'SKILLS_SERVE_JSON',
  'SKILLS_SERVE_VERIFY_CACHE',
  'SKILLS_SERVE_HOSTS',
  'SKILLS_SERVE_FEED',
] as const;

/**
 * Reads on/off environment twins the way people write them: `1`/`true`/`yes`/`on` turn the flag on;
 * `0`/`false`/`no`/`off` and the empty string leave it off (commander would treat any value as on).
 *
 * @param env the process environment (modified: "off" values are removed).
 * @throws SkillsServeError `CONFIG_INVALID` for any other value.
 */
function normalizeBooleanEnv(env: NodeJS.ProcessEnv): void {
  for (const name of BOOLEAN_ENV) {
    const value = env[name];
    if (value === undefined) continue;
    if (/^(?:0|false|no|off|)$/iu.test(value.trim())) delete env[name];
    else if (!/^(?:1|true|yes|on)$/iu.test(value.trim())) {
      throw new SkillsServeError(
        'CONFIG_INVALID',
        `${name} must be 1, true, yes, on, or 0, false, no, off (got "${value}")`,
      );
    }
  }
}

/**
 * `--poll` takes an optional value, so `--poll ./skills` would read the root as the interval: a bare `--poll`
 * followed by anything but a number is rewritten to `--poll=<default>`.
 */
function normalizePollFlag(argv: readonly string[]): string[] {
  return argv.map((arg, index) =>
    arg === '--poll' && !/^\d+$/u.test(argv[index + 1] ?? '') ? `--poll=${DEFAULT_POLL_MS}` : arg,
  );
}

async function main(argv: readonly string[]): Promise<void> {
  try {
    normalizeBooleanEnv(process.env);
  } catch (error) {
    exitWith((error as Error).message, exitCodeOf('CONFIG_INVALID'));
  }
  try {
    await buildProgram().parseAsync(normalizePollFlag(argv));
  } catch (error) {
    if (error instanceof CommanderError) {
      const informational =
        error.code === 'commander.version' ||
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.help';
      process.exit(informational ? 0 : exitCodeOf('CONFIG_INVALID'));
    }
    exitWith(error instanceof Error ? error.message : String(error), 1);
  }
}

void main(process.argv);
