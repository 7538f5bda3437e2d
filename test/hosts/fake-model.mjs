// node fake-model.mjs LOG PORTFILE [SCRIPT]: a stand-in for the model APIs hosts call (Anthropic Messages, the Gemini
// API, OpenAI Responses and Chat Completions) on 127.0.0.1, so that hosts run offline complete a turn and tests can
// read exactly what they would have sent to the model. Every request is appended to LOG as {"method", "url", "body",
// "at"} ("at": the wall clock in ms when the request's body had arrived);
// the chosen port is written to PORTFILE once listening.
//
// Without a script, every answer is the text FAKE-MODEL-REPLY. SCRIPT (a JSON file, read at every request, so a test
// may write it between turns) makes it a scripted model: {"marker": "...", "calls": [{"name", "arguments"}, ...]}.
// A request that offers tools, in a conversation whose user text holds the marker, is answered with call number k,
// where k is how many tool calls the model has already made in that conversation; once every call was made, with
// the text FAKE-MODEL-REPLY. Anything else (a host's side requests: titles, routing, summaries) gets the plain text.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';

const [log, portFile, scriptFile] = process.argv.slice(2);
const REPLY = 'FAKE-MODEL-REPLY';

/** @typedef {{ name: string, arguments: Record<string, unknown> }} Call */

/** The script's calls, or `undefined` without a script. @returns {{ marker: string, calls: Call[] } | undefined} */
function script() {
  if (scriptFile === undefined || !existsSync(scriptFile)) return undefined;
  return JSON.parse(readFileSync(scriptFile, 'utf8'));
}

/**
 * What to answer a conversation with: the next scripted call, or `undefined` for the plain text.
 *
 * @param {{ userTexts: string[], toolCalls: number, offersTools: boolean }} conversation
 * @returns {Call | undefined}
 */
function nextCall(conversation) {
  const current = script();
  if (current === undefined || !conversation.offersTools) return undefined;
  if (!conversation.userTexts.some((text) => text.includes(current.marker))) return undefined;
  return current.calls[conversation.toolCalls];
}

function parse(body) {
  try {
    return JSON.parse(body);
  } catch {
    return {};
  }
}

const texts = (content) =>
  typeof content === 'string'
    ? [content]
    : Array.isArray(content)
      ? content.flatMap((part) => (typeof part?.text === 'string' ? [part.text] : []))
      : [];

const sse = (response, data, type) =>
  response.write(`${type === undefined ? '' : `event: ${type}\n`}data: ${JSON.stringify(data)}\n\n`);

/** Anthropic Messages: JSON, or the server-sent events of a streamed message. */
function anthropic(response, body) {
  const request = parse(body);
  const messages = Array.isArray(request.messages) ? request.messages : [];
  const call = nextCall({
    userTexts: messages.filter((message) => message.role === 'user').flatMap((message) => texts(message.content)),
    toolCalls: messages
      .filter((message) => message.role === 'assistant' && Array.isArray(message.content))
      .flatMap((message) => message.content)
      .filter((block) => block?.type === 'tool_use').length,
    offersTools: Array.isArray(request.tools) && request.tools.length > 0,
  });
  const id = `toolu_fake_${Date.now().toString(36)}`;
  const block =
    call === undefined
      ? { type: 'text', text: REPLY }
      : { type: 'tool_use', id, name: call.name, input: call.arguments };
  const stop = call === undefined ? 'end_turn' : 'tool_use';
  const message = {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model: request.model ?? 'fake',
    content: [block],
    stop_reason: stop,
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
  if (request.stream !== true) {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(message));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const event = (type, data) => sse(response, { type, ...data }, type);
  event('message_start', { message: { ...message, content: [], stop_reason: null } });
  if (call === undefined) {
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: REPLY } });
  } else {
    event('content_block_start', { index: 0, content_block: { ...block, input: {} } });
    event('content_block_delta', {
      index: 0,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.arguments) },
    });
  }
  event('content_block_stop', { index: 0 });
  event('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 1 } });
  event('message_stop', {});
  response.end();
}

const geminiCandidate = (parts) => ({
  candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
  usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
});

/** Gemini streamGenerateContent: one server-sent event with the whole candidate. */
function gemini(response, body) {
  const request = parse(body);
  const contents = Array.isArray(request.contents) ? request.contents : [];
  const call = nextCall({
    userTexts: contents.filter((content) => content.role === 'user').flatMap((content) => texts(content.parts)),
    toolCalls: contents
      .filter((content) => content.role === 'model')
      .flatMap((content) => content.parts ?? [])
      .filter((part) => part.functionCall !== undefined).length,
    offersTools: Array.isArray(request.tools) && request.tools.some((tool) => tool.functionDeclarations?.length > 0),
  });
  const parts = call === undefined ? [{ text: REPLY }] : [{ functionCall: { name: call.name, args: call.arguments } }];
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  sse(response, geminiCandidate(parts));
  response.end();
}

/** OpenAI Responses (`wire_api = "responses"`): the server-sent events of one streamed response. */
function responses(response, body) {
  const request = parse(body);
  const input = Array.isArray(request.input) ? request.input : [];
  const call = nextCall({
    userTexts: input
      .filter((item) => item.role === 'user' && (item.type === undefined || item.type === 'message'))
      .flatMap((item) => texts(item.content)),
    toolCalls: input.filter((item) => item.type === 'function_call').length,
    offersTools: Array.isArray(request.tools) && request.tools.length > 0,
  });
  const stamp = Date.now().toString(36);
  const item =
    call === undefined
      ? {
          type: 'message',
          id: `msg_${stamp}`,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: REPLY, annotations: [] }],
        }
      : {
          type: 'function_call',
          id: `fc_${stamp}`,
          call_id: `call_${stamp}`,
          status: 'completed',
          ...splitName(call.name),
          arguments: JSON.stringify(call.arguments),
        };
  const id = `resp_${stamp}`;
  const base = { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model: request.model ?? 'fake' };
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  let sequence = 0;
  const event = (type, data) => sse(response, { type, sequence_number: sequence++, ...data }, type);
  event('response.created', { response: { ...base, status: 'in_progress', output: [] } });
  event('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress' } });
  if (call === undefined) {
    event('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: REPLY });
  }
  event('response.output_item.done', { output_index: 0, item });
  event('response.completed', {
    response: {
      ...base,
      status: 'completed',
      output: [item],
      usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
    },
  });
  response.end();
}

/**
 * A scripted name `namespace.tool` becomes a Responses call in that namespace (how Codex names a server's tools);
 * a plain name stays a plain function call.
 */
function splitName(name) {
  const dot = name.lastIndexOf('.');
  return dot === -1 ? { name } : { namespace: name.slice(0, dot), name: name.slice(dot + 1) };
}

/** OpenAI Chat Completions: JSON, or the server-sent chunks of a streamed completion. */
function chat(response, body) {
  const request = parse(body);
  const messages = Array.isArray(request.messages) ? request.messages : [];
  const call = nextCall({
    userTexts: messages.filter((message) => message.role === 'user').flatMap((message) => texts(message.content)),
    toolCalls: messages
      .filter((message) => message.role === 'assistant')
      .reduce((sum, message) => sum + (Array.isArray(message.tool_calls) ? message.tool_calls.length : 0), 0),
    offersTools: Array.isArray(request.tools) && request.tools.length > 0,
  });
  const stamp = Date.now().toString(36);
  const toolCall =
    call === undefined
      ? undefined
      : {
          id: `call_${stamp}`,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.arguments) },
        };
  const finish = call === undefined ? 'stop' : 'tool_calls';
  const base = { id: `chatcmpl_${stamp}`, created: Math.floor(Date.now() / 1000), model: request.model ?? 'fake' };
  const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
  if (request.stream !== true) {
    const message =
      toolCall === undefined
        ? { role: 'assistant', content: REPLY }
        : { role: 'assistant', content: null, tool_calls: [toolCall] };
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message, finish_reason: finish }],
        usage,
      }),
    );
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta, finishReason, extra = {}) =>
    sse(response, {
      ...base,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finishReason }],
      ...extra,
    });
  chunk({ role: 'assistant', content: '' }, null);
  chunk(toolCall === undefined ? { content: REPLY } : { tool_calls: [{ index: 0, ...toolCall }] }, null);
  chunk({}, finish, { usage });
  response.write('data: [DONE]\n\n');
  response.end();
}

const server = http.createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
  });
  request.on('end', () => {
    appendFileSync(log, `${JSON.stringify({ method: request.method, url: request.url, body, at: Date.now() })}\n`);
    const url = request.url ?? '';
    const post = request.method === 'POST';
    if (post && url.startsWith('/v1/messages/count_tokens')) {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"input_tokens":1}');
      return;
    }
    if (post && url.startsWith('/v1/messages')) return anthropic(response, body);
    if (post && url.includes(':streamGenerateContent')) return gemini(response, body);
    if (post && url.includes(':generateContent')) {
      // Gemini CLI's model router asks a small model to rate the request's complexity, as JSON.
      const rating = JSON.stringify({ complexity_reasoning: 'a test request', complexity_score: 1 });
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(geminiCandidate([{ text: rating }])));
      return;
    }
    if (post && url.includes(':countTokens')) {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"totalTokens":1}');
      return;
    }
    if (post && url.endsWith('/responses')) return responses(response, body);
    if (post && url.endsWith('/chat/completions')) return chat(response, body);
    response
      .writeHead(404, { 'content-type': 'application/json' })
      .end('{"error":{"type":"not_found_error","message":"not served by the fake model"}}');
  });
});
server.listen(0, '127.0.0.1', () => writeFileSync(portFile, String(server.address().port)));
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => server.close(() => process.exit(0)));
