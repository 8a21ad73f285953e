// @ts-check
// What the connection's events do (app.js hooks them into js/conn.js). Each one is
// dispatched to the store, whose reducer (js/reduce.js) is the one place they change
// the page's state; what is not state happens here after it: on each (re)connection
// `resume` the seat or `watch` the watched table (after binding the profile of the
// stored key, js/profile.js), and per server message the browser's storage, toasts,
// and the reactions to a new view (js/view.js).

import { fresh, queuedCount, send } from "./conn.js";
import { WATCH_REFUSED, errorText } from "./messages.js";
import { PROFILE_SCREENS, askHistory, profileAsked, refreshScreen, saveProfileKey, sendBind } from "./profile.js";
import { receiveProfile } from "./profile-state.js";
import { announce, startScreen, toast } from "./screens.js";
import { onLeft } from "./seat.js";
import { dispatch, getState } from "./state.js";
import { forgetSeat, loadSeat, saveSeat } from "./store.js";
import { reactToView } from "./view.js";
import { rememberWatched, watchedCode } from "./watch.js";

/** @typedef {import("./protocol.js").ServerMessage} ServerMessage */
/** @typedef {import("./reduce.js").AppState} AppState */

/** @type {import("./conn.js").ConnectionEvents} */
export const connectionEvents = {
  open() {
    const bound = sendBind(); // first: every request after it finds the profile bound
    const seat = loadSeat();
    const code = watchedCode();
    if (seat) send({ type: "resume", token: seat.token });
    else if (code) send({ type: "watch", code });
    dispatch({
      type: "greeted",
      loading: seat ? "Taking your seat again…" : code ? `Watching table ${code}…` : null,
      start: queuedCount() ? null : startScreen(),
    });
    if (bound) profileAsked("bind");
    const screen = getState().screen;
    if (Object.values(PROFILE_SCREENS).includes(screen)) refreshScreen(screen);
  },
  status(status) {
    // Offline (or the server is away): the start screen shows, unless the page waits to send something.
    dispatch({ type: "connection", status, start: queuedCount() ? null : startScreen() });
  },
  message(msg) {
    const before = getState();
    dispatch({ type: "server", msg, at: performance.now() });
    AFTER[msg.type]?.(/** @type {any} */ (msg), before);
  },
};

/**
 * What a server message does besides changing the state (which the reducer did first):
 * storage, toasts, the connection, the reactions to a view. `before` is the state it found.
 * @type {{ [T in ServerMessage["type"]]?: (msg: Extract<ServerMessage, { type: T }>, before: AppState) => void }}
 */
const AFTER = {
  watching(msg) {
    rememberWatched(msg.code);
  },
  seated(msg) {
    rememberWatched(null);
    const previous = loadSeat();
    const sameTable = previous && previous.table_id === msg.table_id;
    saveSeat({
      token: msg.token,
      seat: msg.seat,
      code: msg.code,
      table_id: msg.table_id,
      commitment: sameTable ? previous.commitment || null : null,
    });
  },
  lobby(msg) {
    if (msg.status !== "closed") return;
    forgetSeat();
    toast("The table was closed by its host.");
    fresh();
  },
  view(_msg, before) {
    reactToView(before, getState());
  },
  left() {
    onLeft();
  },
  profile(msg, before) {
    if (msg.key) saveProfileKey(msg.key); // a new profile, or this device linked: its key, sent this once
    if (before.profile.asked.includes("update")) announce("Saved.");
    // Another profile on the You screen (a link code redeemed): its history too.
    const shown = before.profile.me;
    if (getState().screen === "you" && (!shown || shown.id !== msg.id) && !before.profile.asked.includes("history")) askHistory();
  },
  forgotten() {
    saveProfileKey(null);
    announce("Your profile is forgotten.");
  },
  error(msg, before) {
    if (msg.code === "bad_profile") saveProfileKey(null); // wrong or forgotten: a new one is made at the next game
    if (receiveProfile(before.profile, msg).handled) return; // a profile request's refusal: its screen says it
    if (WATCH_REFUSED.includes(msg.code) && watchedCode() && !loadSeat()) {
      rememberWatched(null); // the table cannot be watched: not asked again on reconnect
    }
    if (msg.code === "bad_token") {
      forgetSeat();
      toast("Your seat is no longer available — the table has ended or someone else took it.");
      return;
    }
    if (msg.code !== "stale_version") toast(errorText(msg));
  },
};
