/**
 * Random hex from a pooled buffer. node:crypto's randomBytes asks the kernel on every call (a
 * getrandom syscall), and every action asks twice, for its guest's random seed and for a binding's
 * secret nonce: about 55 µs of the main thread per action in a profile of the served bench. Here
 * one syscall fills 4 KiB, each byte handed out once, as node's own randomUUID buffers its bytes.
 */
import { randomBytes, randomFillSync } from "node:crypto";

const pool = Buffer.alloc(4096);
let used = pool.length;

/** `bytes` random bytes as lowercase hex (2 characters each). */
export function randomHex(bytes: number): string {
  if (bytes > pool.length / 4) return randomBytes(bytes).toString("hex");
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const hex = pool.toString("hex", used, used + bytes);
  used += bytes;
  return hex;
}
