/**
 * A faithful model of a host with the Skills extension, as Claude Code's extension client behaves on the wire (README,
 * "Use with hosts"): `server/discover` (the extension not declared), `subscriptions/listen`, `server/discover` again,
 * then in one write `prompts/list`, `skills/list` (the extension declared in its `_meta` only), `resources/list` and
 * `tools/list`. It keeps at most 100 skills a server (and reads no further page once it has them), re-asks a list
 * only for a `list_changed` that arrives after that list's answer (one written while the list is in flight is lost),
 * and re-lists resources, prompts and skills on `notifications/resources/list_changed`.
 *
 * What it holds at the end is what its user and its model are shown: the skills it listed, the prompts, and the
 * tools (the catalog in `read_skill`'s description).
 */
import { type Message, spawnWire, type Wire } from './wire.js';

/** The most skills the host keeps of one server. */
export const HOST_KEEPS_SKILLS = 100;

type List = 'prompts' | 'skills' | 'resources' | 'tools';

/** What the host holds once the server has nothing more to tell it. */
export interface HostView {
  /** `SKILL.md` URIs of the skills it lists through the extension (shown to the model and the user). */
  readonly skills: readonly string[];
  /** Prompt names (slash commands shown to the user). */
  readonly prompts: readonly string[];
  /** Tool names. */
  readonly tools: readonly string[];
  /** `read_skill`'s description as held. */
  readonly readSkill: string;
  /** Resource URIs held (`@` mentions). */
  readonly resources: readonly string[];
}

const meta = (extension: boolean): Record<string, unknown> => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'extension-host-model', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {
    roots: { listChanged: true },
    extensions: extension
      ? { 'io.modelcontextprotocol/tasks': {}, 'io.modelcontextprotocol/skills': {} }
      : { 'io.modelcontextprotocol/tasks': {} },
  },
});

const LIST_METHOD: Record<List, string> = {
  prompts: 'prompts/list',
  skills: 'skills/list',
  resources: 'resources/list',
  tools: 'tools/list',
};

const CHANGED: Record<string, List> = {
  'notifications/prompts/list_changed': 'prompts',
  'notifications/tools/list_changed': 'tools',
};

/** The model host over one server process. */
export class ExtensionHost {
  readonly wire: Wire;
  #read = 0;
  #next = 1;
  readonly #pending = new Map<string, List | 'ping'>();
  readonly #inFlight = new Set<List>();
  #skills: string[] = [];
  #skillsBuffer: string[] = [];
  #prompts: string[] = [];
  #tools: { name: string; description?: string }[] = [];
  #resources: string[] = [];
  /** Notifications the host lost (written while their list was in flight). */
  readonly lost: string[] = [];

  /**
   * @param args the server's arguments (roots and flags).
   * @param env extra environment for the server.
   */
  constructor(args: readonly string[], env: Record<string, string> = {}) {
    this.wire = spawnWire({ args, env });
  }

  /** Connects as the host does, sends the burst, and follows every change until the server has nothing more to say. */
  async connect(): Promise<HostView> {
    await this.open();
    return this.settle();
  }

  /**
   * Connects as the host does and sends the burst; then a `ping`, answered once the server has read the burst (its
   * requests are then under way, waiting for the first build if it is still running).
   */
  async open(): Promise<void> {
    const { wire } = this;
    wire.send({ jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: { _meta: meta(false) } });
    wire.send({
      jsonrpc: '2.0',
      id: 'listen',
      method: 'subscriptions/listen',
      params: {
        _meta: meta(false),
        notifications: { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true },
      },
    });
    wire.send({ jsonrpc: '2.0', id: 'discover', method: 'server/discover', params: { _meta: meta(false) } });
    await wire.waitFor((message) => message['id'] === 'discover');
    // The burst, in one write.
    const burst = (['prompts', 'skills', 'resources', 'tools'] as const).map((list) => this.#request(list));
    await wire.write(burst.map((message) => `${JSON.stringify(message)}\n`).join(''));
    await wire.request('ping', { _meta: meta(false) });
  }

  /**
   * Handles what the server sent, in order, re-asking what it changed, until a `ping` answered with nothing pending
   * brings nothing new: everything the server sent before that answer has been seen.
   *
   * @returns what the host holds then.
   */
  async settle(): Promise<HostView> {
    for (;;) {
      if (this.#pending.size === 0) {
        const id = `ping-${this.#next++}`;
        this.#pending.set(id, 'ping');
        this.wire.send({ jsonrpc: '2.0', id, method: 'ping', params: { _meta: meta(false) } });
      }
      const message = await this.#nextMessage();
      const id = typeof message['id'] === 'string' ? message['id'] : undefined;
      const kind = id === undefined ? undefined : this.#pending.get(id);
      if (kind !== undefined && id !== undefined && typeof message['method'] !== 'string') {
        this.#pending.delete(id);
        if (kind === 'ping') {
          if (this.#pending.size === 0) return this.view();
          continue;
        }
        this.#inFlight.delete(kind);
        this.#answered(kind, (message['result'] ?? {}) as Record<string, unknown>);
        continue;
      }
      const method = message['method'];
      if (typeof method !== 'string') continue;
      const changed = CHANGED[method];
      if (changed !== undefined) {
        if (this.#inFlight.has(changed)) this.lost.push(method);
        else this.#send(this.#request(changed));
      } else if (method === 'notifications/resources/list_changed') {
        for (const list of ['resources', 'prompts', 'skills'] as const)
          if (!this.#inFlight.has(list)) this.#send(this.#request(list));
      }
    }
  }

  /** What the host holds now. */
  view(): HostView {
    return {
      skills: [...this.#skills],
      prompts: [...this.#prompts],
      tools: this.#tools.map((tool) => tool.name),
      readSkill: this.#tools.find((tool) => tool.name === 'read_skill')?.description ?? '',
      resources: [...this.#resources],
    };
  }

  /** Sends a request with a fresh id and resolves with its answer (for the test's own calls). */
  request(method: string, params: Record<string, unknown> = {}): Promise<Message> {
    return this.wire.request(method, { ...params, _meta: meta(false) });
  }

  /** Ends the server. */
  stop(): Promise<void> {
    return this.wire.stop();
  }

  #answered(list: List, result: Record<string, unknown>): void {
    if (list === 'prompts') this.#prompts = (result['prompts'] as { name: string }[]).map((prompt) => prompt.name);
    else if (list === 'tools') this.#tools = result['tools'] as { name: string; description?: string }[];
    else if (list === 'resources') this.#resources = (result['resources'] as { uri: string }[]).map((r) => r.uri);
    else {
      const entries = (result['skills'] as { uri: string }[]).map((entry) => entry.uri);
      this.#skillsBuffer.push(...entries);
      const next = result['nextCursor'];
      if (typeof next === 'string' && this.#skillsBuffer.length < HOST_KEEPS_SKILLS) {
        this.#send(this.#request('skills', next));
        return;
      }
      this.#skills = this.#skillsBuffer.slice(0, HOST_KEEPS_SKILLS);
      this.#skillsBuffer = [];
    }
  }

  #request(list: List, cursor?: string): Record<string, unknown> {
    const id = `${list}-${this.#next++}`;
    this.#pending.set(id, list);
    this.#inFlight.add(list);
    if (list === 'skills' && cursor === undefined) this.#skillsBuffer = [];
    return {
      jsonrpc: '2.0',
      id,
      method: LIST_METHOD[list],
      params: { ...(cursor === undefined ? {} : { cursor }), _meta: meta(list === 'skills') },
    };
  }

  #send(message: Record<string, unknown>): void {
    this.wire.send(message);
  }

  async #nextMessage(): Promise<Message> {
    const at = this.#read;
    await this.wire.waitFor(() => this.wire.messages.length > at);
    this.#read++;
    return this.wire.messages[at] as Message;
  }
}

/** The `SKILL.md` URIs (or names, for lines without one) a `read_skill` description's catalog names, in order. */
export function catalogOf(description: string): string[] {
  const [, catalog = ''] = description.split('\n\nSkills (name: description):\n');
  return catalog === ''
    ? []
    : catalog
        .split('\n')
        .map((line) => /^- ([^ :]+)(?: \(([^)]+)\))?: /u.exec(line)?.[2] ?? /^- ([^ :]+)/u.exec(line)?.[1] ?? line);
}
