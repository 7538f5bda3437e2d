/**
 * The `skills-serve` command line: argv + env → frozen {@link Config} → `serve` (default), `check` or `manifest`.
 * The only module that reads `process.argv`/`process.env` or exits (DESIGN §1.5, §3 `cli.ts`).
 * Every flag has an environment twin `SKILLS_SERVE_<FLAG>`.
 */
import { statSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { runCheck } from './commands/check.js';
import { runManifest } from './commands/manifest.js';
import {
  COMPAT_MODES,
  DEFAULT_INSTRUCTIONS_MAX,
  DEFAULT_PAGE_SIZE,
  DEFAULT_POLL_MS,
  parseHttpEndpoint,
  parseInstructionsMax,
  parsePageSize,
  parsePollMs,
  parseRootArg,
  RESOURCE_LIST_MODES,
  type CompatMode,
  type Config,
  type HttpEndpoint,
  type ResourceListMode,
} from './config.js';
import { exitCodeOf, SkillsServeError } from './errors.js';
import { SYMLINK_POLICIES, type SymlinkPolicy } from './index/policy.js';
import type { RootSpec } from './index/types.js';
import { runHttpServer } from './http.js';
import { runStdioServer } from './lifecycle.js';
import { createLogger, defaultLogLevel, LOG_LEVELS, type LogLevel } from './log.js';

declare const SKILLS_SERVE_VERSION: string | undefined;
/** The package version, injected by the bundler. */
const VERSION = typeof SKILLS_SERVE_VERSION === 'string' ? SKILLS_SERVE_VERSION : '0.0.0-dev';

interface CommonOptions {
  logLevel?: LogLevel;
  pageSize: number;
  symlinks: SymlinkPolicy;
}

interface ServeOptions extends CommonOptions {
  strict: boolean;
  watch: boolean;
  poll?: number | true;
  compat: CompatMode;
  instructionsMax: number;
  resources: ResourceListMode;
  http?: HttpEndpoint;
  httpToken?: string;
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

/**
 * Resolves root arguments (`dir` or `prefix=dir`) against `cwd` and checks each is a directory.
 *
 * @param args root arguments as typed.
 * @returns root specs with absolute paths.
 * @throws SkillsServeError `ROOT_UNUSABLE` naming the resolved absolute path of the first root that is missing or
 *   not a directory; `CONFIG_INVALID` for a malformed `prefix=dir`.
 */
export function resolveRoots(args: readonly string[], cwd: string): RootSpec[] {
  return args.map((arg) => {
    let root: RootSpec;
    try {
      root = parseRootArg(arg, cwd);
    } catch (error) {
      throw new SkillsServeError('CONFIG_INVALID', (error as Error).message);
    }
    let stat;
    try {
      stat = statSync(root.dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw new SkillsServeError('ROOT_UNUSABLE', `skills root ${root.dir} cannot be used (${code === 'ENOENT' ? 'it does not exist' : code})`);
    }
    if (!stat.isDirectory()) throw new SkillsServeError('ROOT_UNUSABLE', `skills root ${root.dir} is not a directory`);
    return root;
  });
}

/** Options every command shares. */
function addCommonOptions(command: Command): Command {
  return command
    .argument('<roots...>', 'skills folders: dir (holds skill directories, or is a skill) or prefix=dir (mounted under prefix)')
    .addOption(
      new Option('--log-level <level>', 'minimum level of the logs written to stderr (default: warn when a host runs it over stdio, info in a terminal or with --http)')
        .choices(LOG_LEVELS)
        .env('SKILLS_SERVE_LOG_LEVEL'),
    )
    .addOption(
      new Option('--page-size <n>', 'entries per skills/list and resources/directory/read page')
        .argParser(argParser(parsePageSize))
        .default(DEFAULT_PAGE_SIZE)
        .env('SKILLS_SERVE_PAGE_SIZE'),
    )
    .addOption(
      new Option('--symlinks <policy>', 'within: follow links that stay inside the roots; skip: never follow; follow: follow all')
        .choices(SYMLINK_POLICIES)
        .default('within')
        .env('SKILLS_SERVE_SYMLINKS'),
    );
}

/** Turns parsed roots into an exit on failure (with the error message on stderr). */
function rootsOrExit(args: readonly string[]): RootSpec[] {
  try {
    return resolveRoots(args, process.cwd());
  } catch (error) {
    if (!(error instanceof SkillsServeError)) throw error;
    process.stderr.write(`skills-serve: ${error.message}\n`);
    process.exit(exitCodeOf(error.code));
  }
}

function buildProgram(): Command {
  const program = new Command('skills-serve')
    .description('Serve folders of Agent Skills over MCP (stdio) through the Skills extension (SEP-2640).')
    .version(VERSION, '-V, --version', 'print the version and exit')
    .addHelpText('after', '\n`skills-serve <roots...>` is short for `skills-serve serve <roots...>`; see `skills-serve serve --help` for its options.')
    .showHelpAfterError('(run skills-serve --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: (text) => process.stderr.write(text) });

  const strictOption = (): Option =>
    new Option('--strict', 'fail (exit 1) when the index has any diagnostic, warnings included; for CI').default(false).env('SKILLS_SERVE_STRICT');
  addCommonOptions(program.command('serve', { isDefault: true }).description('serve the skills over stdio (the default command)'))
    .addOption(strictOption())
    .addOption(new Option('--no-watch', 'serve a fixed snapshot: do not follow changes on disk').env('SKILLS_SERVE_NO_WATCH'))
    .addOption(
      new Option('--poll [ms]', `poll for changes every ms (default ${DEFAULT_POLL_MS}) instead of file events; for Docker Desktop bind mounts and network file systems`)
        .argParser(argParser(parsePollMs))
        .env('SKILLS_SERVE_POLL'),
    )
    .addOption(
      new Option('--compat <mode>', 'instructions, tools and prompts for hosts without the Skills extension: auto (offer them to such hosts), on, off')
        .choices(COMPAT_MODES)
        .default('auto')
        .env('SKILLS_SERVE_COMPAT'),
    )
    .addOption(
      new Option('--instructions-max <chars>', 'most characters of the instructions sent to hosts without the extension (whole catalog lines only)')
        .argParser(argParser(parseInstructionsMax))
        .default(DEFAULT_INSTRUCTIONS_MAX)
        .env('SKILLS_SERVE_INSTRUCTIONS_MAX'),
    )
    .addOption(
      new Option('--resources <list>', "what resources/list lists: files (every served file, for @ mentions) or skills (each skill's SKILL.md)")
        .choices(RESOURCE_LIST_MODES)
        .default('files')
        .env('SKILLS_SERVE_RESOURCES'),
    )
    .addOption(
      new Option('--http <[host:]port>', 'serve Streamable HTTP at http://host:port/mcp instead of stdio (host defaults to 127.0.0.1)')
        .argParser(argParser(parseHttpEndpoint))
        .env('SKILLS_SERVE_HTTP'),
    )
    .addOption(
      new Option('--http-token <token>', 'require Authorization: Bearer <token> on every HTTP request (/mcp; health endpoints stay open)')
        .argParser(
          argParser((token) => {
            if (token.trim() === '') throw new RangeError('--http-token must not be empty (an unset variable, as in --http-token "$TOKEN"?)');
            return token;
          }),
        )
        .env('SKILLS_SERVE_HTTP_TOKEN'),
    )
    .action(async (args: string[], options: ServeOptions) => {
      const roots = rootsOrExit(args);
      const config: Config = Object.freeze({
        roots: Object.freeze(roots),
        logLevel: options.logLevel ?? defaultLogLevel(options.http === undefined, process.stderr.isTTY === true),
        pageSize: options.pageSize,
        strict: options.strict,
        symlinks: options.symlinks,
        watch: options.watch,
        pollMs: options.poll === undefined ? undefined : options.poll === true ? DEFAULT_POLL_MS : options.poll,
        compat: options.compat,
        instructionsMax: options.instructionsMax,
        resources: options.resources,
        ...(options.http === undefined ? {} : { http: options.http }),
        ...(options.httpToken === undefined ? {} : { httpToken: options.httpToken }),
      });
      const logger = createLogger(config.logLevel);
      process.on('uncaughtException', (error) => {
        logger.fatal({ err: error }, 'uncaught exception');
        process.exit(1);
      });
      process.on('unhandledRejection', (error) => logger.error({ err: error }, 'unhandled promise rejection'));
      const run = { logger, version: VERSION, exit: (code: number) => process.exit(code) };
      if (config.http === undefined) {
        runStdioServer(config, run);
        return;
      }
      try {
        await runHttpServer({ ...config, http: config.http }, run);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        logger.fatal({ code }, `cannot serve HTTP on ${config.http.host}:${config.http.port}: ${code === 'EADDRINUSE' ? 'the port is in use' : (error as Error).message}`);
        process.exit(1);
      }
    });

  addCommonOptions(program.command('check').description('index the roots, print every skill and every diagnostic; exit 1 when a skill was left out'))
    .addOption(new Option('--json', 'print one JSON document instead of text').env('SKILLS_SERVE_JSON'))
    .addOption(strictOption())
    .action(async (args: string[], options: CommonOptions & { json?: boolean; strict: boolean }) => {
      const roots = rootsOrExit(args);
      process.exitCode = await runCheck(roots, {
        json: options.json === true,
        strict: options.strict,
        symlinks: options.symlinks,
        write: (text) => process.stdout.write(text),
      });
    });

  addCommonOptions(program.command('manifest').description('print the exact skills/list entries as JSON, or compare the tree with a saved manifest'))
    .addOption(new Option('--check <file>', 'exit 1 with a summary when the tree no longer matches this saved manifest'))
    .action(async (args: string[], options: CommonOptions & { check?: string }) => {
      const roots = rootsOrExit(args);
      process.exitCode = await runManifest(roots, {
        pageSize: options.pageSize,
        symlinks: options.symlinks,
        ...(options.check === undefined ? {} : { checkFile: options.check }),
        write: (text) => process.stdout.write(text),
        warn: (text) => process.stderr.write(text),
      });
    });
  return program;
}

/** Environment twins of on/off flags. */
const BOOLEAN_ENV = ['SKILLS_SERVE_NO_WATCH', 'SKILLS_SERVE_STRICT', 'SKILLS_SERVE_JSON'] as const;

/**
 * Reads on/off environment twins the way people write them: `1`/`true`/`yes`/`on` turn the flag on;
 * `0`/`false`/`no`/`off` and the empty string leave it off (commander would treat any value as on).
 *
 * @param env the process environment (modified: "off" values are removed).
 * @throws SkillsServeError `CONFIG_INVALID` for any other value.
 */
export function normalizeBooleanEnv(env: NodeJS.ProcessEnv): void {
  for (const name of BOOLEAN_ENV) {
    const value = env[name];
    if (value === undefined) continue;
    if (/^(?:0|false|no|off|)$/iu.test(value.trim())) delete env[name];
    else if (!/^(?:1|true|yes|on)$/iu.test(value.trim())) {
      throw new SkillsServeError('CONFIG_INVALID', `${name} must be 1, true, yes, on, or 0, false, no, off (got "${value}")`);
    }
  }
}

/**
 * `--poll` takes an optional value, so `--poll ./skills` would read the root as the interval: a bare `--poll`
 * followed by anything but a number is rewritten to `--poll=<default>`.
 */
export function normalizePollFlag(argv: readonly string[]): string[] {
  return argv.map((arg, index) => (arg === '--poll' && !/^\d+$/u.test(argv[index + 1] ?? '') ? `--poll=${DEFAULT_POLL_MS}` : arg));
}

async function main(argv: readonly string[]): Promise<void> {
  try {
    normalizeBooleanEnv(process.env);
  } catch (error) {
    process.stderr.write(`skills-serve: ${(error as Error).message}\n`);
    process.exit(exitCodeOf('CONFIG_INVALID'));
  }
  try {
    await buildProgram().parseAsync(normalizePollFlag(argv));
  } catch (error) {
    if (error instanceof CommanderError) {
      const informational = error.code === 'commander.version' || error.code === 'commander.helpDisplayed' || error.code === 'commander.help';
      process.exit(informational ? 0 : exitCodeOf('CONFIG_INVALID'));
    }
    process.stderr.write(`skills-serve: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}

void main(process.argv);
