/**
 * The guest's clock and random numbers, made replayable. An action's Date.now()/new Date() and
 * Math.random() are served here (the bridge replaces the guest's own): the clock returns the
 * readings a previous attempt of the run recorded, in order, then the real time, and records
 * every reading it serves; Math.random draws from a generator seeded per run (sfc32 over a
 * 128-bit seed), so the same run draws the same numbers however often it is replayed.
 */
import type { GuestNondet } from "./protocol";

export class GuestNondetSource {
  private readonly replay: number[];
  private replayed = 0;
  /** Readings served since the last `take()`. */
  private log: number[] = [];
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(nondet: GuestNondet | undefined) {
    this.replay = nondet?.clock ?? [];
    const seed = (nondet?.seed ?? "").padEnd(32, "0").slice(0, 32);
    const word = (i: number) => Number.parseInt(seed.slice(i * 8, i * 8 + 8), 16) | 0;
    this.a = word(0);
    this.b = word(1);
    this.c = word(2);
    this.d = word(3) || 0x9e3779b9;
    if (!nondet?.seed) {
      // No seed given (a caller that does not replay): any seed will do.
      this.a = (Math.random() * 2 ** 32) | 0;
      this.b = (Math.random() * 2 ** 32) | 0;
    }
    for (let i = 0; i < 12; i++) this.random();
  }

  /** Date.now() for the guest. */
  now(): number {
    const value = this.replayed < this.replay.length ? (this.replay[this.replayed++] as number) : Date.now();
    this.log.push(value);
    return value;
  }

  /** Math.random() for the guest: sfc32, 32 bits of the state as a double in [0, 1). */
  random(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** The readings since the previous take (sent with the guest's next capability call). */
  take(): number[] | undefined {
    if (this.log.length === 0) return undefined;
    const out = this.log;
    this.log = [];
    return out;
  }
}
