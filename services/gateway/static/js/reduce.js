// @ts-check
// The page's state and every change to it, in one pure function: `reduce(state, action)`
// takes the state and an action — a server message as it arrived (docs/protocol.md), or
// what happened here (a click or a key, the connection's status, a check's answer) —
// and returns the next state. Nothing else writes the state (js/state.js holds it and
// runs this); nothing here touches the page, the network, storage or the clock.

import { viewChanges } from "./changes.js";
import { WATCH_REFUSED } from "./messages.js";
import { askProfile, greetedProfile, initialProfile, receiveProfile } from "./profile-state.js";
import { isCovered, isSpectator, legalSets, seatName } from "./selectors.js";

/** @typedef {import("./protocol.js").TableView} TableView */
/** @typedef {import("./protocol.js").Lobby} Lobby */
/** @typedef {import("./protocol.js").RematchOffer} RematchOffer */
/** @typedef {import("./protocol.js").ServerMessage} ServerMessage */
/** @typedef {import("./protocol.js").Move} Move */
/** @typedef {import("./coach.js").ReviewSummary} ReviewSummary */

/** @typedef {"loading" | "home" | "invite" | "lobby" | "table" | "you" | "leaderboard" | "daily"} Screen */

/**
 * The connection's status (js/net.js): connecting (`attempt` 0 the first time, and after a
 * fresh start), open (the server said `welcome`), or waiting to retry at `retryAt` (unix ms).
 * @typedef {{ state: "connecting", attempt: number }
 *   | { state: "open" }
 *   | { state: "waiting", attempt: number, retryAt: number }} ConnectionStatus
 */

/**
 * The fair-deal check of a finished match (js/finish.js's `checkMatch`), as its screen says it.
 * @typedef {{ table_id: string, state: "checking" | "ok" | "bad" | "later", text: string }} Verification
 */

/**
 * The Hint asked for at `version` of the table (the answer's `id`), and the move it
 * suggests once the server answered (null until then).
 * @typedef {{ id: string, version: number, move: Move | null }} Coach
 */

/**
 * One seat's review of the finished match (js/coach.js's `fetchReview`): asked, answered
 * with its summary, or none to be had (the server has no review of it).
 * @typedef {{ table_id: string, seat: number, state: "asking" | "ok" | "none", summary: ReviewSummary | null }} SeatReview
 */

/**
 * The page's state: one object, replaced (never changed) by each action. The tests read
 * it as `window.rackem.state`.
 * @typedef {object} AppState
 * @property {Screen} screen the screen shown
 * @property {string} loadingText what the loading screen says
 * @property {ConnectionStatus} connection
 * @property {Lobby | null} lobby the last `lobby` message while the table waits, else null
 * @property {string | null} watching the code of the table this page watches as a spectator
 * @property {TableView | null} tv the latest view of the table this page is at
 * @property {number} receivedAt when `tv` arrived (performance.now()), for the clocks
 * @property {{ id: string, version: number } | null} pending the move sent and not answered yet
 * @property {boolean} repairMode R pressed (or Repair): the next slot repairs
 * @property {boolean} historyOpen the discard pile's history is open
 * @property {string[]} log the recent moves' sentences, newest first
 * @property {string | null} hint the first-game hint shown on the table, if any
 * @property {boolean} seatBackAsked *Take my seat back* pressed, and the seat still covered
 * @property {boolean} continueSent *Continue* pressed, and no view since
 * @property {RematchOffer | null} offer the others' rematch offer, on the match-over screen
 * @property {Verification | null} verified the fair-deal check of the finished match
 * @property {Coach | null} coach the Hint asked for on this turn, and its move once answered
 * @property {SeatReview[]} reviews the finished match's reviews, by seat
 * @property {import("./profile-state.js").ProfileState} profile the player's profile, its history, the leaderboard, the Daily Rack (js/profile-state.js)
 */

/**
 * What can happen to the state: a server message (`at`: performance.now() when it
 * arrived), or one of the page's own actions.
 * @typedef {{ type: "server", msg: ServerMessage, at: number }
 *   | { type: "connection", status: ConnectionStatus, start: Screen | null }
 *   | { type: "greeted", loading: string | null, start: Screen | null }
 *   | { type: "show", screen: Screen, loading?: string }
 *   | { type: "move_sent", id: string, version: number }
 *   | { type: "repair_toggled" }
 *   | { type: "repair_armed" }
 *   | { type: "modes_cancelled" }
 *   | { type: "history_toggled" }
 *   | { type: "hint", text: string | null }
 *   | { type: "seat_back_asked" }
 *   | { type: "continue_sent" }
 *   | { type: "table_left" }
 *   | { type: "verify", verified: Verification }
 *   | { type: "hint_asked", id: string, version: number }
 *   | { type: "reviewed", review: SeatReview }
 *   | { type: "profile_asked", kind: import("./profile-state.js").Asked }} Action
 */

/** The page as index.html draws it: the loading screen, connecting. @type {AppState} */
export const initialState = {
  screen: "loading",
  loadingText: "Connecting…",
  connection: { state: "connecting", attempt: 0 },
  lobby: null,
  watching: null,
  tv: null,
  receivedAt: 0,
  pending: null,
  repairMode: false,
  historyOpen: false,
  log: [],
  hint: null,
  seatBackAsked: false,
  continueSent: false,
  offer: null,
  verified: null,
  coach: null,
  reviews: [],
  profile: initialProfile,
};

/** No table any more (a new one, a seat given up, a token refused): what the page knew of it goes. */
const NO_TABLE = Object.freeze({
  tv: null,
  log: [],
  pending: null,
  repairMode: false,
  historyOpen: false,
  hint: null,
  seatBackAsked: false,
  continueSent: false,
  verified: null,
  coach: null,
  reviews: [],
});

/** The recent-moves list keeps this many sentences (before a round's two lines). */
const LOG_LENGTH = 20;

/** The socket is open and greeted. @param {AppState} state */
export const isConnected = (state) => state.connection.state === "open";

/** The server could not be reached since the page last connected (the home screen says so). @param {AppState} state */
export const isOffline = (state) => state.connection.state !== "open" && state.connection.attempt > 0;

/** A repair is legal now (and no move is on its way). @param {AppState} state */
export const canRepair = (state) => Boolean(state.tv && legalSets(state.tv, state.pending).repair.size);

/**
 * The next state after `action`; `state` itself when nothing changes.
 * @param {AppState} state
 * @param {Action} action
 * @returns {AppState}
 */
export function reduce(state, action) {
  switch (action.type) {
    case "server": {
      const answer = receiveProfile(state.profile, action.msg);
      const next = answer.profile === state.profile ? state : { ...state, profile: answer.profile };
      if (answer.refused === "play_daily" && next.screen === "loading") return { ...next, screen: "daily" };
      return answer.handled ? next : receive(next, action.msg, action.at);
    }
    case "connection": {
      // Offline (or the server is away): the start screen shows while the page retries.
      const start = action.status.state === "waiting" && state.screen === "loading" ? action.start : null;
      return { ...state, connection: action.status, screen: start || state.screen };
    }
    case "greeted": {
      const profile = greetedProfile(state.profile);
      const next = profile === state.profile ? state : { ...state, profile };
      if (state.screen !== "loading") return next;
      if (action.loading) return { ...next, loadingText: action.loading };
      return action.start ? { ...next, screen: action.start } : next;
    }
    case "show":
      return { ...state, screen: action.screen, loadingText: action.loading ?? state.loadingText };
    case "move_sent":
      return { ...state, pending: { id: action.id, version: action.version }, repairMode: false, hint: null, coach: null };
    case "repair_toggled":
      return { ...state, repairMode: !state.repairMode && canRepair(state) };
    case "repair_armed":
      return { ...state, repairMode: canRepair(state) };
    case "modes_cancelled":
      return { ...state, repairMode: false, historyOpen: false };
    case "history_toggled":
      return { ...state, historyOpen: !state.historyOpen };
    case "hint":
      return { ...state, hint: action.text };
    case "seat_back_asked":
      return { ...state, seatBackAsked: true };
    case "continue_sent":
      return { ...state, continueSent: true };
    case "table_left":
      return { ...state, ...NO_TABLE, lobby: null, offer: null, watching: null };
    case "verify":
      return { ...state, verified: action.verified };
    case "hint_asked":
      return { ...state, coach: { id: action.id, version: action.version, move: null } };
    case "reviewed": {
      const { table_id, seat } = action.review;
      if (!state.tv || state.tv.table_id !== table_id) return state;
      const others = state.reviews.filter((r) => r.table_id === table_id && r.seat !== seat);
      return { ...state, reviews: [...others, action.review].sort((a, b) => a.seat - b.seat) };
    }
    case "profile_asked":
      return { ...state, profile: askProfile(state.profile, action.kind) };
  }
}

/**
 * A server message.
 * @param {AppState} state
 * @param {ServerMessage} msg
 * @param {number} at
 * @returns {AppState}
 */
function receive(state, msg, at) {
  switch (msg.type) {
    case "watching":
      return {
        ...state,
        ...NO_TABLE,
        watching: msg.code,
        loadingText: `Watching table ${msg.code}…`,
        screen: state.screen === "lobby" ? "lobby" : "loading",
      };
    case "rematch_offer":
      return { ...state, offer: msg };
    case "seated": {
      const next = { ...state, offer: null, watching: null };
      if (state.tv && state.tv.table_id === msg.table_id) return next; // this table again (a resume)
      return { ...next, ...NO_TABLE, loadingText: "Taking a seat…", screen: state.screen === "lobby" ? "lobby" : "loading" };
    }
    case "lobby":
      if (msg.status === "closed") return { ...state, lobby: null, screen: "home" };
      if (msg.status === "waiting") return { ...state, lobby: msg, screen: "lobby" };
      if (state.tv) return { ...state, lobby: msg };
      return { ...state, lobby: msg, loadingText: "Dealing the cards…", screen: "loading" };
    case "view":
      return receiveView(state, msg, at);
    case "hint": {
      // The answer to the Hint asked for this turn (a late one, for a turn gone, changes nothing).
      const asked = state.coach;
      if (!asked || asked.id !== msg.id || !state.tv || state.tv.version !== asked.version) return state;
      return { ...state, coach: { ...asked, move: msg.move } };
    }
    case "error": {
      let next = state;
      if (WATCH_REFUSED.includes(msg.code) && state.watching) next = { ...next, watching: null };
      if (msg.code === "bad_token") return { ...next, ...NO_TABLE, screen: "home" };
      if (state.pending && (!msg.id || msg.id === state.pending.id)) next = { ...next, pending: null };
      if (state.coach && !state.coach.move && (!msg.id || msg.id === state.coach.id)) next = { ...next, coach: null };
      if (state.screen === "loading") next = { ...next, screen: state.tv && !isSpectator(state.tv) ? "table" : "home" };
      return next;
    }
    default: // welcome (js/net.js's), moved (its view follows), left, pong
      return state;
  }
}

/**
 * A `view`: the table's latest view, the recent moves, and what the view ends (a move on
 * its way, a repair armed, a hint, a Hint's move once a move is made, a Continue pressed).
 * An older view arriving late changes nothing.
 * @param {AppState} state
 * @param {TableView} tv
 * @param {number} at
 * @returns {AppState}
 */
function receiveView(state, tv, at) {
  const prev = state.tv && state.tv.table_id === tv.table_id ? state.tv : null;
  const changed = viewChanges(prev, tv, (s) => seatName(tv, s));
  if (changed.stale) return state;
  const base = changed.newTable ? { ...state, ...NO_TABLE } : state;
  let log = base.log;
  if (changed.move) log = [changed.move, ...log].slice(0, LOG_LENGTH);
  if (changed.roundDealt) log = [`Round ${tv.view.round_no} dealt`, ...log];
  if (changed.roundEnded) log = [changed.roundEnded, ...log];
  const covered = isCovered(tv);
  const coverChanged = covered !== isCovered(prev);
  return {
    ...base,
    screen: "table",
    tv,
    lobby: null,
    receivedAt: at,
    pending: base.pending && tv.version > base.pending.version ? null : base.pending,
    log,
    repairMode: base.repairMode && legalSets(tv).repair.size > 0,
    hint: covered && coverChanged ? null : base.hint,
    seatBackAsked: coverChanged ? false : base.seatBackAsked,
    continueSent: false,
    coach: base.coach && base.coach.version === tv.version ? base.coach : null,
  };
}
