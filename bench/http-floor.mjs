#!/usr/bin/env node
// The HTTP floor of `npm run bench`: a bare `node:http` server that answers each POST with the response the real
// server gave to the same request body (recorded by bench/http.mjs: status, headers in their order and case, body
// bytes), written the same way (one chunk, chunked transfer encoding, keep-alive). What any Node HTTP server must at
// least spend to carry the same requests and answers over the same connections.
//
//   node bench/http-floor.mjs <recordings.json>   prints `{"port":N}` on stdout once listening; ends on SIGTERM
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const recordings = JSON.parse(readFileSync(process.argv[2], 'utf8'));
/** Request body → { status, headers: [name, value][], body: Buffer }. */
const answers = new Map(
  recordings.map((item) => [
    item.request,
    { status: item.status, headers: item.headers, body: Buffer.from(item.body, 'base64') },
  ]),
);

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const answer =
      req.method === 'POST' && req.url === '/mcp' ? answers.get(Buffer.concat(chunks).toString('utf8')) : undefined;
    if (answer === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"not a recorded request"}');
      return;
    }
    res.writeHead(answer.status, answer.headers.flat());
    res.write(answer.body);
    res.end();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
