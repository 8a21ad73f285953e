// @ts-check
// Drawing the page from the state: `render(state)`, the one entry (app.js subscribes it
// to the store), draws what changed since the state it drew last — the screen, the top
// bar's connection status, the waiting room, the table with its round-over and match-over
// screens, the hint, the profile's screens (You, Leaderboard, Daily Rack) — through each
// screen's own render function, which reads the state and never writes it. `tick()` runs
// the clocks between two states (the decision's countdown, the lobby's fill timer, the
// round-over wait, the rematch offer's, a link code's and the Daily Rack's).

import { el } from "./cards.js";
import { retryNow } from "./conn.js";
import { $, button } from "./dom.js";
import { renderMatchOver, renderReviews, renderRoundOver, renderVerification, tickRoundOver } from "./finish.js";
import { renderLobby, tickLobby } from "./lobby.js";
import { isConnected } from "./reduce.js";
import { renderOffer, renderRematchLobby } from "./rematch.js";
import { renderScreen } from "./screens.js";
import { clockSeat, isBetweenRounds, isCovered, isMatchOver } from "./selectors.js";
import { renderDaily, tickDaily } from "./daily.js";
import { renderLeaderboard } from "./leaderboard.js";
import { play } from "./sound.js";
import { getState } from "./state.js";
import { TableScreen, clockText } from "./table.js";
import { renderWatchLobby, renderWatchTable } from "./watch.js";
import { renderYou, tickYou } from "./you.js";

/** @typedef {import("./reduce.js").AppState} AppState */
/** @typedef {import("./table.js").TableActions} TableActions */

/** @type {TableScreen} */
let table;

/** The state drawn last: at first, the page as index.html draws it. */
let drawn = getState();

/** The last second the decision's clock ticked aloud. */
let lastTick = -1;

/** Build the table's rack and controls; `actions` is what they do (js/play.js). @param {TableActions} actions */
export function initTable(actions) {
  table = new TableScreen(actions);
}

/**
 * The table screen draws these parts of the state (and whether the page is connected).
 * @type {(keyof AppState)[]}
 */
const TABLE_PARTS = [
  "screen",
  "tv",
  "pending",
  "repairMode",
  "historyOpen",
  "log",
  "seatBackAsked",
  "continueSent",
  "verified",
  "coach",
  "reviews",
];

/** Draw `state`: each part of the page whose state changed since the last drawing. @param {AppState} state */
export function render(state) {
  const before = drawn;
  drawn = state;
  renderScreen(state, before);
  if (state.connection !== before.connection) renderConnection(state.connection);
  if (state.lobby !== before.lobby && state.lobby && state.lobby.status === "waiting") {
    renderLobby(state.lobby);
    renderWatchLobby(state.lobby);
    renderRematchLobby(state.lobby);
  }
  if (state.hint !== before.hint) {
    $("hint-text").textContent = state.hint || "";
    $("hint").hidden = !state.hint;
  }
  if (state.offer !== before.offer) renderOffer(state.offer, Date.now());
  if (state.profile !== before.profile || state.screen !== before.screen) renderProfile(state);
  if (TABLE_PARTS.some((key) => state[key] !== before[key]) || isConnected(state) !== isConnected(before)) renderTable(state);
  tick();
}

/** The profile's screens: You (and the home's *You* button), the leaderboard, the Daily Rack. @param {AppState} state */
function renderProfile(state) {
  renderYou(state.profile);
  if (state.screen === "leaderboard") renderLeaderboard(state.profile);
  if (state.screen === "daily") renderDaily(state.profile);
}

/** The top bar: nothing while connected, else that the connection is lost and when it retries. @param {AppState["connection"]} status */
function renderConnection(status) {
  const box = $("conn");
  if (status.state === "waiting") {
    const secs = Math.max(1, Math.round((status.retryAt - Date.now()) / 1000));
    box.replaceChildren(
      el("span", {}, `Connection lost — retrying in ${secs} s`),
      el("button", { type: "button", class: "btn small", onclick: retryNow }, "Retry now"),
    );
  } else if (status.state === "connecting" && status.attempt > 0) {
    box.replaceChildren(el("span", {}, "Reconnecting…"));
  } else {
    box.replaceChildren();
  }
}

/** The table screen, and its round-over and match-over screens. @param {AppState} state */
function renderTable(state) {
  const tv = state.tv;
  if (!tv) {
    $("round-over").hidden = true;
    $("match-over").hidden = true;
    return;
  }
  if (state.screen !== "table") return;
  const covered = isCovered(tv);
  const back = button("btn-back");
  back.hidden = !covered;
  back.disabled = state.seatBackAsked;
  table.render(tv, {
    covered,
    pending: Boolean(state.pending) || !isConnected(state),
    repairMode: state.repairMode,
    historyOpen: state.historyOpen,
    log: state.log,
    clockSeat: clockSeat(tv),
    coach: state.coach,
  });
  const roundOver = isBetweenRounds(tv);
  $("round-over").hidden = !roundOver;
  if (roundOver) renderRoundOver(tv, Date.now(), state.continueSent);
  const over = isMatchOver(tv);
  $("match-over").hidden = !over;
  if (over) {
    renderMatchOver(tv);
    renderReviews(tv, state.reviews);
    renderVerification(state.verified && state.verified.table_id === tv.table_id ? state.verified : null);
  }
  renderWatchTable(tv);
}

/** Clocks: the current decision's countdown, the lobby's fill timer, the round-over wait, the rematch offer. */
export function tick() {
  const state = getState();
  if (state.screen === "lobby" && state.lobby) tickLobby(state.lobby);
  if (state.screen === "you") tickYou(state.profile, Date.now());
  if (state.screen === "daily") tickDaily(state.profile, Date.now());
  const tv = state.tv;
  if (!tv || state.screen !== "table") return;
  const left = tv.remaining_ms - (performance.now() - state.receivedAt);
  const myClock = $("my-clock");
  const mine = clockSeat(tv) === tv.view.seat;
  myClock.hidden = !mine;
  if (mine) {
    myClock.textContent = clockText(left);
    myClock.classList.toggle("low", left < 10000);
    myClock.setAttribute("aria-label", `${Math.ceil(Math.max(0, left) / 1000)} seconds left`);
    const secs = Math.ceil(left / 1000);
    if (secs <= 10 && secs > 0 && secs !== lastTick) {
      lastTick = secs;
      play("tick");
    }
  }
  for (const node of document.querySelectorAll("[data-clock]")) {
    node.textContent = clockText(left);
    node.classList.toggle("low", left < 10000);
  }
  if (isBetweenRounds(tv)) tickRoundOver(tv, Date.now());
  if (state.offer) renderOffer(state.offer, Date.now());
}
