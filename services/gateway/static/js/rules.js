// @ts-check
// A small port of rackcore (docs/rules.md) for checking a finished match in the page:
// rules options, move shapes, scoring, and a Match that replays moves.

import { Stream, deckForRound, firstDealer, shuffle } from "./rng.js";

/** @typedef {import("./protocol.js").Rules} Rules */

/**
 * A move as the log holds it, validated (`parseMove`): `from` for a draw, `slot` for a place or a repair.
 * @typedef {{ seat: number, act: "draw" | "place" | "throw" | "repair", from: "stock" | "discard" | null, slot: number | null, go_out: boolean }} LogMove
 */

/** @typedef {{ winner: number | null, points: number[] }} RoundResult */

/** A refusal, named by its protocol error code (`bad_rules`, `illegal_move`, `bad_log`…). */
export class RackError extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}
/** @param {string} m */
const malformed = (m) => new RackError("malformed_move", m);
/** @param {string} m */
const illegal = (m) => new RackError("illegal_move", m);
/** @param {string} m */
const logError = (m) => new RackError("bad_log", m);

export const SLOTS = 10;
export const TIEBREAKS = ["went_out", "extra_round"];
/** @type {Record<string, [number, number]>} */
export const RANGES = {
  players: [2, 4],
  target: [50, 10000],
  run_to_go_out: [0, 10],
  max_recycles: [0, 10],
  turn_cap: [50, 1000],
};
export const DEFAULTS = {
  players: 2,
  target: 500,
  bonus: false,
  partners: false,
  run_to_go_out: null, // the default for the player count
  descending: false,
  repair_token: false,
  visible_center: false,
  reshuffle_on_recycle: false,
  max_recycles: 3,
  turn_cap: 200,
  tiebreak: "went_out",
};

/** @param {number} players */
export const defaultRun = (players) => (players === 2 ? 3 : 0);
/** @param {unknown} v @returns {v is number} */
const isInt = (v) => typeof v === "number" && Number.isInteger(v);

/**
 * Full, validated rules from a JSON object (unknown options and bad values refused).
 * @param {any} data
 * @returns {Rules}
 */
export function makeRules(data = {}) {
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new RackError("bad_rules", "rules must be a JSON object");
  }
  for (const key of Object.keys(data)) {
    if (!(key in DEFAULTS)) throw new RackError("bad_rules", `unknown rules option: ${key}`);
  }
  /** @type {Record<string, any>} */
  const r = { ...DEFAULTS, ...data };
  for (const [key, value] of Object.entries(r)) {
    if (key === "run_to_go_out" && value === null) continue;
    if (key === "tiebreak") {
      if (!TIEBREAKS.includes(value)) {
        throw new RackError("bad_rules", `tiebreak must be one of ${TIEBREAKS.join(", ")}`);
      }
    } else if (key in RANGES) {
      const [low, high] = RANGES[key];
      if (!isInt(value) || value < low || value > high) {
        throw new RackError("bad_rules", `${key} must be an integer from ${low} to ${high}`);
      }
    } else if (typeof value !== "boolean") {
      throw new RackError("bad_rules", `${key} must be true or false`);
    }
  }
  if (r.partners && r.players !== 4) throw new RackError("bad_rules", "partners needs exactly 4 players");
  if (r.run_to_go_out === null) r.run_to_go_out = defaultRun(r.players);
  return /** @type {Rules} */ (r);
}

/** @param {Rules} rules */
export const deckSize = (rules) => 10 * rules.players + 20;
/** How many sides score: the seats, or two teams with partners. @param {Rules} rules */
export const sides = (rules) => (rules.partners ? 2 : rules.players);
/** @param {Rules} rules @param {number} seat */
export const sideOf = (rules, seat) => (rules.partners ? seat % 2 : seat);

// -- scoring -------------------------------------------------------------------

/** How many cards are in order from slot 5. @param {number[]} rack */
export function scoredLength(rack, descending = false) {
  let n = 1;
  for (let i = 1; i < rack.length; i++) {
    if (rack[i] > rack[i - 1] !== !descending || rack[i] === rack[i - 1]) break;
    n += 1;
  }
  return n;
}

/** The longest run of consecutive numbers side by side. @param {number[]} rack */
export function longestRun(rack, descending = false) {
  const step = descending ? -1 : 1;
  let best = 1;
  let run = 1;
  for (let i = 1; i < rack.length; i++) {
    run = rack[i] === rack[i - 1] + step ? run + 1 : 1;
    best = Math.max(best, run);
  }
  return best;
}

/** @param {number[]} rack */
export function isWinning(rack, runNeeded = 0, descending = false) {
  if (scoredLength(rack, descending) !== rack.length) return false;
  return runNeeded <= 1 || longestRun(rack, descending) >= runNeeded;
}

/** @param {number} run */
export function bonusForRun(run) {
  if (run >= 6) return 400;
  /** @type {Record<number, number>} */
  const bonus = { 3: 50, 4: 100, 5: 200 };
  return bonus[run] || 0;
}

/** @param {number[]} rack */
export const rackPoints = (rack, descending = false) => 5 * scoredLength(rack, descending);

// -- moves ---------------------------------------------------------------------

const MOVE_KEYS = ["seat", "act", "from", "slot", "go_out", "by"];

/**
 * A validated move {seat, act, from, slot, go_out} from its rackem-match/1 JSON.
 * @param {any} data
 * @returns {LogMove}
 */
export function parseMove(data) {
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw malformed("a move must be a JSON object");
  }
  const unknown = Object.keys(data)
    .filter((k) => !MOVE_KEYS.includes(k))
    .sort();
  if (unknown.length) throw malformed(`unknown move field: ${unknown[0]}`);
  if (!("seat" in data) || !("act" in data)) throw malformed("a move needs seat and act");
  const move = {
    seat: data.seat,
    act: data.act,
    from: data.from ?? null,
    slot: data.slot ?? null,
    go_out: data.go_out ?? true,
  };
  if (!isInt(move.seat) || move.seat < 0 || move.seat > 3) throw malformed("seat must be an integer from 0 to 3");
  if (!["draw", "place", "throw", "repair"].includes(move.act)) {
    throw malformed("act must be one of draw, place, throw, repair");
  }
  if ((move.act === "draw") !== (move.from !== null)) throw malformed("a draw, and only a draw, names its source");
  if (move.from !== null && !["stock", "discard"].includes(move.from)) throw malformed("from must be stock or discard");
  const wantsSlot = move.act === "place" || move.act === "repair";
  if (wantsSlot !== (move.slot !== null)) throw malformed("place and repair, and only they, name a slot");
  if (move.slot !== null) {
    const top = move.act === "repair" ? SLOTS - 2 : SLOTS - 1;
    if (!isInt(move.slot) || move.slot < 0 || move.slot > top) throw malformed(`slot must be an integer from 0 to ${top}`);
  }
  if (typeof move.go_out !== "boolean") throw malformed("go_out must be true or false");
  if (!move.go_out && move.act !== "place" && move.act !== "throw") throw malformed("go_out applies to place and throw only");
  if (data.by !== undefined && data.by !== null && !["human", "bot", "cover"].includes(data.by)) {
    throw malformed("by must be one of human, bot, cover");
  }
  return move;
}

// -- the match -----------------------------------------------------------------

/** A match replayed from a seed (Uint8Array) or stacked decks. Use `await Match.create(...)`. */
export class Match {
  constructor() {
    /** @type {Rules} the match's rules (docs/protocol.md, "Rules"); set by `create` */
    this.rules = /** @type {any} */ (null);
    /** @type {number} */
    this.firstDealer = 0;
    /** @type {Uint8Array | null} */
    this.seed = null;
    /** @type {number[][] | null} */
    this.decks = null;
    /** @type {number[]} */
    this.scores = [];
    /** @type {RoundResult[]} */
    this.rounds = [];
    this.moves = 0;
    /** @type {number | null} the winning seat (or team), once the match is over */
    this.winner = null;
    this.roundNo = 0;
    // The round being played (set by `deal`).
    this.dealer = 0;
    /** @type {number[][]} */
    this.racks = [];
    /** @type {number[]} */
    this.discard = [];
    /** @type {number[]} */
    this.stock = [];
    this.turn = 0;
    /** @type {"draw" | "resolve" | "round_over" | "match_over"} */
    this.phase = "draw";
    /** @type {number | null} */
    this.held = null;
    /** @type {"stock" | "discard" | null} */
    this.heldFrom = null;
    this.recycles = 0;
    /** @type {number[]} */
    this.turnsTaken = [];
    /** @type {boolean[]} */
    this.repairTokens = [];
  }

  /**
   * @param {Rules} rules
   * @param {{ seed?: Uint8Array | null, decks?: number[][] | null, dealer?: number | null }} [start]
   */
  static async create(rules, { seed = null, decks = null, dealer = null } = {}) {
    const m = new Match();
    m.rules = rules;
    const n = rules.players;
    if (decks !== null) {
      if (seed !== null) throw logError("a match has either a seed or stacked decks, not both");
      if (rules.reshuffle_on_recycle) throw logError("stacked decks cannot use reshuffle_on_recycle");
      if (!isInt(dealer) || dealer < 0 || dealer >= n) throw logError(`first_dealer must be an integer from 0 to ${n - 1}`);
      m.firstDealer = dealer;
    } else {
      if (!seed || seed.length !== 32) throw logError("a seed is 32 bytes");
      m.firstDealer = await firstDealer(seed, n);
    }
    m.seed = seed;
    m.decks = decks;
    m.scores = new Array(n).fill(0);
    m.rounds = [];
    m.moves = 0;
    m.winner = null;
    m.roundNo = 0;
    await m.deal(1);
    return m;
  }

  get players() {
    return this.rules.players;
  }

  /** Apply a validated move (throws RackError when it is not legal now). @param {LogMove} move */
  async apply(move) {
    this.check(move);
    if (this.phase === "round_over") await this.deal(this.roundNo + 1);
    if (move.act === "draw") await this.draw(move);
    else if (move.act === "repair") this.repair(move);
    else this.finishTurn(move);
    this.moves += 1;
  }

  canRepair() {
    return this.phase === "resolve" && this.rules.repair_token && this.repairTokens[this.turn];
  }

  /** @param {LogMove} move */
  check(move) {
    if (this.phase === "match_over") throw new RackError("match_over", "the match is over");
    if (move.seat !== this.turn) {
      throw new RackError("not_your_turn", `it is seat ${this.turn}'s turn, not seat ${move.seat}'s`);
    }
    if (this.phase === "draw" || this.phase === "round_over") {
      if (move.act !== "draw") throw illegal("draw first: from the stock or the discard pile");
      if (move.from === "discard" && this.phase === "draw" && !this.discard.length) {
        throw illegal("the discard pile is empty");
      }
      return;
    }
    if (move.act === "draw") throw illegal("you already drew: place or throw the card you hold");
    if (move.act === "throw" && this.heldFrom !== "stock") throw illegal("a card taken from the discard pile must be placed");
    if (move.act === "repair" && !this.canRepair()) throw illegal("no repair token to spend");
  }

  /** @param {number} roundNo */
  async deal(roundNo) {
    const n = this.players;
    const size = deckSize(this.rules);
    let deck;
    if (this.decks !== null) {
      if (roundNo > this.decks.length) throw logError(`the log has no stacked deck for round ${roundNo}`);
      deck = Array.from(this.decks[roundNo - 1]);
      const sorted = [...deck].sort((a, b) => a - b);
      if (sorted.length !== size || sorted.some((c, i) => c !== i + 1)) {
        throw logError(`the deck of round ${roundNo} is not a permutation of 1..${size}`);
      }
    } else {
      deck = await deckForRound(/** @type {Uint8Array} */ (this.seed), roundNo, size);
    }
    this.roundNo = roundNo;
    this.dealer = (this.firstDealer + roundNo - 1) % n;
    this.racks = Array.from({ length: n }, () => new Array(SLOTS).fill(0));
    let pos = 0;
    for (let slot = SLOTS - 1; slot >= 0; slot--) {
      for (let k = 1; k <= n; k++) this.racks[(this.dealer + k) % n][slot] = deck[pos++];
    }
    this.discard = [deck[pos]];
    this.stock = deck.slice(pos + 1);
    this.turn = (this.dealer + 1) % n;
    this.phase = "draw";
    this.held = null;
    this.heldFrom = null;
    this.recycles = 0;
    this.turnsTaken = new Array(n).fill(0);
    this.repairTokens = new Array(n).fill(this.rules.repair_token);
  }

  /** @param {LogMove} move */
  async draw(move) {
    let card;
    if (move.from === "discard") {
      card = this.discard.pop();
    } else {
      if (!this.stock.length) {
        if (this.recycles >= this.rules.max_recycles) {
          this.endRound(null);
          return;
        }
        await this.recycle();
      }
      card = this.stock.shift();
    }
    this.held = /** @type {number} */ (card);
    this.heldFrom = move.from;
    this.phase = "resolve";
  }

  async recycle() {
    this.recycles += 1;
    const top = /** @type {number} */ (this.discard.pop());
    let stock = this.discard;
    if (this.rules.reshuffle_on_recycle) {
      stock = await shuffle(stock, new Stream(/** @type {Uint8Array} */ (this.seed), `recycle/${this.roundNo}/${this.recycles}`));
    }
    this.stock = stock;
    this.discard = [top];
  }

  /** @param {LogMove} move */
  repair(move) {
    const rack = this.racks[move.seat];
    const i = /** @type {number} */ (move.slot);
    [rack[i], rack[i + 1]] = [rack[i + 1], rack[i]];
    this.repairTokens[move.seat] = false;
  }

  /** @param {LogMove} move */
  finishTurn(move) {
    const seat = move.seat;
    const held = /** @type {number} */ (this.held);
    let out;
    if (move.act === "place") {
      const slot = /** @type {number} */ (move.slot);
      out = this.racks[seat][slot];
      this.racks[seat][slot] = held;
    } else {
      out = held;
    }
    this.discard.push(out);
    this.held = null;
    this.heldFrom = null;
    this.turnsTaken[seat] += 1;
    const r = this.rules;
    if (move.go_out && isWinning(this.racks[seat], r.run_to_go_out, r.descending)) {
      this.endRound(seat);
    } else if (this.turnsTaken[seat] >= r.turn_cap) {
      this.endRound(null);
    } else {
      this.turn = (seat + 1) % this.players;
      this.phase = "draw";
    }
  }

  /** @param {number | null} winner the seat that went out, if any */
  endRound(winner) {
    const r = this.rules;
    const points = this.racks.map((rack, seat) =>
      seat === winner ? 75 + (r.bonus ? bonusForRun(longestRun(rack, r.descending)) : 0) : rackPoints(rack, r.descending),
    );
    points.forEach((p, seat) => {
      this.scores[seat] += p;
    });
    this.rounds.push({ winner, points });
    this.held = null;
    this.heldFrom = null;
    this.turn = (this.dealer + 2) % this.players;
    this.phase = "round_over";
    this.winner = this.matchWinner(winner);
    if (this.winner !== null) this.phase = "match_over";
  }

  sideTotals() {
    const totals = new Array(sides(this.rules)).fill(0);
    this.scores.forEach((s, seat) => {
      totals[sideOf(this.rules, seat)] += s;
    });
    return totals;
  }

  /** @param {number | null} wentOut */
  matchWinner(wentOut) {
    const r = this.rules;
    const totals = this.sideTotals();
    const contenders = totals.map((_t, s) => s).filter((s) => totals[s] >= r.target);
    if (!contenders.length) return null;
    const top = Math.max(...contenders.map((s) => totals[s]));
    const tied = contenders.filter((s) => totals[s] === top);
    if (tied.length === 1) return tied[0];
    if (r.tiebreak === "extra_round") return null;
    if (wentOut !== null && tied.includes(sideOf(r, wentOut))) return sideOf(r, wentOut);
    return Math.min(...tied);
  }
}
