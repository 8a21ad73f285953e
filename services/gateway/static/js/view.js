// @ts-check
// What a new view sets off besides the state (js/reduce.js takes it in): what changed
// (js/changes.js, pure) made heard — sounds and screen-reader announcements — then the
// browser's storage (the commitment kept with the seat, the finished-games count), the
// first-game hints, and at the end of a match the coach's review of each player.

import { viewChanges } from "./changes.js";
import { fetchReview } from "./coach.js";
import { take as takeHint } from "./hints.js";
import { scoredLength } from "./rules.js";
import { announce } from "./screens.js";
import { humanSeats, isCovered, isMatchOver, isPlaying, isSpectator, legalSets, seatName } from "./selectors.js";
import { play } from "./sound.js";
import { dispatch } from "./state.js";
import { loadPrefs, loadSeat, saveSeat, updatePrefs } from "./store.js";

/** @typedef {import("./protocol.js").TableView} TableView */
/** @typedef {import("./reduce.js").AppState} AppState */
/** @typedef {import("./changes.js").Changes} Changes */

/**
 * A `view` message was taken in (`before` → `after`): its reactions, unless it changed nothing (a late, older view).
 * @param {AppState} before
 * @param {AppState} after
 */
export function reactToView(before, after) {
  const tv = after.tv;
  if (!tv || tv === before.tv) return;
  const prev = before.tv && before.tv.table_id === tv.table_id ? before.tv : null;
  const changed = viewChanges(prev, tv, (s) => seatName(tv, s));
  keep(tv);
  reactTo(tv, changed);
  if (isCovered(tv) && !isCovered(prev)) {
    announce("Your clock ran out: the computer is playing for you. Press Enter to take your seat back.");
  }
  const hint = hintFor(tv, changed.myTurn);
  if (hint) dispatch({ type: "hint", text: hint });
  if (tv.status === "finished" && !after.reviews.some((r) => r.table_id === tv.table_id)) review(tv);
}

/** Ask for the review of every seat a person played (answers come as `reviewed` actions). @param {TableView} tv */
function review(tv) {
  const table_id = tv.table_id;
  for (const seat of humanSeats(tv)) {
    dispatch({ type: "reviewed", review: { table_id, seat, state: "asking", summary: null } });
    fetchReview(table_id, seat, 4).then((got) =>
      dispatch({ type: "reviewed", review: { table_id, seat, state: got ? "ok" : "none", summary: got ? got.summary : null } }),
    );
  }
}

/** The browser's storage: the commitment kept with the seat, a finished match counted. @param {TableView} tv */
function keep(tv) {
  const seat = loadSeat();
  if (seat && !seat.commitment && tv.view.commitment) saveSeat({ ...seat, commitment: tv.view.commitment });
  if (isMatchOver(tv)) countFinished(tv);
}

/**
 * Sounds and screen-reader announcements for what changed (the last announcement is the one read).
 * @param {TableView} tv
 * @param {Changes} changed
 */
function reactTo(tv, changed) {
  const v = tv.view;
  if (changed.move) {
    if (changed.moveByOther) announce(changed.move);
    if (changed.moveSound) play(changed.moveSound);
  }
  if (changed.turnStarted) {
    play("turn");
    const top = v.discard.length ? v.discard[v.discard.length - 1] : null;
    announce(
      `Your turn. Draw from the stock with S${top !== null && legalSets(tv).discard ? `, or take the ${top} from the discard pile with D` : ""}.`,
    );
  }
  if (changed.holding) {
    announce(
      v.held_from === "discard"
        ? `You hold ${v.held}. Place it with keys 1 to 0.`
        : `You drew ${v.held}. Place it with keys 1 to 0, or throw it with T.`,
    );
  }
  if (changed.roundEnded) {
    play("round");
    announce(`${changed.roundEnded} Press Enter to continue.`);
  }
  if (changed.matchEnded) {
    play(changed.won ? "win" : "round");
    announce(changed.won ? "You win the match!" : "The match is over.");
  }
}

/** A finished match, counted once per tab (hints stop after the first). @param {TableView} tv */
function countFinished(tv) {
  if (tv.status === "ended" && tv.view.winner === null) return;
  const key = `rackem.counted.${tv.table_id}`;
  if (sessionStorage.getItem(key)) return;
  sessionStorage.setItem(key, "1");
  updatePrefs({ gamesFinished: loadPrefs().gamesFinished + 1 });
}

/**
 * The first-game hint this view calls for, if any (each shows once: taking it is remembered).
 * @param {TableView} tv
 * @param {boolean} mine my turn now
 * @returns {string | null}
 */
function hintFor(tv, mine) {
  const v = tv.view;
  const rules = v.rules;
  // No hints for the computer's moves, nor for a spectator.
  if (!isPlaying(tv) || isCovered(tv) || isSpectator(tv)) return null;
  let text = takeHint("marks", rules);
  if (!text && mine && v.phase === "draw") text = takeHint("draw", rules);
  if (!text && mine && v.phase === "resolve") {
    text = v.held_from === "discard" ? takeHint("discard", rules) : takeHint("place", rules) || takeHint("throw", rules);
  }
  if (!text && rules.run_to_go_out && scoredLength(v.rack, rules.descending) >= 6) text = takeHint("run", rules);
  return text;
}
