// @ts-check
// A finished match as the replay viewer steps through it: the log is checked by the
// in-page verifier (js/verify.js) first, then replayed once more through the rules
// port (js/rules.js), keeping a snapshot of the whole table after every deal and
// every move. Nothing here touches the page.

import { RackError, isWinning, parseMove, sideOf } from "./rules.js";
import { matchFromLog, verifyLog } from "./verify.js";

export const MAX_LOG_BYTES = 4 * 1024 * 1024;

const WHO = { human: "human", bot: "computer", cover: "covering computer" };

/** Who decided a move, in words ("" when the log does not say). */
export const whoDecided = (by) => WHO[by] || "";

/** A log the viewer will not replay; `message` is for people. */
export class ReplayRefused extends Error {}

const mark = (slot) => (slot + 1) * 5;

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

/** Text (after the seat's name) for one move, from the state before and after it. */
function describe(move, before, after, rules) {
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
    text = `put ${before.held} in slot ${mark(move.slot)}, discarding ${before.racks[move.seat][move.slot]}`;
  } else if (move.act === "throw") {
    text = `threw ${before.held} onto the discard pile`;
  } else {
    text = `used the repair token: swapped slots ${mark(move.slot)} and ${mark(move.slot + 1)}`;
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

function changedSlots(move) {
  if (move.act === "place") return [move.slot];
  if (move.act === "repair") return [move.slot, move.slot + 1];
  return [];
}

/**
 * Verify a parsed `rackem-match/1` log and build its frames. Resolves to
 * {rules, moves, frames, report}; frame 0 is round 1 as dealt, then one frame per
 * move, with a frame for each later deal. Rejects with ReplayRefused.
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
    const at = report.error.move_index;
    const where = at === null ? report.error.reason : `move ${at + 1} is wrong (${report.error.reason})`;
    throw new ReplayRefused(`This match log does not verify, so it cannot be replayed: ${where}.`);
  }
  const m = await matchFromLog(log);
  const rules = m.rules;
  const moves = log.moves.map((data) => ({ ...parseMove(data), by: data.by ?? null }));
  /** @type {any[]} */
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

/** Parse the text of a log file; rejects with ReplayRefused for what is not JSON. */
export function parseLogText(text) {
  if (text.length > MAX_LOG_BYTES) throw new ReplayRefused("This file is too large to be a match log.");
  try {
    return JSON.parse(text);
  } catch {
    throw new ReplayRefused("This file is not a match log: it is not JSON.");
  }
}

/** The winner of a finished match in words (a seat's name, or a team with partners). */
export function winnerText(rules, winner, name) {
  if (winner === null || winner === undefined) return null;
  if (!rules.partners) return `${name(winner)} wins the match`;
  const seats = [0, 1, 2, 3].filter((s) => sideOf(rules, s) === winner).map(name);
  return `Team ${winner === 0 ? "A" : "B"} (${seats.join(" + ")}) wins the match`;
}
