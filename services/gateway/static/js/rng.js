// @ts-check
// The rackem/v1 randomness (docs/rules.md, "Randomness"), a port of rackcore/_rng.py.
// Every chance in a match comes from one 32-byte seed; this re-derives it in the page.

import { sha256 } from "./sha256.js";

const PREFIX = new TextEncoder().encode("rackem/v1/");
const TWO64 = 1n << 64n;

/** @param {unknown} hex @returns {Uint8Array} */
export function hexToBytes(hex) {
  if (typeof hex !== "string" || hex.length % 2 || /[^0-9a-fA-F]/.test(hex)) {
    throw new Error("not a hex string");
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** @param {Uint8Array} bytes */
export function bytesToHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** @param {...Uint8Array} parts */
function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** 8-byte big-endian integers from SHA-256(seed ‖ "rackem/v1/" ‖ label ‖ counter). */
export class Stream {
  /** @param {Uint8Array} seed @param {string} label */
  constructor(seed, label) {
    if (!/^[\x00-\x7f]*$/.test(label)) throw new Error("a stream label is ASCII");
    this.base = concat(seed, PREFIX, new TextEncoder().encode(label));
    this.counter = 0n;
    /** @type {bigint[]} */
    this.buffer = [];
  }

  /** @returns {Promise<bigint>} */
  async nextU64() {
    if (!this.buffer.length) {
      const counter = new Uint8Array(8);
      new DataView(counter.buffer).setBigUint64(0, this.counter);
      this.counter += 1n;
      const block = new DataView((await sha256(concat(this.base, counter))).buffer);
      this.buffer = [0, 8, 16, 24].map((i) => block.getBigUint64(i));
    }
    return /** @type {bigint} */ (this.buffer.shift());
  }

  /** Uniform in 0..n-1, rejecting the biased top of the 64-bit range. @param {number} n */
  async below(n) {
    const big = BigInt(n);
    const limit = TWO64 - (TWO64 % big);
    for (;;) {
      const x = await this.nextU64();
      if (x < limit) return Number(x % big);
    }
  }
}

/** Fisher-Yates as docs/rules.md fixes it: for i from N-1 down to 1, swap i and below(i+1). */
/**
 * @template T
 * @param {Iterable<T>} items
 * @param {Stream} stream
 * @returns {Promise<T[]>}
 */
export async function shuffle(items, stream) {
  const out = Array.from(items);
  for (let i = out.length - 1; i > 0; i--) {
    const j = await stream.below(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** The shuffled deck of round `roundNo` (1-based), top card first. @param {Uint8Array} seed @param {number} roundNo @param {number} size */
export function deckForRound(seed, roundNo, size) {
  const cards = Array.from({ length: size }, (_, i) => i + 1);
  return shuffle(cards, new Stream(seed, `shuffle/${roundNo}`));
}

/** The seat that deals round 1. @param {Uint8Array} seed @param {number} players */
export function firstDealer(seed, players) {
  return new Stream(seed, "dealer").below(players);
}

/** SHA-256(seed) in hex: published when a match starts, checked against the revealed seed. */
/** @param {Uint8Array} seed */
export async function commitment(seed) {
  return bytesToHex(await sha256(seed));
}
