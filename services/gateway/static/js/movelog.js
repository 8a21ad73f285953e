// @ts-check
// Sentences for the recent-moves list, from each view's `last_move` and what the
// view before it showed (the discard pile's top tells which card moved).

import { mark } from "./cards.js";

/** @typedef {import("./protocol.js").TableView} TableView */
/** @typedef {import("./protocol.js").View} View */

/**
 * Describe the move that turned `prev` into `tv` (both `view` messages), or null.
 * `name(seat)` gives a seat's display name ("You" for this seat).
 * @param {TableView | null} prev
 * @param {TableView} tv
 * @param {(seat: number) => string} name
 * @returns {string | null}
 */
export function describe(prev, tv, name) {
  const m = tv.last_move;
  if (!m || !prev || tv.version <= prev.version) return null;
  const v = tv.view;
  const pv = prev.view;
  const who = name(m.seat);
  const you = m.seat === v.seat;
  const slot = m.slot ?? -1; // a place's and a repair's
  const by = m.by === "cover" ? " (the computer, covering)" : "";
  /** @param {number[]} pile */
  const top = (pile) => (pile && pile.length ? pile[pile.length - 1] : null);
  let text;
  switch (m.act) {
    case "draw":
      if (m.from === "discard") {
        const card = (v.last_pickup && v.last_pickup[m.seat]) || top(pv.discard);
        text = `${who} took ${card} from the discard pile`;
      } else if (you && v.held) {
        text = `${who} drew ${v.held} from the stock`;
      } else {
        text = `${who} drew from the stock`;
      }
      break;
    case "place": {
      const out = v.phase === "round_over" || v.phase === "match_over" ? lastDiscard(v, m.seat) : top(v.discard);
      const placed = you ? pv.held : pv.held_from === "discard" ? pv.held : null;
      text = placed
        ? `${who} put ${placed} in slot ${mark(slot)} and discarded ${out}`
        : `${who} placed a card in slot ${mark(slot)} and discarded ${out}`;
      break;
    }
    case "throw":
      text = `${who} threw ${top(v.discard) ?? lastDiscard(v, m.seat)} away`;
      break;
    case "repair":
      text = `${who} swapped slots ${mark(slot)} and ${mark(slot + 1)}`;
      break;
    default:
      return null;
  }
  return text + by;
}

/** The last card `seat` discarded this round (the pile may have been turned over). @param {View} v @param {number} seat */
function lastDiscard(v, seat) {
  const mine = v.discarded && v.discarded[seat];
  return mine && mine.length ? mine[mine.length - 1] : "a card";
}
