// @ts-check
// A `view` message: what changed (js/changes.js, pure), then the page's state and the
// browser's storage, the sounds and announcements, the first-game hints, and drawing it.

import { viewChanges } from "./changes.js";
import { take as takeHint } from "./hints.js";
import { render } from "./render.js";
import { scoredLength } from "./rules.js";
import { announce, show, showHint } from "./screens.js";
import { isCovered, isMatchOver, isPlaying, isSpectator } from "./selectors.js";
import { play } from "./sound.js";
import { resetTable, state } from "./state.js";
import { loadPrefs, loadSeat, saveSeat, updatePrefs } from "./store.js";
import { legalSets, seatName } from "./table.js";

/** @typedef {import("./selectors.js").TableView} TableView */

/** A `view` message: what changed (pure), then the page's state, its reactions, and drawing it. @param {TableView} tv */
export function onView(tv) {
  const prev = state.tv && state.tv.table_id === tv.table_id ? state.tv : null;
  const changed = viewChanges(prev, tv, (s) => seatName(tv, s));
  if (changed.stale) return; // an older view arriving late
  keepView(tv, changed);
  reactTo(tv, changed);
  hintsFor(tv, changed.myTurn);
  document.title = changed.myTurn ? "Your turn — Rack'em" : "Rack'em — Rack-O online";
  show("table");
  render();
}

/**
 * The new view into the page's state and the browser's storage.
 * @param {TableView} tv
 * @param {import("./changes.js").Changes} changed
 */
function keepView(tv, changed) {
  if (changed.newTable) resetTable();
  state.tv = tv;
  state.lobby = null;
  state.receivedAt = performance.now();
  if (state.pending && tv.version > state.pending.version) state.pending = null;
  const seat = loadSeat();
  if (seat && !seat.commitment && tv.view.commitment) saveSeat({ ...seat, commitment: tv.view.commitment });
  if (changed.move) {
    state.log.unshift(changed.move);
    state.log.length = Math.min(state.log.length, 20);
  }
  if (changed.roundDealt) state.log.unshift(`Round ${tv.view.round_no} dealt`);
  if (changed.roundEnded) state.log.unshift(changed.roundEnded);
  if (isMatchOver(tv)) countFinished(tv);
  if (!legalSets(tv).repair.size) state.repairMode = false;
}

/**
 * Sounds and screen-reader announcements for what changed (the last announcement is the one read).
 * @param {TableView} tv
 * @param {import("./changes.js").Changes} changed
 */
function reactTo(tv, changed) {
  const v = tv.view;
  if (changed.move) {
    if (changed.moveByOther) announce(changed.move);
    play(changed.moveSound);
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

function countFinished(tv) {
  if (tv.status === "ended" && tv.view.winner === null) return;
  const key = `rackem.counted.${tv.table_id}`;
  if (sessionStorage.getItem(key)) return;
  sessionStorage.setItem(key, "1");
  updatePrefs({ gamesFinished: loadPrefs().gamesFinished + 1 });
}

function hintsFor(tv, mine) {
  const v = tv.view;
  const rules = v.rules;
  // No hints for the computer's moves, nor for a spectator.
  if (!isPlaying(tv) || isCovered(tv) || isSpectator(tv)) return;
  let text = takeHint("marks", rules);
  if (!text && mine && v.phase === "draw") text = takeHint("draw", rules);
  if (!text && mine && v.phase === "resolve") {
    text = v.held_from === "discard" ? takeHint("discard", rules) : takeHint("place", rules) || takeHint("throw", rules);
  }
  if (!text && rules.run_to_go_out && scoredLength(v.rack, rules.descending) >= 6) text = takeHint("run", rules);
  if (text) showHint(text);
}
