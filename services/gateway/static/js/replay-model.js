// @ts-check
// A finished match as the replay viewer steps through it: the log is checked by the
// in-page verifier (js/verify.js) first, then replayed once more through the rules
// port (js/rules.js), keeping a snapshot of the whole table after every deal and
// every move. Nothing here touches the page.

import { RackError, isWinning, parseMove, sideOf } from "./rules.js";
import { matchFromLog, verifyLog } from "./verify.js";

/** @typedef {import("./protocol.js").Rules} Rules */
/** @typedef {import("./rules.js").LogMove} LogMove */
/** @typedef {import("./rules.js").Match} Match */
/** @typedef {import("./rules.js").RoundResult} RoundResult */
/** @typedef {import("./verify.js").Report} Report */

/** A logged move with who decided it. @typedef {LogMove & { by: string | null }} ReplayMove */

/**
 * The table at one step: after a deal, or after a move.
 * @typedef {ReturnType<typeof snapshot>} Snapshot
 * @typedef {Snapshot & { kind: "deal" | "move", moveNo: number, text: string, seat?: number, by?: string | null,
 *   act?: string, changed?: number[], ended?: RoundResult | null }} Frame
 */

/**
 * A verified log, as the viewer steps through it.
 * @typedef {{ rules: Rules, moves: ReplayMove[], frames: Frame[], report: Report, seeded: boolean, committed: boolean }} Replay
 */

export const MAX_LOG_BYTES = 4 * 1024 * 1024;

/** @type {Record<string, string>} */
const WHO = { human: "human", bot: "computer", cover: "covering computer" };

/** Who decided a move, in words ("" when the log does not say). @param {string | null | undefined} by */
export const whoDecided = (by) => WHO[by || ""] || "";

/** A log the viewer will not replay; `message` is for people. */
export class ReplayRefused extends Error {}

/** @param {number} slot */
const mark = (slot) => (slot + 1) * 5;

/** The whole table now, copied. @param {Match} m */
function snapshot(m) {
  return {
    round: m.roundNo,
    dealer: m.dealer,
    racks: m.racks.map((rack) => [...rack]),
    discard: [...m.discard],
    stock: m.stock.length,
    held: m.held,
    heldFrom: m.heldFrom,
    turn: m.turn,
    phase: m.phase,
    scores: [...m.scores],
    rounds: m.rounds.map((r) => ({ winner: r.winner, points: [...r.points] })),
    recycles: m.recycles,
    repairTokens: [...m.repairTokens],
    winner: m.winner,
  };
}

/**
 * Text (after the seat's name) for one move, from the state before and after it.
 * @param {ReplayMove} move
 * @param {Snapshot} before
 * @param {Snapshot} after
 * @param {Rules} rules
 */
function describe(move, before, after, rules) {
  const slot = move.slot ?? 0; // a place's and a repair's
  const ended = after.rounds.length > before.rounds.length ? after.rounds[after.rounds.length - 1] : null;
  let text;
  if (move.act === "draw" && move.from === "discard") {
    text = `took ${before.discard[before.discard.length - 1]} from the discard pile`;
  } else if (move.act === "draw") {
    if (ended) {
      text = `found the stock empty after ${before.recycles} turnover${before.recycles === 1 ? "" : "s"} of the discard pile: the round ends with no winner`;
    } else if (after.recycles > before.recycles) {
      text = `found the stock empty: the discard pile was turned over into a new stock (turnover ${after.recycles} of ${rules.max_recycles}); drew ${after.held}`;
    } else {
      text = `drew ${after.held} from the stock`;
    }
  } else if (move.act === "place") {
    text = `put ${before.held} in slot ${mark(slot)}, discarding ${before.racks[move.seat][slot]}`;
  } else if (move.act === "throw") {
    text = `threw ${before.held} onto the discard pile`;
  } else {
    text = `used the repair token: swapped slots ${mark(slot)} and ${mark(slot + 1)}`;
  }
  if (move.act === "place" || move.act === "throw") {
    const rack = after.racks[move.seat];
    if (ended && ended.winner === move.seat) text += " — and went out!";
    else if (ended) text += ` — the turn limit (${rules.turn_cap}) ends the round with no winner`;
    else if (!move.go_out && isWinning(rack, rules.run_to_go_out, rules.descending)) {
      text += " — and kept playing instead of going out";
    }
  }
  return text;
}

/** The slots a move changed. @param {LogMove} move @returns {number[]} */
function changedSlots(move) {
  const slot = move.slot ?? 0;
  if (move.act === "place") return [slot];
  if (move.act === "repair") return [slot, slot + 1];
  return [];
}

/**
 * Verify a parsed `rackem-match/1` log and build its frames. Resolves to
 * {rules, moves, frames, report}; frame 0 is round 1 as dealt, then one frame per
 * move, with a frame for each later deal. Rejects with ReplayRefused.
 * @param {any} log a parsed file, not yet checked
 * @returns {Promise<Replay>}
 */
export async function buildReplay(log) {
  let report;
  try {
    report = await verifyLog(log);
  } catch (exc) {
    if (exc instanceof RackError) throw new ReplayRefused(`This is not a valid match log: ${exc.message}.`);
    throw exc;
  }
  if (!report.valid) {
    const error = report.error || { move_index: null, reason: "" };
    const at = error.move_index;
    const where = at === null ? error.reason : `move ${at + 1} is wrong (${error.reason})`;
    throw new ReplayRefused(`This match log does not verify, so it cannot be replayed: ${where}.`);
  }
  const m = await matchFromLog(log);
  const rules = m.rules;
  /** @type {ReplayMove[]} */
  const moves = log.moves.map((/** @type {any} */ data) => ({ ...parseMove(data), by: data.by ?? null }));
  /** @type {Frame[]} */
  const frames = [{ kind: "deal", moveNo: 0, text: "Round 1 dealt", ...snapshot(m) }];
  for (let index = 0; index < moves.length; index++) {
    const move = moves[index];
    if (m.phase === "round_over") {
      await m.deal(m.roundNo + 1);
      frames.push({
        kind: "deal",
        moveNo: index,
        text: `Round ${m.roundNo} dealt`,
        ...snapshot(m),
      });
    }
    const before = frames[frames.length - 1];
    await m.apply(move);
    const after = snapshot(m);
    frames.push({
      kind: "move",
      moveNo: index + 1,
      seat: move.seat,
      by: move.by,
      act: move.act,
      changed: changedSlots(move),
      text: describe(move, before, after, rules),
      ended: after.rounds.length > before.rounds.length ? after.rounds[after.rounds.length - 1] : null,
      ...after,
    });
  }
  const seeded = "seed" in log;
  return { rules, moves, frames, report, seeded, committed: seeded && "commitment" in log };
}

/** Parse the text of a log file; rejects with ReplayRefused for what is not JSON. @param {string} text @returns {any} */
export function parseLogText(text) {
  if (text.length > MAX_LOG_BYTES) throw new ReplayRefused("This file is too large to be a match log.");
  try {
    return JSON.parse(text);
  } catch {
    throw new ReplayRefused("This file is not a match log: it is not JSON.");
  }
}

/**
 * The winner of a finished match in words (a seat's name, or a team with partners).
 * @param {Rules} rules
 * @param {number | null | undefined} winner
 * @param {(seat: number) => string} name
 */
export function winnerText(rules, winner, name) {
  if (winner === null || winner === undefined) return null;
  if (!rules.partners) return `${name(winner)} wins the match`;
  const seats = [0, 1, 2, 3].filter((s) => sideOf(rules, s) === winner).map(name);
  return `Team ${winner === 0 ? "A" : "B"} (${seats.join(" + ")}) wins the match`;
}
