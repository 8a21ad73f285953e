// @ts-check
// What changed from one view of the table to the next: a pure function of the two
// views, so the page's reactions (sounds, announcements, the recent-moves list, the
// finished-games count) follow from it and rendering only draws the latest view.

import { describe } from "./movelog.js";
import { isMatchOver, isMyTurn, isRoundOver, iWon } from "./selectors.js";

/** @typedef {import("./selectors.js").TableView} TableView */

/**
 * @typedef {object} Changes
 * @property {boolean} stale an older view arriving late: nothing to do
 * @property {boolean} newTable no previous view of this table (a new table, or the first view)
 * @property {string | null} move the sentence for the move that made this view, if any
 * @property {boolean} moveByOther that move was another seat's (it is announced)
 * @property {"draw" | "place" | null} moveSound
 * @property {boolean} myTurn it is this seat's turn now
 * @property {boolean} turnStarted my turn to draw has just begun
 * @property {boolean} holding I have just drawn, and hold a card to place
 * @property {boolean} roundDealt a new round was dealt after a round over
 * @property {string | null} roundEnded the round has just ended: who went out
 * @property {boolean} matchEnded the match has just ended
 * @property {boolean} won that ended match is won by my seat (or team)
 */

/**
 * Compare `prev` (the last view of this table, or null) with `tv`.
 * @param {TableView | null} prev
 * @param {TableView} tv
 * @param {(seat: number) => string} name a seat's display name ("You" for this seat)
 * @returns {Changes}
 */
export function viewChanges(prev, tv, name) {
  const v = tv.view;
  if (prev && prev.table_id !== tv.table_id) prev = null;
  const stale = Boolean(prev && tv.version < prev.version);
  const move = stale ? null : describe(prev, tv, name);
  const myTurn = isMyTurn(tv);
  const wasMine =
    prev &&
    prev.view.turn === prev.view.seat &&
    prev.view.phase === v.phase &&
    prev.status === "playing" &&
    prev.view.round_no === v.round_no;
  const roundOver = isRoundOver(tv);
  const over = isMatchOver(tv);
  let roundEnded = null;
  if (roundOver && prev && !isRoundOver(prev)) {
    const r = v.rounds[v.rounds.length - 1];
    roundEnded = r && r.winner !== null && r.winner !== undefined ? `${name(r.winner)} went out.` : "Round over, nobody went out.";
  }
  const matchEnded = Boolean(over && prev && !isMatchOver(prev));
  return {
    stale,
    newTable: !prev,
    move,
    moveByOther: Boolean(move && tv.last_move && tv.last_move.seat !== v.seat),
    moveSound: move ? (tv.last_move && tv.last_move.act === "draw" ? "draw" : "place") : null,
    myTurn,
    turnStarted: myTurn && v.phase === "draw" && !wasMine,
    holding: myTurn && v.phase === "resolve" && Boolean(prev && prev.view.phase !== "resolve"),
    roundDealt: Boolean(prev && !roundOver && isRoundOver(prev)),
    roundEnded,
    matchEnded,
    won: matchEnded && iWon(tv),
  };
}
