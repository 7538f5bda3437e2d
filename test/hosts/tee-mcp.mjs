// node tee-mcp.mjs LOG -- COMMAND ARGS...: runs an MCP server over stdio between a host and it, relaying every byte
// both ways and appending each line to LOG as {"t": ms since start, "dir": "host->server" | "server->host" | "stderr",
// "line": "..."} (plus "start", "eof", "signal" and "exit" records; the start record also holds "epoch", the wall clock
// at t = 0 in ms), so that tests can read what a host sent and got, and when.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';

const [log, separator, command, ...args] = process.argv.slice(2);
if (log === undefined || separator !== '--' || command === undefined) {
  process.stderr.write('usage: tee-mcp.mjs LOG -- COMMAND ARGS...\n');
  process.exit(2);
}
const started = Date.now();
const record = (dir, line) => appendFileSync(log, `${JSON.stringify({ t: Date.now() - started, dir, line })}\n`);
appendFileSync(
  log,
  `${JSON.stringify({ t: 0, dir: 'start', line: JSON.stringify({ command, args }), epoch: started })}\n`,
);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
const relay = (from, dir, to) => {
  let partial = '';
  from.on('data', (chunk) => {
    to?.write(chunk);
    partial += chunk.toString('utf8');
    let newline;
    while ((newline = partial.indexOf('\n')) !== -1) {
      record(dir, partial.slice(0, newline));
      partial = partial.slice(newline + 1);
    }
  });
};
relay(process.stdin, 'host->server', child.stdin);
relay(child.stdout, 'server->host', process.stdout);
relay(child.stderr, 'stderr', process.stderr);
process.stdin.on('end', () => {
  record('eof', 'the host closed stdin');
  child.stdin.end();
});
child.on('exit', (code, signal) => {
  record('exit', JSON.stringify({ code, signal }));
  process.exit(code ?? 1);
});
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(signal, () => {
    record('signal', signal);
    child.kill(signal);
  });
}
