// Record ids: a type prefix and a UUIDv7 in hex ("trn_0193…"). The first 48 bits are the creation time in ms, so
// new rows land at the right edge of every index on an id (the id's own, thread_id, turn_id): consecutive
// writes share index pages instead of each touching a random one (bench part 1). The other 74 bits are random,
// so ids stay unguessable; reads are scoped to their owner anyway.
import { randomFillSync } from 'node:crypto';

const POOL_IDS = 256;
const pool = Buffer.alloc(16 * POOL_IDS);
let next = POOL_IDS;

export function newId(prefix: string): string {
  if (next === POOL_IDS) {
    randomFillSync(pool);
    next = 0;
  }
  const bytes = pool.subarray(16 * next, 16 * ++next);
  bytes.writeUIntBE(Date.now(), 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70; // version 7
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC 9562 variant
  return `${prefix}_${bytes.toString('hex')}`;
}
