// @ts-check
// Drawing the table screen from the page's state (`render()`), and the clocks that
// run between two views (`tick()`: the decision's countdown, the lobby's fill timer,
// the round-over wait).

import { button, $ } from "./dom.js";
import { renderMatchOver, renderRoundOver, tickRoundOver } from "./finish.js";
import { tickLobby } from "./lobby.js";
import { announce } from "./screens.js";
import { isCovered, isMatchOver, isRoundOver, turnSeat } from "./selectors.js";
import { play } from "./sound.js";
import { state } from "./state.js";
import { TableScreen, clockText } from "./table.js";
import { renderWatchTable } from "./watch.js";

/** @type {TableScreen} */
let table;

/** Build the table's rack and controls; `actions` is what they do (js/play.js). */
export function initTable(actions) {
  table = new TableScreen(actions);
}

export function render() {
  const tv = state.tv;
  if (!tv || state.screen !== "table") return;
  const blocked = state.pending || !state.connected;
  const v = tv.view;
  const turn = turnSeat(tv);
  const turnInfo = (tv.seats || []).find((s) => s.seat === turn);
  state.clockSeat = tv.deadline_ms && turnInfo && turnInfo.kind === "human" ? turn : -1;
  const covered = isCovered(tv);
  const back = button("btn-back");
  if (back.hidden === covered) {
    back.hidden = !covered;
    back.disabled = false;
    if (covered) {
      $("hint").hidden = true;
      announce("Your clock ran out: the computer is playing for you. Press Enter to take your seat back.");
    }
  }
  table.render(tv, {
    covered,
    pending: blocked,
    repairMode: state.repairMode,
    historyOpen: state.historyOpen,
    log: state.log,
    clockSeat: state.clockSeat,
  });
  const roundOver = isRoundOver(tv) && v.phase !== "match_over";
  const over = isMatchOver(tv);
  $("round-over").hidden = !roundOver || over;
  if (roundOver && !over) renderRoundOver(tv, Date.now());
  $("match-over").hidden = !over;
  if (over) renderMatchOver(tv);
  renderWatchTable(tv);
  tick();
}

/** Clocks: the current decision's countdown, the lobby's fill timer, the round-over wait. */
export function tick() {
  if (state.screen === "lobby" && state.lobby) tickLobby(state.lobby);
  const tv = state.tv;
  if (!tv || state.screen !== "table") return;
  const left = tv.remaining_ms - (performance.now() - state.receivedAt);
  const myClock = $("my-clock");
  const mine = state.clockSeat === tv.view.seat;
  myClock.hidden = !mine;
  if (mine) {
    myClock.textContent = clockText(left);
    myClock.classList.toggle("low", left < 10000);
    myClock.setAttribute("aria-label", `${Math.ceil(Math.max(0, left) / 1000)} seconds left`);
    const secs = Math.ceil(left / 1000);
    if (secs <= 10 && secs > 0 && secs !== state.lastTick) {
      state.lastTick = secs;
      play("tick");
    }
  }
  for (const node of document.querySelectorAll("[data-clock]")) {
    node.textContent = clockText(left);
    node.classList.toggle("low", left < 10000);
  }
  if (!$("round-over").hidden) tickRoundOver(tv, Date.now());
}
