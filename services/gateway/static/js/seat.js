// @ts-check
// This tab's seat between moves: taking it back from the covering computer, continuing
// after a round, and giving it up (Leave, Home: a bot takes it if the match runs), with
// what to do once the server says `left`.

import { fresh, send } from "./conn.js";
import { isConnected } from "./reduce.js";
import { announce } from "./screens.js";
import { isBetweenRounds, isCovered, isMatchOver } from "./selectors.js";
import { dispatch, getState } from "./state.js";
import { forgetSeat, loadSeat } from "./store.js";
import { rememberWatched } from "./watch.js";

/** What to do once the server says `left` (the seat given up), if a leave is on its way. @type {(() => void) | null} */
let afterLeft = null;

/**
 * Give up this tab's seat (a bot takes it if the match runs) and start from a clean connection.
 * @param {() => void} [after] once the server said `left` (or did not, in time)
 */
export function leaveTable(after) {
  rememberWatched(null);
  const had = loadSeat();
  forgetSeat();
  const connected = isConnected(getState());
  dispatch({ type: "table_left" });
  const done = () => {
    afterLeft = null;
    fresh();
    if (after) after();
  };
  if (had && connected) {
    afterLeft = done;
    send({ type: "leave" });
    setTimeout(() => afterLeft === done && done(), 1500);
  } else {
    done();
  }
}

/** The server's `left`: the seat is given up. */
export function onLeft() {
  const after = afterLeft;
  afterLeft = null;
  if (after) after();
}

/** Home: the seat given up, the home screen. */
export function goHome() {
  leaveTable(() => dispatch({ type: "show", screen: "home" }));
  dispatch({ type: "show", screen: "home" });
  history.replaceState(null, "", "/");
}

/** The table's Leave: home, once the player confirms giving up a match that still runs. */
export function leaveMatch() {
  const tv = getState().tv;
  const running = tv && !isMatchOver(tv);
  if (running && !confirm("Leave the match? A computer player takes your seat for good.")) return;
  goHome();
}

/** One tap or Enter: the seat is mine again (`continue` uncovers a covered seat). */
export function takeSeatBack() {
  if (!isCovered(getState().tv) || !send({ type: "continue" })) return;
  dispatch({ type: "seat_back_asked" });
  announce("Your seat is yours again.");
}

/** Continue after a round (or, while covered, take the seat back). */
export function continueRound() {
  const tv = getState().tv;
  if (isCovered(tv)) {
    takeSeatBack();
    return;
  }
  if (!tv || !isBetweenRounds(tv) || (tv.continued || [])[tv.view.seat]) return;
  send({ type: "continue" });
  dispatch({ type: "continue_sent" });
}

/** Enter continues: after a round (not yet pressed), or to take a covered seat back. */
export function canContinue() {
  const state = getState();
  const tv = state.tv;
  if (!tv) return false;
  const pressed = Boolean((tv.continued || [])[tv.view.seat]) || state.continueSent;
  return (isBetweenRounds(tv) && !pressed) || isCovered(tv);
}
