// node fake-model.mjs LOG PORTFILE: a stand-in for the Anthropic Messages API and the Gemini API on 127.0.0.1, so that
// hosts run offline complete a turn and tests can read exactly what they would have sent to the model. Every request
// is appended to LOG as {"method", "url", "body"}; every answer is the text FAKE-MODEL-REPLY. The chosen port is
// written to PORTFILE once listening.
import { appendFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';

const [log, portFile] = process.argv.slice(2);
const REPLY = 'FAKE-MODEL-REPLY';

/** Anthropic Messages: JSON, or the server-sent events of a streamed message. */
function anthropic(response, body) {
  let request = {};
  try {
    request = JSON.parse(body);
  } catch {
    // not JSON: answered as an empty request
  }
  const message = {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model: request.model ?? 'fake',
    content: [{ type: 'text', text: REPLY }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
  if (request.stream !== true) {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(message));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const event = (type, data) => response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event('message_start', { message: { ...message, content: [], stop_reason: null } });
  event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: REPLY } });
  event('content_block_stop', { index: 0 });
  event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } });
  event('message_stop', {});
  response.end();
}

const geminiCandidate = (text) => ({
  candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
  usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
});

const server = http.createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
  });
  request.on('end', () => {
    appendFileSync(log, `${JSON.stringify({ method: request.method, url: request.url, body })}\n`);
    const url = request.url ?? '';
    if (request.method === 'POST' && url.startsWith('/v1/messages')) return anthropic(response, body);
    if (request.method === 'POST' && url.includes(':streamGenerateContent')) {
      response
        .writeHead(200, { 'content-type': 'text/event-stream' })
        .end(`data: ${JSON.stringify(geminiCandidate(REPLY))}\n\n`);
      return;
    }
    if (request.method === 'POST' && url.includes(':generateContent')) {
      // Gemini CLI's model router asks a small model to rate the request's complexity, as JSON.
      const rating = JSON.stringify({ complexity_reasoning: 'a test request', complexity_score: 1 });
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(geminiCandidate(rating)));
      return;
    }
    if (request.method === 'POST' && url.includes(':countTokens')) {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"totalTokens":1}');
      return;
    }
    response
      .writeHead(404, { 'content-type': 'application/json' })
      .end('{"error":{"type":"not_found_error","message":"not served by the fake model"}}');
  });
});
server.listen(0, '127.0.0.1', () => writeFileSync(portFile, String(server.address().port)));
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => server.close(() => process.exit(0)));
