/**
 * The hashing worker's entry (its own bundled file, `dist/hash-worker.js`): hashes the large files the walk hands
 * over, on the second core, while the walk goes on (docs/ARCHITECTURE.md, "The walk"). It reads and hashes only;
 * it never parses or runs anything. One message in (`{ id, path }`), one out (`{ id, hashed }` or `{ id, error }`).
 */
import { parentPort } from 'node:worker_threads';
import { hashFileChunkedSync, NotHashableError } from './digest.js';

/** A request to the worker. */
export interface HashRequest {
  readonly id: number;
  readonly path: string;
}

/** The worker's answer. */
export type HashReply =
  | {
      readonly id: number;
      readonly digest: Uint8Array;
      readonly size: number;
      readonly identity: { size: number; mtimeMs: number; ctimeMs: number; ino: number; dev: number };
      readonly privateKey: boolean;
    }
  | { readonly id: number; readonly error: string; readonly reason: 'special' | 'io'; readonly code?: string };

parentPort?.on('message', (request: HashRequest) => {
  let reply: HashReply;
  try {
    const hashed = hashFileChunkedSync(request.path);
    reply = { id: request.id, digest: hashed.digest, size: hashed.size, identity: hashed.identity, privateKey: hashed.privateKey };
  } catch (error) {
    reply =
      error instanceof NotHashableError
        ? { id: request.id, error: error.message, reason: error.reason, ...(error.code === undefined ? {} : { code: error.code }) }
        : { id: request.id, error: error instanceof Error ? error.message : String(error), reason: 'io' };
  }
  parentPort?.postMessage(reply);
});
