// @ts-check
// This tab's seat between moves: taking it back from the covering computer, continuing
// after a round, and giving it up (Leave, Home: a bot takes it if the match runs).

import { conn } from "./conn.js";
import { $, button } from "./dom.js";
import { clearOffer } from "./rematch.js";
import { announce, show } from "./screens.js";
import { isCovered, isMatchOver } from "./selectors.js";
import { resetTable, state } from "./state.js";
import { forgetSeat, loadSeat } from "./store.js";
import { stopWatching } from "./watch.js";

/** Give up this tab's seat (a bot takes it if the match runs) and start from a clean connection. */
export function leaveTable(after) {
  stopWatching();
  clearOffer();
  const had = loadSeat();
  forgetSeat();
  resetTable();
  state.lobby = null;
  const done = () => {
    state.afterLeft = null;
    conn.fresh();
    if (after) after();
  };
  if (had && state.connected) {
    state.afterLeft = done;
    conn.send({ type: "leave" });
    setTimeout(() => state.afterLeft === done && done(), 1500);
  } else {
    done();
  }
}

export function goHome() {
  leaveTable(() => show("home"));
  show("home");
  history.replaceState(null, "", "/");
}

/** The table's Leave: home, once the player confirms giving up a match that still runs. */
export function leaveMatch() {
  const tv = state.tv;
  const running = tv && !isMatchOver(tv);
  if (running && !confirm("Leave the match? A computer player takes your seat for good.")) return;
  goHome();
}

/** One tap or Enter: the seat is mine again (`continue` uncovers a covered seat). */
export function takeSeatBack() {
  if (!isCovered(state.tv) || !conn.send({ type: "continue" })) return;
  button("btn-back").disabled = true;
  announce("Your seat is yours again.");
}

export function continueRound() {
  if (isCovered(state.tv)) {
    takeSeatBack();
    return;
  }
  const tv = state.tv;
  if (!tv || $("round-over").hidden || (tv.continued || [])[tv.view.seat]) return;
  conn.send({ type: "continue" });
  button("btn-continue").disabled = true;
}

/** Enter continues: after a round (not yet pressed), or to take a covered seat back. */
export function canContinue() {
  return (!$("round-over").hidden && !button("btn-continue").disabled) || isCovered(state.tv);
}
