/**
 * Reads what a host sent to the stand-in model, in each model API the hosts speak (Anthropic Messages for Claude
 * Code, the Gemini API for Gemini CLI, OpenAI Responses for Codex CLI, Chat Completions for opencode): the user's
 * texts, the tools offered, and every tool call with the result the host passed back, in conversation order.
 */
import type { ModelRequest } from './harness.js';

/** Which model API a request is in. */
export type ModelApi = 'anthropic' | 'gemini' | 'responses' | 'chat';

/** One tool call in a conversation, with what the host gave the model back for it. */
export interface ToolTurn {
  /** The called tool as the model named it (`namespace.name` for a Responses call in a namespace). */
  readonly name: string;
  readonly arguments: unknown;
  /** The result's text parts, as the host sent them (`undefined` while a call has no result yet). */
  readonly result: readonly string[] | undefined;
  /** The result's parts that are not text (Claude Code's `tool_reference`), as sent. */
  readonly other: readonly unknown[];
}

/** One request body, parsed. */
export interface Conversation {
  readonly api: ModelApi;
  /** Every text of the user's messages. */
  readonly userTexts: readonly string[];
  /** The names of the tools offered (Responses namespaces as `namespace.tool`). */
  readonly tools: readonly string[];
  readonly turns: readonly ToolTurn[];
  readonly body: Record<string, unknown>;
}

type Json = Record<string, unknown>;
const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);
const textsOf = (content: unknown): string[] =>
  typeof content === 'string'
    ? [content]
    : list(content).flatMap((part) => (typeof part['text'] === 'string' ? [part['text']] : []));

/** The API of a request, from its URL (`undefined` for a request that is not a model turn). */
export function apiOf(url: string): ModelApi | undefined {
  if (url.startsWith('/v1/messages?') || url === '/v1/messages') return 'anthropic';
  if (url.includes(':streamGenerateContent')) return 'gemini';
  if (url.endsWith('/responses')) return 'responses';
  if (url.endsWith('/chat/completions')) return 'chat';
  return undefined;
}

/** Parses one model request, or returns `undefined` for a request that is not a model turn. */
export function conversationOf(request: ModelRequest): Conversation | undefined {
  const api = apiOf(request.url);
  if (api === undefined) return undefined;
  const body = JSON.parse(request.body) as Json;
  if (api === 'anthropic') return anthropic(body);
  if (api === 'gemini') return gemini(body);
  if (api === 'responses') return responses(body);
  return chat(body);
}

function anthropic(body: Json): Conversation {
  const messages = list(body['messages']);
  const results = new Map<string, Json>();
  for (const block of messages.filter((m) => m['role'] === 'user').flatMap((m) => list(m['content'])))
    if (block['type'] === 'tool_result') results.set(String(block['tool_use_id']), block);
  const turns = messages
    .filter((message) => message['role'] === 'assistant')
    .flatMap((message) => list(message['content']))
    .filter((block) => block['type'] === 'tool_use')
    .map((block): ToolTurn => {
      const result = results.get(String(block['id']));
      const content = result?.['content'];
      return {
        name: String(block['name']),
        arguments: block['input'],
        result: result === undefined ? undefined : textsOf(content),
        other: list(content).filter((part) => typeof part['text'] !== 'string'),
      };
    });
  return {
    api: 'anthropic',
    userTexts: messages
      .filter((message) => message['role'] === 'user')
      .flatMap((message) =>
        typeof message['content'] === 'string'
          ? [message['content']]
          : list(message['content'])
              .filter((block) => block['type'] === 'text')
              .flatMap((block) => textsOf([block])),
      ),
    tools: list(body['tools']).map((tool) => String(tool['name'])),
    turns,
    body,
  };
}

function gemini(body: Json): Conversation {
  const contents = list(body['contents']);
  const calls = contents.filter((c) => c['role'] === 'model').flatMap((c) => list(c['parts']));
  const responses = contents.filter((c) => c['role'] === 'user').flatMap((c) => list(c['parts']));
  const results = new Map<string, Json>();
  for (const part of responses) {
    const response = part['functionResponse'] as Json | undefined;
    if (response !== undefined) results.set(String(response['id']), response);
  }
  const turns = calls.flatMap((part): ToolTurn[] => {
    const call = part['functionCall'] as Json | undefined;
    if (call === undefined) return [];
    const response = results.get(String(call['id']))?.['response'] as Json | undefined;
    const output = response?.['output'];
    return [
      {
        name: String(call['name']),
        arguments: call['args'],
        result: response === undefined ? undefined : [typeof output === 'string' ? output : JSON.stringify(response)],
        other: [],
      },
    ];
  });
  return {
    api: 'gemini',
    userTexts: responses.flatMap((part) => textsOf([part])),
    tools: list(body['tools']).flatMap((tool) =>
      list(tool['functionDeclarations']).map((declaration) => String(declaration['name'])),
    ),
    turns,
    body,
  };
}

function responses(body: Json): Conversation {
  const input = list(body['input']);
  const outputs = new Map<string, Json>();
  for (const item of input) if (item['type'] === 'function_call_output') outputs.set(String(item['call_id']), item);
  const turns = input
    .filter((item) => item['type'] === 'function_call')
    .map((item): ToolTurn => {
      const output = outputs.get(String(item['call_id']));
      const namespace = typeof item['namespace'] === 'string' ? `${item['namespace']}.` : '';
      return {
        name: `${namespace}${String(item['name'])}`,
        arguments: JSON.parse(String(item['arguments'])) as unknown,
        result: output === undefined ? undefined : textsOf(output['output']),
        other: [],
      };
    });
  return {
    api: 'responses',
    userTexts: input
      .filter((item) => item['role'] === 'user' && (item['type'] ?? 'message') === 'message')
      .flatMap((item) => textsOf(item['content'])),
    tools: list(body['tools']).flatMap((tool) =>
      tool['type'] === 'namespace'
        ? list(tool['tools']).map((inner) => `${String(tool['name'])}.${String(inner['name'])}`)
        : [String(tool['name'] ?? tool['type'])],
    ),
    turns,
    body,
  };
}

function chat(body: Json): Conversation {
  const messages = list(body['messages']);
  const results = new Map<string, Json>();
  for (const message of messages) if (message['role'] === 'tool') results.set(String(message['tool_call_id']), message);
  const turns = messages
    .filter((message) => message['role'] === 'assistant')
    .flatMap((message) => list(message['tool_calls']))
    .map((call): ToolTurn => {
      const fn = call['function'] as Json;
      const result = results.get(String(call['id']));
      return {
        name: String(fn['name']),
        arguments: JSON.parse(String(fn['arguments'])) as unknown,
        result: result === undefined ? undefined : textsOf(result['content']),
        other: [],
      };
    });
  return {
    api: 'chat',
    userTexts: messages.filter((message) => message['role'] === 'user').flatMap((m) => textsOf(m['content'])),
    tools: list(body['tools']).map((tool) => String((tool['function'] as Json | undefined)?.['name'])),
    turns,
    body,
  };
}

/** The requests of the scripted conversation: model turns that offer tools and whose user text holds `marker`. */
export function scriptedTurns(requests: readonly ModelRequest[], marker: string): Conversation[] {
  return requests
    .map(conversationOf)
    .filter(
      (conversation): conversation is Conversation =>
        conversation !== undefined &&
        conversation.tools.length > 0 &&
        conversation.userTexts.some((text) => text.includes(marker)),
    );
}
