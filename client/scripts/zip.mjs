// A small reader for .zip files (what a .vsix is): the central directory, and an entry's
// bytes (stored or deflated). Enough for check-vsix; no ZIP64, no encryption.
import { readFileSync } from "node:fs";
import { inflateRawSync } from "node:zlib";

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

export function readZip(file) {
  const buf = readFileSync(file);
  // The end-of-central-directory record is in the last 64 KiB + 22 bytes.
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65557); i--) {
    if (buf.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) {
    throw new Error(`${file}: not a zip file (no end of central directory)`);
  }
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const entries = new Map();
  for (let n = 0; n < count; n++) {
    if (buf.readUInt32LE(p) !== CENTRAL) {
      throw new Error(`${file}: bad central directory entry ${n}`);
    }
    const method = buf.readUInt16LE(p + 10);
    const compressedSize = buf.readUInt32LE(p + 20);
    const size = buf.readUInt32LE(p + 24);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const localOffset = buf.readUInt32LE(p + 42);
    const name = buf.toString("utf8", p + 46, p + 46 + nameLen);
    entries.set(name, { name, method, compressedSize, size, localOffset });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return {
    size: buf.length,
    entries,
    read(name) {
      const e = entries.get(name);
      if (!e) {
        throw new Error(`${file}: no entry ${name}`);
      }
      if (buf.readUInt32LE(e.localOffset) !== LOCAL) {
        throw new Error(`${file}: bad local header for ${name}`);
      }
      const start = e.localOffset + 30 + buf.readUInt16LE(e.localOffset + 26) + buf.readUInt16LE(e.localOffset + 28);
      const data = buf.subarray(start, start + e.compressedSize);
      if (e.method === 0) {
        return Buffer.from(data);
      }
      if (e.method === 8) {
        return inflateRawSync(data);
      }
      throw new Error(`${file}: ${name} uses compression method ${e.method}`);
    },
  };
}
