// @ts-check
// Readable text for the protocol's error codes (docs/protocol.md, "Errors"), and the
// codes that refuse watching a table.

/** The errors that mean the table cannot be watched (the page stops asking to, on reconnect). */
export const WATCH_REFUSED = ["no_spectators", "spectators_full", "no_code"];

/** @type {Record<string, string>} */
const TEXT = {
  bad_frame: "The server could not read that message.",
  bad_request: "The server did not understand that request.",
  hello_first: "Still connecting — try again in a moment.",
  bad_version: "This page is out of date: reload it.",
  bad_name: "Names are 1 to 20 characters, letters and spaces.",
  bad_rules: "One of the rules options is out of range.",
  malformed_move: "That is not a move.",
  illegal_move: "That move is not allowed now.",
  not_your_turn: "It is not your turn.",
  stale_version: "The table moved on before your move arrived — try again.",
  match_over: "The match is over.",
  not_seated: "You have no seat at a table.",
  already_seated: "You already have a seat at a table.",
  bad_token: "That seat is no longer available.",
  no_code: "No waiting table has that code. Check it and try again.",
  table_full: "That table is full.",
  not_creator: "Only the player who created the table can start it.",
  already_started: "That table has already started.",
  rate_limited: "Slow down a little — too many requests.",
  busy: "The server is busy right now. Try again in a moment.",
  unavailable: "The game server is busy. Try again in a moment.",
  internal: "Something went wrong on the server. Try again.",
  watching: "You are watching a table: leave it first.",
  no_spectators: "That table is not open to spectators.",
  spectators_full: "That table has as many spectators as it takes. Try again later.",
  no_rematch: "A rematch is for the players of a finished match.",
  hint_unavailable: "No hint right now — the computer players cannot be asked. Try again in a moment.",
};

/**
 * A sentence for an `error` message: ours, with the server's details where they help.
 * @param {import("./protocol.js").ErrorMessage} msg
 */
export function errorText(msg) {
  const ours = TEXT[msg.code] || "Something went wrong.";
  if (msg.code === "bad_rules" || msg.code === "illegal_move" || msg.code === "bad_name") {
    return msg.message ? `${ours} (${msg.message})` : ours;
  }
  return ours;
}
