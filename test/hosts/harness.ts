/**
 * Runs real hosts (Claude Code, Gemini CLI, Codex CLI, opencode) against `bin/skills-serve.js` the way a user wires
 * them, offline: each in a throwaway HOME outside the project, in a network namespace of its own with loopback only
 * (`unshare -n`), with the server behind a relay that logs every JSON-RPC line both ways (`tee-mcp.mjs`) and a
 * stand-in model on 127.0.0.1 that logs what the host would have sent to the model and, given a script, answers with
 * tool calls (`fake-model.mjs`). Interactive sessions run under a tmux server of their own (`tmux -L <socket>`), never
 * the user's.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { waitFor } from '../helpers/live.js';
import { BIN, REPO } from '../helpers/server.js';
import { catalogTree } from '../helpers/tree.js';
import { hostBinary, HOSTS } from './hosts.mjs';

const HERE = path.join(REPO, 'test', 'hosts');
/** The shared corpus next to the repository (absent on a machine without shared/). */
export const CORPUS = path.resolve(REPO, '..', 'shared', 'corpora', 'anthropics-skills', 'skills');

/** Longest a host step may take before the test fails (ms): hosts start in seconds; this only stops a hang. */
export const STEP_MS = 60_000;

export type HostName = 'claude' | 'gemini' | 'codex' | 'opencode';

/** The executable of a pinned host, installed by `scripts/install-hosts.mjs`. */
export function binaryOf(name: HostName): string {
  const host = HOSTS.find((candidate) => candidate.name === name);
  if (host === undefined) throw new Error(`unknown host ${name}`);
  const binary = hostBinary(host);
  if (!existsSync(binary))
    throw new Error(`${binary} is missing: run node scripts/install-hosts.mjs (npm run test:hosts does)`);
  return binary;
}

/** One JSON-RPC line the relay saw, parsed. */
export interface WireLine {
  /** Which server start the line belongs to (1 for the first; JSON-RPC ids start again with each). */
  readonly start: number;
  readonly t: number;
  readonly dir: 'host->server' | 'server->host';
  readonly message: Record<string, unknown>;
}

/** One request the host sent to the stand-in model. */
export interface ModelRequest {
  readonly url: string;
  readonly body: string;
  /** The wall clock (ms) when the stand-in model had read the request. */
  readonly at?: number;
}

/** A request the host sent and the server's answer to it (in the same server start), if any yet. */
export interface Exchange {
  readonly start: number;
  readonly method: string;
  readonly request: Record<string, unknown>;
  /** When the request was relayed (ms since that start of the relay). */
  readonly sentAt: number;
  /** The answer (`result` or `error`) and when it was relayed, or `undefined` while unanswered. */
  readonly answer: { readonly message: Record<string, unknown>; readonly at: number } | undefined;
}

/** The outcome of an offline command. */
export interface CommandRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A throwaway user of one host: HOME, project folder, logs, and the commands to run the host offline there. */
export class HostUser {
  readonly root: string;
  readonly home: string;
  readonly project: string;
  readonly wireLog: string;
  readonly modelLog: string;
  /** The scripted model's script (see `fake-model.mjs`); absent, the model answers with text. */
  readonly scriptFile: string;
  /** Config files written with the stand-in model's port once it listens: [template, target]. */
  readonly #templates: [string, string][] = [];
  readonly #runner: string;
  readonly #socket: string;
  #sessions = 0;

  /**
   * @param name which host.
   * @param serverArgs the arguments after `skills-serve` (roots and flags), or `undefined` for a Claude Code user with
   *   no MCP server configured (it lists only the skills its own folders hold).
   * @throws for `undefined` with another host.
   */
  constructor(
    readonly name: HostName,
    serverArgs: readonly string[] | undefined,
    options: { readonly alwaysLoad?: boolean } = {},
  ) {
    this.root = realpathSync(mkdtempSync(path.join(os.tmpdir(), `skills-serve-${name}-`)));
    this.home = path.join(this.root, 'home');
    this.project = path.join(this.root, 'project');
    mkdirSync(this.home);
    mkdirSync(this.project);
    this.wireLog = path.join(this.root, 'wire.jsonl');
    this.modelLog = path.join(this.root, 'model.jsonl');
    this.scriptFile = path.join(this.root, 'script.json');
    this.#socket = `skills-serve-hosts-${process.pid}-${path.basename(this.root)}`;
    if (serverArgs === undefined && name !== 'claude') throw new Error(`${name} is always configured with the server`);
    const server = {
      command: process.execPath,
      args: [path.join(HERE, 'tee-mcp.mjs'), this.wireLog, '--', process.execPath, BIN, ...(serverArgs ?? [])],
    };
    if (serverArgs === undefined) this.#configureClaude(undefined);
    else if (name === 'claude')
      this.#configureClaude(options.alwaysLoad === true ? { ...server, alwaysLoad: true } : server);
    else if (name === 'gemini') this.#configureGemini(server);
    else if (name === 'codex') this.#configureCodex(server);
    else this.#configureOpencode(server);
    this.#runner = path.join(this.root, 'run.sh');
    writeFileSync(this.#runner, this.#runnerScript());
  }

  /**
   * What a user writes for Claude Code: a project `.mcp.json`, approved in user settings; onboarding, trust and key
   * done. With `"alwaysLoad": true` on the server (what README recommends), Claude Code waits for the server (up to its
   * 5 s connect timeout) before its first model request, instead of about 2 s. Without `server`, neither file names
   * one.
   */
  #configureClaude(server: { command: string; args: string[]; alwaysLoad?: true } | undefined): void {
    if (server !== undefined)
      writeFileSync(
        path.join(this.project, '.mcp.json'),
        `${JSON.stringify({ mcpServers: { skills: server } }, null, 2)}\n`,
      );
    mkdirSync(path.join(this.home, '.claude'));
    writeFileSync(
      path.join(this.home, '.claude', 'settings.json'),
      `${JSON.stringify(server === undefined ? {} : { enabledMcpjsonServers: ['skills'] }, null, 2)}\n`,
    );
    const state = {
      hasCompletedOnboarding: true,
      theme: 'dark',
      // The last 20 characters of ANTHROPIC_API_KEY below, approved once as the key prompt would.
      customApiKeyResponses: { approved: [CLAUDE_KEY.slice(-20)], rejected: [] },
      projects: { [this.project]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
    };
    writeFileSync(path.join(this.home, '.claude.json'), `${JSON.stringify(state, null, 2)}\n`);
  }

  /**
   * What a user writes for Gemini CLI: `mcpServers` in user settings, the API-key sign-in chosen, the project trusted.
   */
  #configureGemini(server: { command: string; args: string[] }): void {
    mkdirSync(path.join(this.home, '.gemini'));
    // Trusted, as a user trusts a server they run headless: `gemini -p` has no one to confirm a tool call, so it
    // offers the model no tool of an untrusted server.
    const settings = {
      security: { auth: { selectedType: 'gemini-api-key' } },
      mcpServers: { skills: { ...server, trust: true } },
    };
    writeFileSync(path.join(this.home, '.gemini', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
    writeFileSync(
      path.join(this.home, '.gemini', 'trustedFolders.json'),
      `${JSON.stringify({ [this.project]: 'TRUST_FOLDER' }, null, 2)}\n`,
    );
  }

  /**
   * What a user writes for Codex CLI: `~/.codex/config.toml` with a custom model provider (the stand-in model, over
   * the Responses API) and the server under `[mcp_servers.skills]`.
   */
  #configureCodex(server: { command: string; args: string[] }): void {
    const dir = path.join(this.home, '.codex');
    mkdirSync(dir);
    const toml = [
      'model = "fake-model"',
      'model_provider = "fake"',
      '',
      '[model_providers.fake]',
      'name = "Fake model"',
      `base_url = "http://127.0.0.1:${PORT}/v1"`,
      'wire_api = "responses"',
      'env_key = "FAKE_MODEL_API_KEY"',
      '',
      '[mcp_servers.skills]',
      `command = ${JSON.stringify(server.command)}`,
      `args = ${JSON.stringify(server.args)}`,
      '',
    ].join('\n');
    this.#template(path.join(dir, 'config.toml'), toml);
  }

  /**
   * What a user writes for opencode: `~/.config/opencode/opencode.json` with a custom OpenAI-compatible provider (the
   * stand-in model, over Chat Completions) as the model, and the server as a local MCP server.
   */
  #configureOpencode(server: { command: string; args: string[] }): void {
    const dir = path.join(this.home, '.config', 'opencode');
    mkdirSync(dir, { recursive: true });
    const config = {
      $schema: 'https://opencode.ai/config.json',
      model: 'fake/fake-model',
      provider: {
        fake: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Fake model',
          options: { baseURL: `http://127.0.0.1:${PORT}/v1`, apiKey: 'fake-key' },
          models: { 'fake-model': { name: 'Fake model', tool_call: true } },
        },
      },
      mcp: { skills: { type: 'local', command: [server.command, ...server.args], enabled: true } },
      autoupdate: false,
      share: 'disabled',
    };
    this.#template(path.join(dir, 'opencode.json'), `${JSON.stringify(config, null, 2)}\n`);
  }

  /** Writes `text` as a template of `target` (outside HOME), which the runner fills in with the model's port. */
  #template(target: string, text: string): void {
    const template = path.join(this.root, `${path.basename(target)}.template`);
    writeFileSync(template, text);
    this.#templates.push([template, target]);
  }

  /** Makes the stand-in model a scripted one: answers with `calls`, in order, to a conversation holding `marker`. */
  script(marker: string, calls: readonly { name: string; arguments: Record<string, unknown> }[]): void {
    writeFileSync(this.scriptFile, `${JSON.stringify({ marker, calls }, null, 2)}\n`);
  }

  /**
   * The script every host command runs through, inside `unshare -n`: loopback up, the stand-in model started, then
   * the command with a clean environment (HOME, PATH, TERM and the host's own variables only).
   */
  #runnerScript(): string {
    const portFile = path.join(this.root, 'model.port');
    const port = `$(cat '${portFile}')`;
    const hostEnv = {
      claude: `ANTHROPIC_API_KEY=${CLAUDE_KEY} ANTHROPIC_BASE_URL=http://127.0.0.1:${port} DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1`,
      gemini: `GEMINI_API_KEY=fake-key GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:${port}`,
      codex: 'FAKE_MODEL_API_KEY=fake-key',
      opencode: 'OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1',
    }[this.name];
    const fill = this.#templates.map(
      ([template, target]) => `sed "s/${PORT}/$(cat '${portFile}')/g" '${template}' > '${target}'`,
    );
    return [
      'ip link set lo up',
      `rm -f '${portFile}'`,
      `'${process.execPath}' '${path.join(HERE, 'fake-model.mjs')}' '${this.modelLog}' '${portFile}' '${this.scriptFile}' & MODEL=$!`,
      "trap 'kill $MODEL 2>/dev/null' EXIT",
      // Bounded: the stand-in model listens within milliseconds; 10 s means it could not start.
      `tries=0; while [ ! -s '${portFile}' ]; do tries=$((tries + 1)); [ $tries -le 200 ] || exit 90; sleep 0.05; done`,
      ...fill,
      `cd '${this.project}'`,
      `env -i HOME='${this.home}' PATH='${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin' TERM=xterm-256color LANG=C.UTF-8 ${hostEnv} "$@"`,
      '',
    ].join('\n');
  }

  /** Runs the host with `args` offline to completion (no terminal). */
  offline(args: readonly string[], timeoutMs = STEP_MS): CommandRun {
    const result = spawnSync('unshare', ['-n', 'sh', this.#runner, binaryOf(this.name), ...args], {
      encoding: 'utf8',
      timeout: timeoutMs,
      input: '',
    });
    if (result.error !== undefined) throw result.error;
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  /** Starts the host's interactive session offline in a 200×50 tmux pane. */
  session(): TmuxSession {
    this.#sessions++;
    return new TmuxSession(this.#socket, `${this.name}-${this.#sessions}`, [
      'unshare',
      '-n',
      'sh',
      this.#runner,
      binaryOf(this.name),
    ]);
  }

  /** Every JSON-RPC line the relay logged so far, in order. */
  wire(): WireLine[] {
    if (!existsSync(this.wireLog)) return [];
    const lines: WireLine[] = [];
    let start = 0;
    for (const raw of readFileSync(this.wireLog, 'utf8').split('\n')) {
      if (raw === '') continue;
      const record = JSON.parse(raw) as { t: number; dir: string; line: string };
      if (record.dir === 'start') start++;
      if (record.dir !== 'host->server' && record.dir !== 'server->host') continue;
      try {
        lines.push({
          start,
          t: record.t,
          dir: record.dir,
          message: JSON.parse(record.line) as Record<string, unknown>,
        });
      } catch {
        // Not JSON: the tests look at JSON-RPC only (the server never writes anything else to stdout).
      }
    }
    return lines;
  }

  /** Whatever the server wrote to stderr, as the relay logged it. */
  serverStderr(): string[] {
    if (!existsSync(this.wireLog)) return [];
    return readFileSync(this.wireLog, 'utf8')
      .split('\n')
      .filter((raw) => raw !== '')
      .map((raw) => JSON.parse(raw) as { dir: string; line: string })
      .filter((record) => record.dir === 'stderr')
      .map((record) => record.line);
  }

  /** How many times the host started the server. */
  serverStarts(): number {
    if (!existsSync(this.wireLog)) return 0;
    return readFileSync(this.wireLog, 'utf8')
      .split('\n')
      .filter((raw) => raw.startsWith('{"t":') && (JSON.parse(raw) as { dir: string }).dir === 'start').length;
  }

  /** Requests the host sent with `method` (newest last). */
  requests(method: string): Record<string, unknown>[] {
    return this.wire()
      .filter((line) => line.dir === 'host->server' && line.message['method'] === method)
      .map((line) => line.message);
  }

  /** Every request the host sent (notifications left out), each paired with the answer of the same server start. */
  exchanges(): Exchange[] {
    const exchanges: { -readonly [K in keyof Exchange]: Exchange[K] }[] = [];
    const pending = new Map<string, (typeof exchanges)[number]>();
    for (const line of this.wire()) {
      const { message } = line;
      const key = `${line.start} ${JSON.stringify(message['id'])}`;
      if (line.dir === 'host->server' && typeof message['method'] === 'string' && 'id' in message) {
        const exchange = {
          start: line.start,
          method: message['method'],
          request: message,
          sentAt: line.t,
          answer: undefined,
        };
        exchanges.push(exchange);
        pending.set(key, exchange);
      } else if (line.dir === 'server->host' && !('method' in message) && pending.has(key)) {
        (pending.get(key) as (typeof exchanges)[number]).answer = { message, at: line.t };
        pending.delete(key);
      }
    }
    return exchanges;
  }

  /** The results the server sent for the host's `method` requests (newest last). */
  results(method: string): Record<string, unknown>[] {
    return this.exchanges().flatMap((exchange) =>
      exchange.method === method && exchange.answer !== undefined && 'result' in exchange.answer.message
        ? [exchange.answer.message['result'] as Record<string, unknown>]
        : [],
    );
  }

  /** Notifications the server sent with `method`. */
  notifications(method: string): Record<string, unknown>[] {
    return this.wire()
      .filter((line) => line.dir === 'server->host' && line.message['method'] === method)
      .map((line) => line.message);
  }

  /** Every request the host sent to the stand-in model. */
  modelRequests(): ModelRequest[] {
    if (!existsSync(this.modelLog)) return [];
    return readFileSync(this.modelLog, 'utf8')
      .split('\n')
      .filter((raw) => raw !== '')
      .map((raw) => JSON.parse(raw) as ModelRequest);
  }

  /**
   * Ends this user's tmux server (if one was started), waits for the processes of its panes to exit (hung up, a host
   * saves its state first; any left after 20 s are killed), then removes the user's files.
   */
  async close(): Promise<void> {
    const panes = spawnSync('tmux', ['-L', this.#socket, 'list-panes', '-a', '-F', '#{pane_pid}'], {
      encoding: 'utf8',
    });
    const pids = (panes.stdout ?? '')
      .split('\n')
      .filter((line) => /^\d+$/u.test(line))
      .flatMap((pid) => [Number(pid), ...descendants(Number(pid))]);
    spawnSync('tmux', ['-L', this.#socket, 'kill-server'], { stdio: 'ignore' });
    const alive = (): number[] => pids.filter(isAlive);
    await waitFor(() => alive().length === 0, { timeoutMs: 20_000, intervalMs: 100 }).catch(() => {
      for (const pid of alive()) process.kill(pid, 'SIGKILL');
    });
    rmSync(this.root, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  }
}

/** Where a config template names the stand-in model's port. */
const PORT = '@FAKE_MODEL_PORT@';

/** A made-up Anthropic API key: the stand-in model accepts anything. */
const CLAUDE_KEY = 'sk-ant-api03-skills-serve-host-tests-0000';

/** An interactive host in a detached tmux pane. */
export class TmuxSession {
  readonly #tmux: (args: readonly string[]) => string;

  constructor(
    socket: string,
    readonly name: string,
    command: readonly string[],
  ) {
    this.#tmux = (args) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
    this.#tmux(['new-session', '-d', '-s', name, '-x', '200', '-y', '50', command.map(shellQuote).join(' ')]);
  }

  /** The visible pane (and `history` lines above it), trailing spaces trimmed. */
  pane(history = 0): string {
    const text = this.#tmux(['capture-pane', '-p', '-t', this.name, ...(history > 0 ? ['-S', String(-history)] : [])]);
    return text
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n');
  }

  /** Types `text` literally. */
  type(text: string): void {
    this.#tmux(['send-keys', '-t', this.name, '-l', text]);
  }

  /** Presses keys by tmux name (`Enter`, `Escape`, `C-u`). */
  press(...keys: string[]): void {
    this.#tmux(['send-keys', '-t', this.name, ...keys]);
  }

  /**
   * Waits until the pane (with `history` lines of scrollback) satisfies `predicate`.
   *
   * @returns the pane text that satisfied it.
   * @throws with the last pane seen when `timeoutMs` passes first.
   */
  async waitForPane(
    predicate: (pane: string) => boolean,
    what: string,
    timeoutMs = STEP_MS,
    history = 0,
  ): Promise<string> {
    let last = '';
    try {
      await waitFor(
        () => {
          last = this.pane(history);
          return predicate(last);
        },
        { timeoutMs, intervalMs: 100 },
      );
    } catch {
      throw new Error(`${this.name}: waited ${timeoutMs} ms for ${what}; the pane showed:\n${last}`);
    }
    return last;
  }

  /**
   * Types `text`, waits until the host has drawn it (an Enter arriving with the keystrokes would be taken for part of
   * a paste), then presses Enter. Drawn means: the pane shows `drawn` (a completion line the host shows while `text`
   * is typed), or else `text` once more than before.
   */
  async submit(text: string, drawn?: string): Promise<void> {
    const before = occurrences(this.pane(), text);
    this.type(text);
    await this.waitForPane(
      (pane) => (drawn === undefined ? occurrences(pane, text) > before : pane.includes(drawn)),
      `"${text}" in the input line`,
    );
    this.press('Enter');
  }
}

/** Every process below `pid` (read from /proc), children first found first. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/u.test(entry)) continue;
    try {
      // Fields after the command name (which may hold spaces) start with the state, then the parent pid.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // The process ended while /proc was read.
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift() as number) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/u.test(word) ? word : `'${word.replace(/'/gu, `'\\''`)}'`;
}

/**
 * The generated catalog of `count` skills ({@link catalogTree}), written into a new temp directory.
 *
 * @returns its absolute path.
 */
export function generatedCatalog(count: number): string {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'skills-serve-catalog-')));
  for (const [rel, text] of Object.entries(catalogTree(count))) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  return root;
}
