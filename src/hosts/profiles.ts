/**
 * Host profiles: what each host that runs MCP servers does with what a server offers, measured on the released
 * versions named in each profile (docs/hosts/README.md, "Host profiles"). The compat surfaces size what they offer by
 * these limits, and `check --hosts` shows, per host, what its model and user will see of a catalog. A leaf: pure data
 * and arithmetic, no I/O.
 *
 * A limit measured in characters counts UTF-16 code units (what JavaScript hosts cut by); bytes are UTF-8 bytes.
 */

/** Hosts with a profile. */
export type HostId =
  'claude-code' | 'gemini-cli' | 'codex' | 'opencode' | 'agent-framework' | 'goose-fork' | 'gemini-fork';

/** A host's Skills-extension client (SEP-2640): what it keeps of `skills/list`. */
export interface ExtensionClient {
  /** Most skills it keeps of one server (later entries are dropped), or `undefined` when it keeps them all. */
  readonly maxSkills?: number;
  /** Most `skills/list` pages it reads of one server; 1 when it never follows `nextCursor`. */
  readonly maxPages?: number;
  /** Most bytes of entries it keeps of one server. */
  readonly maxEntryBytes?: number;
  /** Characters of a skill's description it shows its model (the rest is cut). */
  readonly descriptionChars?: number;
  /** It declines a skill whose `SKILL.md` is larger than this (bytes). */
  readonly maxManifestBytes?: number;
  /** It declines a skill with a resource URI longer than this (bytes), or one holding `$`. */
  readonly maxUriBytes?: number;
  /** Whether one entry it finds invalid fails the whole discovery of the server. */
  readonly failsOnInvalidEntry?: boolean;
  /** Whether it is on in the released host (Claude Code's is behind a remote flag that is off for every user). */
  readonly shipped: boolean;
}

/** What a host does with a server's offer, as measured. */
export interface HostProfile {
  readonly id: HostId;
  /** Name and measured version, as docs and `check --hosts` print it. */
  readonly label: string;
  /** `clientInfo.name` values the host sends in `initialize` / `server/discover`. */
  readonly clientNames: readonly string[];
  /** Characters of the server `instructions` its model is shown; `undefined`: not shown, or not measured. */
  readonly instructionsChars?: number;
  /** Characters of one tool description its model is shown (the rest is cut); `undefined`: whole. */
  readonly toolDescriptionChars?: number;
  /**
   * Whether it shows the model an MCP tool only as a name behind a tool search unless the tool is listed with
   * `_meta["anthropic/alwaysLoad"]: true`.
   */
  readonly defersTools: boolean;
  /** Whether its model is shown the server's MCP prompts (otherwise they are slash commands for the user only). */
  readonly promptsToModel: boolean;
  /** Whether it lists the server's MCP prompts at all (Codex CLI and opencode list only tools). */
  readonly listsPrompts: boolean;
  /**
   * Whether its model is offered the server's MCP tools, and with them `read_skill`'s catalog (Agent Framework's skills
   * source reads only `skills/list`).
   */
  readonly offersTools: boolean;
  /** A working-group prototype rather than a released host: `check --hosts --strict` shows it but never fails on it. */
  readonly prototype: boolean;
  /** Whether it follows `nextCursor` of `prompts/list`. */
  readonly pagesPrompts: boolean;
  /** Characters of a tool result its model gets whole; `undefined`: not measured, or no cut. */
  readonly toolResultChars?: number;
  /** Its Skills-extension client, when it has one. */
  readonly extension?: ExtensionClient;
  /** How long it waits for a server's tools before its first model request (ms), when it does not wait for them. */
  readonly startupWaitMs?: number;
}

/** The `_meta` key Claude Code reads on a listed tool: `true` sends the tool in full, never behind its tool search. */
export const ALWAYS_LOAD_META = 'anthropic/alwaysLoad';

/** Claude Code, as every user runs it today: its Skills-extension client is switched off remotely. */
export const CLAUDE_CODE: HostProfile = {
  id: 'claude-code',
  label: 'Claude Code 2.1.332',
  clientNames: ['claude-code'],
  instructionsChars: 4096,
  toolDescriptionChars: 4096,
  defersTools: true,
  promptsToModel: false,
  listsPrompts: true,
  offersTools: true,
  prototype: false,
  pagesPrompts: true,
  // It writes a larger result to a file and shows the model where it is.
  toolResultChars: 100_000,
  extension: {
    maxSkills: 100,
    maxPages: 20,
    maxEntryBytes: 512 * 1024,
    descriptionChars: 1536,
    maxManifestBytes: 1_000_000,
    maxUriBytes: 2048,
    shipped: false,
  },
  startupWaitMs: 2000,
};

export const GEMINI_CLI: HostProfile = {
  id: 'gemini-cli',
  label: 'Gemini CLI 0.61.0',
  clientNames: ['gemini-cli-mcp-client'],
  defersTools: false,
  promptsToModel: false,
  listsPrompts: true,
  offersTools: true,
  prototype: false,
  pagesPrompts: false,
};

export const CODEX: HostProfile = {
  id: 'codex',
  label: 'Codex CLI 0.171.0',
  clientNames: ['codex-mcp-client'],
  defersTools: false,
  promptsToModel: false,
  listsPrompts: false,
  offersTools: true,
  prototype: false,
  pagesPrompts: true,
  // Head and tail of a longer result; content items after the one it cuts are dropped.
  toolResultChars: 12_000,
};

export const OPENCODE: HostProfile = {
  id: 'opencode',
  label: 'opencode 1.18.33',
  clientNames: ['opencode'],
  defersTools: false,
  promptsToModel: false,
  listsPrompts: false,
  offersTools: true,
  prototype: false,
  pagesPrompts: true,
  toolResultChars: 50_000,
};

/** Microsoft Agent Framework (.NET, `AgentMcpSkillsSource`): reads page 1 and refuses the server on one bad entry. */
export const AGENT_FRAMEWORK: HostProfile = {
  id: 'agent-framework',
  label: 'Microsoft Agent Framework (.NET)',
  clientNames: [],
  defersTools: false,
  promptsToModel: false,
  listsPrompts: false,
  offersTools: false,
  prototype: false,
  pagesPrompts: true,
  extension: { maxPages: 1, failsOnInvalidEntry: true, shipped: true },
};

/** The goose fork with the Skills extension (working-group prototype). */
export const GOOSE_FORK: HostProfile = {
  id: 'goose-fork',
  label: 'goose (Skills-extension fork)',
  clientNames: [],
  defersTools: false,
  promptsToModel: false,
  listsPrompts: true,
  offersTools: true,
  prototype: true,
  pagesPrompts: true,
  extension: { maxPages: 64, shipped: true },
  startupWaitMs: 5000,
};

/** The Gemini CLI fork with the Skills extension (working-group prototype). */
export const GEMINI_FORK: HostProfile = {
  id: 'gemini-fork',
  label: 'Gemini CLI (Skills-extension fork)',
  clientNames: [],
  defersTools: false,
  promptsToModel: false,
  listsPrompts: true,
  offersTools: true,
  prototype: true,
  pagesPrompts: false,
  extension: { descriptionChars: 500, shipped: true },
};

/** Every profile, released hosts first. */
export const HOST_PROFILES: readonly HostProfile[] = Object.freeze([
  CLAUDE_CODE,
  GEMINI_CLI,
  CODEX,
  OPENCODE,
  AGENT_FRAMEWORK,
  GOOSE_FORK,
  GEMINI_FORK,
]);

/**
 * The profile of the host that sent `clientName` (`clientInfo.name`).
 *
 * @returns the profile, or `undefined` for a host without one.
 */
export function profileOf(clientName: string | undefined): HostProfile | undefined {
  return clientName === undefined
    ? undefined
    : HOST_PROFILES.find((profile) => profile.clientNames.includes(clientName));
}

/**
 * The strictest bound a released host puts on a tool description (characters): the default `--catalog-max`, the
 * bound of `read_skill`'s description with its catalog.
 */
export const STRICTEST_TOOL_DESCRIPTION_CHARS = Math.min(
  ...HOST_PROFILES.flatMap((profile) =>
    profile.toolDescriptionChars === undefined ? [] : [profile.toolDescriptionChars],
  ),
);

/**
 * The strictest bound a released host puts on a tool result (characters): what `list_skills`, `search_skills` and
 * the head of `read_skill` stay within, so that every host passes them whole.
 */
export const STRICTEST_TOOL_RESULT_CHARS = 10_000;

/** Most skills an extension client keeps of one server (Claude Code); `skills/list` pages hold at most this many. */
export const EXTENSION_MAX_SKILLS = CLAUDE_CODE.extension?.maxSkills ?? 100;

/** Most bytes of entries an extension client keeps of one server (Claude Code); a page stays within them. */
export const EXTENSION_MAX_ENTRY_BYTES = CLAUDE_CODE.extension?.maxEntryBytes ?? 512 * 1024;

/** A `SKILL.md` larger than this (bytes) makes an extension client decline the skill (Claude Code: "over 1 MB"). */
export const EXTENSION_MAX_MANIFEST_BYTES = CLAUDE_CODE.extension?.maxManifestBytes ?? 1_000_000;

/** A resource URI longer than this (UTF-8 bytes) makes an extension client decline its skill (Claude Code). */
export const EXTENSION_MAX_URI_BYTES = CLAUDE_CODE.extension?.maxUriBytes ?? 2048;

/**
 * Prompts per `prompts/list` page: hosts that do not follow `nextCursor` (Gemini CLI) get every prompt of a catalog
 * of up to this many skills in the first page.
 */
export const PROMPTS_PAGE_SIZE = 10_000;
