/**
 * Smart HTTP for tests: `git http-backend` (the CGI program that ships with git) behind a small `node:http` bridge
 * on 127.0.0.1, serving every bare repository under one directory. Optionally requires HTTP Basic credentials, the
 * way a forge does for a private repository, and records the `Authorization` header of every request so a test can
 * prove what a client sent.
 *
 * The CGI exchange follows RFC 3875: request metadata goes in the environment, the body on stdin; the response is
 * CGI headers (`Status:` among them), a blank line, then the body.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the bridge requires of a client. */
export interface GitHttpOptions {
  /** When set, every request must carry `Authorization: Basic base64(username:password)`; others get 401. */
  readonly basicAuth?: { readonly username: string; readonly password: string };
  /** Every request waits for this before it is answered (a remote that has not answered yet). */
  readonly hold?: Promise<void>;
}

/** One request as the bridge received it. */
export interface GitHttpRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly authorization: string | undefined;
  /** The HTTP status the bridge answered. */
  readonly status: number;
}

/** A running bridge. */
export interface GitHttpServer {
  /** `http://127.0.0.1:<port>`; a repository `<dir>/team.git` is at `${base}/team.git`. */
  readonly base: string;
  /** Every request so far, in arrival order. */
  readonly requests: GitHttpRequest[];
  /** Resolves when the first request arrives (answered or still held). */
  readonly firstRequest: Promise<void>;
  /** Stop answering: new connections are refused (the remote becomes unreachable). */
  close(): Promise<void>;
}

/**
 * Starts the bridge on an ephemeral port of 127.0.0.1.
 *
 * @param projectRoot directory holding the bare repositories (`GIT_PROJECT_ROOT`).
 * @param options credentials to require.
 */
export async function startGitHttp(projectRoot: string, options: GitHttpOptions = {}): Promise<GitHttpServer> {
  const requests: GitHttpRequest[] = [];
  const expected =
    options.basicAuth === undefined
      ? undefined
      : `Basic ${Buffer.from(`${options.basicAuth.username}:${options.basicAuth.password}`).toString('base64')}`;
  let arrived!: () => void;
  const firstRequest = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const serve = (request: http.IncomingMessage, response: http.ServerResponse): void => {
    const authorization = request.headers.authorization;
    const record = (status: number): void => {
      requests.push({ method: request.method ?? '', url: request.url ?? '', authorization, status });
    };
    if (expected !== undefined && authorization !== expected) {
      record(401);
      request.resume();
      response
        .writeHead(401, { 'WWW-Authenticate': 'Basic realm="test"', 'Content-Type': 'text/plain' })
        .end('authentication required\n');
      return;
    }
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const child = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env['PATH'] ?? '',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_PROJECT_ROOT: projectRoot,
        GIT_HTTP_EXPORT_ALL: '1',
        REQUEST_METHOD: request.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: request.headers['content-type'] ?? '',
        REMOTE_ADDR: '127.0.0.1',
        ...(request.headers['content-length'] === undefined
          ? {}
          : { CONTENT_LENGTH: request.headers['content-length'] }),
        ...(request.headers['content-encoding'] === undefined
          ? {}
          : { HTTP_CONTENT_ENCODING: request.headers['content-encoding'] }),
        ...(typeof request.headers['git-protocol'] === 'string'
          ? { GIT_PROTOCOL: request.headers['git-protocol'] }
          : {}),
        ...(expected === undefined ? {} : { REMOTE_USER: options.basicAuth?.username ?? '' }),
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    request.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let headersSent = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersSent) {
        response.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n') !== -1 ? head.indexOf('\r\n\r\n') : head.indexOf('\n\n');
      if (end === -1) return;
      const separator = head.indexOf('\r\n\r\n') === end ? 4 : 2;
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/u)) {
        const colon = line.indexOf(':');
        if (colon === -1) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      record(status);
      response.writeHead(status, headers);
      headersSent = true;
      response.write(head.subarray(end + separator));
    });
    child.on('close', () => {
      if (!headersSent) {
        record(502);
        response.writeHead(502).end();
      } else response.end();
    });
    child.on('error', () => {
      if (!headersSent) response.writeHead(500).end();
    });
  };
  const server = http.createServer((request, response) => {
    arrived();
    if (options.hold === undefined) serve(request, response);
    else void options.hold.then(() => serve(request, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    firstRequest,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
