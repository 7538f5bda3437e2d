/**
 * A deterministic zip archive (APPNOTE 6.3.10, the subset every unzip reads): the same files in the same order give
 * the same bytes on every machine, Node version and run. Entries are *stored* (method 0), not deflated: compressed
 * bytes would depend on the zlib build (Node bundles Chromium's fork, with CPU-specific paths), and a digest that
 * differs between replicas is refused by the installer. Compression is left to the transport (a CDN's or proxy's
 * `Content-Encoding`, which `fetch` undoes before the installer hashes the bytes). Fixed fields: time 00:00 and date
 * 1980-01-01 (the zip epoch), mode `0644` regular file (made by Unix), UTF-8 names (flag bit 11), no extra fields,
 * no comments, no zip64 (a skill holds at most 512 files and 16 MiB: SEP-2640 "Limits per skill").
 */
import { crc32 } from 'node:zlib';

/** One file of an archive: its `/`-separated path inside the archive and its bytes. */
export interface ArchiveFile {
  readonly path: string;
  readonly bytes: Uint8Array;
}

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
/** Version 2.0 (needed for nothing more than stored entries with UTF-8 names). */
const VERSION = 20;
/** Made by Unix (high byte 3), version 2.0: the external attributes carry a Unix mode. */
const MADE_BY = (3 << 8) | VERSION;
const UTF8_NAMES = 0x0800;
/** 1980-01-01 in MS-DOS date format ((year - 1980) << 9 | month << 5 | day). */
const DOS_DATE = (1 << 5) | 1;
/** A regular file, `rw-r--r--`, in the high 16 bits. */
const EXTERNAL_ATTRIBUTES = 0o100644 * 0x10000;

/**
 * Writes a zip archive of `files`, stored, in the order given.
 *
 * @param files at most 65,535 files, each under 4 GiB, paths unique and relative (the caller's order is kept: pass a
 *   sorted list for a deterministic archive).
 * @returns the archive's bytes.
 * @throws RangeError when the archive would need zip64.
 */
export function storedZip(files: readonly ArchiveFile[]): Buffer {
  if (files.length > 0xffff) throw new RangeError('a zip archive without zip64 holds at most 65,535 files');
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const file of files) {
    const name = Buffer.from(file.path, 'utf8');
    const size = file.bytes.byteLength;
    if (size > 0xfffffffe || offset > 0xfffffffe) throw new RangeError('the archive would need zip64');
    const crc = crc32(file.bytes);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(LOCAL_HEADER, 0);
    local.writeUInt16LE(VERSION, 4);
    local.writeUInt16LE(UTF8_NAMES, 6);
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt16LE(0, 10); // 00:00:00
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(size, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(CENTRAL_HEADER, 0);
    entry.writeUInt16LE(MADE_BY, 4);
    entry.writeUInt16LE(VERSION, 6);
    entry.writeUInt16LE(UTF8_NAMES, 8);
    entry.writeUInt16LE(0, 10);
    entry.writeUInt16LE(0, 12);
    entry.writeUInt16LE(DOS_DATE, 14);
    entry.writeUInt32LE(crc, 16);
    entry.writeUInt32LE(size, 20);
    entry.writeUInt32LE(size, 24);
    entry.writeUInt16LE(name.length, 28);
    // extra length, comment length, disk number, internal attributes: 0
    entry.writeUInt32LE(EXTERNAL_ATTRIBUTES, 38);
    entry.writeUInt32LE(offset, 42);
    parts.push(local, name, Buffer.from(file.bytes.buffer, file.bytes.byteOffset, size));
    central.push(entry, name);
    offset += 30 + name.length + size;
  }
  const centralSize = central.reduce((sum, part) => sum + part.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END_OF_CENTRAL_DIRECTORY, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, ...central, end]);
}
