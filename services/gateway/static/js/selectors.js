// @ts-check
// What a table view says about the match and about this page's player, written once.
// A view (`tv`) is the server's `view` message (docs/protocol.md, "Views"): the table's
// `status`, and in `view` the match as this page may see it, `view.seat` being this
// page's seat (-1 for a spectator).

/**
 * The server's `view` message, as far as the page reads it.
 * @typedef {object} TableView
 * @property {string} table_id
 * @property {number} version
 * @property {"playing" | "round_over" | "finished" | "ended" | string} status
 * @property {View} view
 * @property {Seat[]} [seats]
 * @property {string} [code]
 * @property {number} [deadline_ms] the decision clock's length (0 or absent: no clock)
 * @property {number} [remaining_ms]
 * @property {boolean[]} [continued] who pressed Continue after the round
 * @property {number} [watchers]
 * @property {{ seat: number, act: string } & Record<string, any>} [last_move]
 */

/**
 * The match as one seat (or a spectator) sees it.
 * @typedef {object} View
 * @property {number} seat this page's seat, -1 when watching
 * @property {number} turn
 * @property {"draw" | "resolve" | "round_over" | "match_over" | string} phase
 * @property {number} round_no
 * @property {Record<string, any> & { players: number }} rules
 * @property {number[]} rack
 * @property {number[]} discard
 * @property {number[]} scores
 * @property {any[]} rounds
 * @property {number | null} winner a seat, or a team (seat % 2) with partners
 * @property {number | null} [held]
 * @property {"stock" | "discard" | null} [held_from]
 * @property {string} [commitment]
 */

/**
 * @typedef {object} Seat
 * @property {number} seat
 * @property {string} name
 * @property {"human" | "bot" | "cover" | string} kind
 */

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
