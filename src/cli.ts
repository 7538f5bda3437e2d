/**
 * The `skills-serve` command: argv + env → frozen {@link Config} → serve. The only module that reads
 * `process.argv`/`process.env` or exits (DESIGN §1.5, §3 `cli.ts`).
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_PAGE_SIZE, DEFAULT_POLL_MS, parsePageSize, parsePollMs, type Config } from './config.js';
import { exitCodeOf, SkillsServeError } from './errors.js';
import type { RootSpec } from './index/types.js';
import { runStdioServer } from './lifecycle.js';
import { createLogger, LOG_LEVELS, type LogLevel } from './log.js';

declare const SKILLS_SERVE_VERSION: string | undefined;
/** The package version, injected by the bundler. */
const VERSION = typeof SKILLS_SERVE_VERSION === 'string' ? SKILLS_SERVE_VERSION : '0.0.0-dev';

interface ServeOptions {
  logLevel: LogLevel;
  pageSize: number;
  watch: boolean;
  poll?: number | true;
}

/** Wraps a parser that throws RangeError into one commander reports as an invalid argument. */
function argParser(parse: (text: string) => number): (text: string) => number {
  return (text) => {
    try {
      return parse(text);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
  };
}

/**
 * Resolves the roots given on the command line against `cwd` and checks each is a directory.
 *
 * @param args root arguments as typed (`./skills`).
 * @returns root specs with absolute paths and no prefix.
 * @throws SkillsServeError `ROOT_UNUSABLE` naming the resolved absolute path of the first root that is missing
 *   or not a directory.
 */
export function resolveRoots(args: readonly string[], cwd: string): RootSpec[] {
  return args.map((arg) => {
    const dir = path.resolve(cwd, arg);
    let stat;
    try {
      stat = statSync(dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw new SkillsServeError('ROOT_UNUSABLE', `skills root ${dir} cannot be used (${code === 'ENOENT' ? 'it does not exist' : code})`);
    }
    if (!stat.isDirectory()) throw new SkillsServeError('ROOT_UNUSABLE', `skills root ${dir} is not a directory`);
    return Object.freeze({ dir, prefix: Object.freeze([]) });
  });
}

function buildProgram(): Command {
  const program = new Command('skills-serve')
    .description('Serve folders of Agent Skills over MCP (stdio) through the Skills extension (SEP-2640).')
    .version(VERSION, '-V, --version', 'print the version and exit')
    .argument('<roots...>', 'skills folders to serve (each holds skill directories, or is a skill itself)')
    .addOption(
      new Option('--log-level <level>', 'minimum level of the logs written to stderr')
        .choices(LOG_LEVELS)
        .default('info')
        .env('SKILLS_SERVE_LOG_LEVEL'),
    )
    .addOption(
      new Option('--page-size <n>', 'entries per skills/list and resources/directory/read page')
        .argParser(argParser(parsePageSize))
        .default(DEFAULT_PAGE_SIZE)
        .env('SKILLS_SERVE_PAGE_SIZE'),
    )
    .addOption(new Option('--no-watch', 'serve a fixed snapshot: do not follow changes on disk').env('SKILLS_SERVE_NO_WATCH'))
    .addOption(
      new Option('--poll [ms]', `poll for changes every ms (default ${DEFAULT_POLL_MS}) instead of using file events; for Docker Desktop bind mounts and network file systems`)
        .argParser(argParser(parsePollMs))
        .env('SKILLS_SERVE_POLL'),
    )
    .showHelpAfterError('(run skills-serve --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: (text) => process.stderr.write(text) });
  return program;
}

/**
 * `--poll` takes an optional value, so `--poll ./skills` would read the root as the interval: a bare `--poll`
 * followed by anything but a number is rewritten to `--poll=<default>`.
 */
export function normalizePollFlag(argv: readonly string[]): string[] {
  return argv.map((arg, index) =>
    arg === '--poll' && !/^\d+$/u.test(argv[index + 1] ?? '') ? `--poll=${DEFAULT_POLL_MS}` : arg,
  );
}

function main(argv: readonly string[]): void {
  const program = buildProgram();
  try {
    program.parse(normalizePollFlag(argv));
  } catch (error) {
    if (error instanceof CommanderError) {
      const informational = error.code === 'commander.version' || error.code === 'commander.helpDisplayed' || error.code === 'commander.help';
      process.exit(informational ? 0 : exitCodeOf('CONFIG_INVALID'));
    }
    throw error;
  }
  const options = program.opts<ServeOptions>();
  let roots: RootSpec[];
  try {
    roots = resolveRoots(program.args, process.cwd());
  } catch (error) {
    if (!(error instanceof SkillsServeError)) throw error;
    process.stderr.write(`skills-serve: ${error.message}\n`);
    process.exit(exitCodeOf(error.code));
  }
  const config: Config = Object.freeze({
    roots: Object.freeze(roots),
    logLevel: options.logLevel,
    pageSize: options.pageSize,
    watch: options.watch,
    pollMs: options.poll === undefined ? undefined : options.poll === true ? DEFAULT_POLL_MS : options.poll,
  });
  const logger = createLogger(config.logLevel);
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception');
    process.exit(1);
  });
  process.on('unhandledRejection', (error) => {
    logger.error({ err: error }, 'unhandled promise rejection');
  });
  runStdioServer(config, { logger, version: VERSION, exit: (code) => process.exit(code) });
}

main(process.argv);
