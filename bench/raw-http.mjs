// A lean HTTP/1.1 load client for the benchmarks: one keep-alive connection per client, each request encoded once
// and written as bytes, each answer read with just enough parsing to know where it ends (Content-Length or chunked).
// node:http's client costs about as much CPU per request as the server it measures, so on a 2-core machine a run
// with it measures the client as much as the server; this one costs a fraction of that.
import { connect } from 'node:net';

/**
 * Encodes one POST request.
 *
 * @param {string} path the request target.
 * @param {Record<string, string>} headers header names and values (Host, Content-Length and keep-alive are added).
 * @param {string} body the UTF-8 body.
 * @returns {Buffer} the request's bytes.
 */
export function encodePost(path, headers, body) {
  const bytes = Buffer.from(body, 'utf8');
  const lines = [`POST ${path} HTTP/1.1`, 'host: 127.0.0.1', `content-length: ${bytes.length}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), bytes]);
}

/** One keep-alive connection to 127.0.0.1:`port` that sends one request at a time. */
export class RawConnection {
  #socket;
  #buffer = Buffer.alloc(0);
  /** The request waiting for its answer: { resolve, reject }. */
  #waiting;
  #ready;

  constructor(port) {
    this.#socket = connect({ host: '127.0.0.1', port, noDelay: true });
    this.#ready = new Promise((resolve, reject) => {
      this.#socket.once('connect', resolve);
      this.#socket.once('error', reject);
    });
    this.#socket.on('data', (chunk) => {
      this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
      this.#deliver();
    });
    this.#socket.on('error', (error) => this.#fail(error));
    this.#socket.on('close', () => this.#fail(new Error('connection closed')));
  }

  /**
   * Sends `bytes` (an {@link encodePost} request) and reads its answer.
   *
   * @returns {Promise<{ status: number, text: string }>} the status and the body as UTF-8 (chunked bodies joined).
   */
  async request(bytes) {
    await this.#ready;
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
      this.#socket.write(bytes);
    });
  }

  close() {
    this.#socket.destroy();
  }

  #fail(error) {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.reject(error);
  }

  /** Resolves the waiting request once its whole answer is in the buffer. */
  #deliver() {
    const buffer = this.#buffer;
    const end = buffer.indexOf('\r\n\r\n');
    if (end < 0 || this.#waiting === undefined) return;
    const head = buffer.toString('latin1', 0, end);
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length: *(\d+)/iu.exec(head)?.[1];
    let at = end + 4;
    let body;
    if (length !== undefined) {
      if (buffer.length < at + Number(length)) return;
      body = buffer.subarray(at, at + Number(length));
      at += Number(length);
    } else {
      // Chunked: <hex size>\r\n<data>\r\n … 0\r\n\r\n
      const chunks = [];
      for (;;) {
        const line = buffer.indexOf('\r\n', at);
        if (line < 0) return;
        const size = parseInt(buffer.toString('latin1', at, line), 16);
        if (buffer.length < line + 2 + size + 2) return;
        chunks.push(buffer.subarray(line + 2, line + 2 + size));
        at = line + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(chunks);
    }
    this.#buffer = buffer.subarray(at);
    const { resolve } = this.#waiting;
    this.#waiting = undefined;
    resolve({ status, text: body.toString('utf8') });
  }
}
