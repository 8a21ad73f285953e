// @ts-check
// What a table view says about the match and about this page's player, written once
// (pure functions of the view). A view (`tv`) is the server's `view` message
// (docs/protocol.md, "Views"; the type is js/protocol.js's `TableView`): the table's
// `status`, and in `view` the match as this page may see it, `view.seat` being this
// page's seat (-1 for a spectator).

/** @typedef {import("./protocol.js").TableView} TableView */
/** @typedef {import("./protocol.js").Move} Move */

/** The match is being played (not between rounds, not over). @param {TableView} tv */
export const isPlaying = (tv) => tv.status === "playing";

/** This page watches the table: a spectator, no seat. @param {TableView} tv */
export const isSpectator = (tv) => tv.view.seat < 0;

/** Whose decision it is now, -1 when nobody's (between rounds, match over). @param {TableView} tv */
export const turnSeat = (tv) => (isPlaying(tv) ? tv.view.turn : -1);

/** It is this page's seat's turn to draw or to place the card it holds. @param {TableView} tv */
export function isMyTurn(tv) {
  const v = tv.view;
  return v.turn === v.seat && (v.phase === "draw" || v.phase === "resolve") && isPlaying(tv);
}

/** A round has ended and the next is not dealt yet (true at the match's end too). @param {TableView} tv */
export const isRoundOver = (tv) => tv.status === "round_over" || tv.view.phase === "round_over";

/** The match has ended: won, or the table ended (abandoned). @param {TableView} tv */
export const isMatchOver = (tv) => tv.status === "finished" || tv.status === "ended" || tv.view.phase === "match_over";

/** My seat is played by the computer (my clock ran out) while the match runs. @param {TableView | null} tv */
export function isCovered(tv) {
  const me = tv && (tv.seats || []).find((s) => s.seat === tv.view.seat);
  return Boolean(me && me.kind === "cover" && isPlaying(tv));
}

/** This page's seat (or team, with partners) won the match. @param {TableView} tv */
export function iWon(tv) {
  const v = tv.view;
  return v.rules.partners ? v.winner === v.seat % 2 : v.winner === v.seat;
}

/** Between two rounds: a round has ended and the match has not (the round-over screen shows). @param {TableView} tv */
export const isBetweenRounds = (tv) => isRoundOver(tv) && tv.view.phase !== "match_over" && !isMatchOver(tv);

/** The seat whose decision clock runs now (a human's, on a table with clocks), or -1. @param {TableView} tv */
export function clockSeat(tv) {
  const turn = turnSeat(tv);
  const info = (tv.seats || []).find((s) => s.seat === turn);
  return tv.deadline_ms && info && info.kind === "human" ? turn : -1;
}

/**
 * The moves the view allows now, by kind (none while a move of mine is on its way).
 * @typedef {object} LegalSets
 * @property {boolean} stock
 * @property {boolean} discard
 * @property {Set<number>} place the slots the card held may go to
 * @property {boolean} throw
 * @property {Set<number>} repair the slots that may swap with the next one
 */

/**
 * @param {TableView} tv
 * @param {unknown} [pending] a move on its way (anything truthy): nothing is legal until it is answered
 * @returns {LegalSets}
 */
export function legalSets(tv, pending) {
  /** @type {Move[]} */
  const legal = pending ? [] : tv.legal || [];
  return {
    stock: legal.some((m) => m.act === "draw" && m.from === "stock"),
    discard: legal.some((m) => m.act === "draw" && m.from === "discard"),
    place: new Set(legal.filter((m) => m.act === "place").map((m) => /** @type {number} */ (m.slot))),
    throw: legal.some((m) => m.act === "throw"),
    repair: new Set(legal.filter((m) => m.act === "repair").map((m) => /** @type {number} */ (m.slot))),
  };
}

/** A seat's display name: "You" for this page's seat. @param {TableView} tv @param {number} seat */
export function seatName(tv, seat) {
  if (seat === tv.view.seat) return "You";
  const s = (tv.seats || []).find((x) => x.seat === seat);
  return (s && s.name) || `Seat ${seat + 1}`;
}

/** The seats people played (a covered seat, and one its player left, are still theirs). @param {TableView} tv */
export function humanSeats(tv) {
  return (tv.seats || [])
    .filter((s) => s.kind !== "bot" || s.left)
    .map((s) => s.seat)
    .sort((a, b) => a - b);
}

/**
 * The Hint is allowed at this table (as the gateway allows it): this page holds a seat and
 * every other seat is a computer (a bot's, or one its player left for good) — no other
 * person plays here, nor a computer covering for one.
 * @param {TableView} tv
 */
export function hintsAllowed(tv) {
  if (isSpectator(tv)) return false;
  return (tv.seats || []).every((s) => s.seat === tv.view.seat || s.kind === "bot");
}
