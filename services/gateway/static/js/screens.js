// @ts-check
// Which screen shows, drawn from the state (`renderScreen`: focus moved when a screen
// opens, the loading text, the offline note), the first screen of a page with no seat
// to resume (`startScreen`), and the page's short messages, which are not state:
// toasts and the screen reader's live announcements.

import { $, dialog } from "./dom.js";
import { inviteCode } from "./invite.js";
import { PROFILE_SCREENS, screenOfAddress } from "./profile.js";
import { isMyTurn } from "./selectors.js";
import { play } from "./sound.js";
import { isOffline } from "./reduce.js";
import { lastSeat, loadSeat } from "./store.js";

/** @typedef {import("./reduce.js").AppState} AppState */
/** @typedef {import("./reduce.js").Screen} Screen */

/** @type {Screen[]} */
export const SCREENS = ["home", "invite", "lobby", "table", "loading", "you", "leaderboard", "daily"];

/** Where focus goes when a screen opens (never the page's body). @type {Record<string, string>} */
export const SCREEN_FOCUS = {
  home: "home-title",
  invite: "invite-name",
  lobby: "lobby-title",
  table: "table-title",
  you: "you-title",
  leaderboard: "leaderboard-title",
  daily: "daily-title",
};

const TITLE = "Rack'em — Rack-O online";

/**
 * The screen `state` is at, and what goes with it; `drawn` is the state drawn last.
 * @param {AppState} state
 * @param {AppState} drawn
 */
export function renderScreen(state, drawn) {
  const name = state.screen;
  if (name !== drawn.screen) open(name);
  $("loading-text").textContent = state.loadingText;
  $("offline-note").hidden = !isOffline(state);
  if (name === "table" && state.tv) document.title = isMyTurn(state.tv) ? "Your turn — Rack'em" : TITLE;
  if (state.watching) document.body.dataset.watching = "1";
  else delete document.body.dataset.watching;
}

/** Show screen `name`, focus on its heading if focus was in the screen it hides. @param {Screen} name */
function open(name) {
  const focusWasIn = /** @type {HTMLElement | null} */ (document.activeElement);
  for (const s of SCREENS) $(`screen-${s}`).hidden = s !== name;
  const lost = !focusWasIn || focusWasIn === document.body || !focusWasIn.checkVisibility?.();
  if (lost && SCREEN_FOCUS[name] && !dialog("help").open) $(SCREEN_FOCUS[name]).focus({ preventScroll: true });
  $("table-info").hidden = name !== "table";
  $("btn-leave").hidden = name !== "table";
  document.body.dataset.screen = name;
  // A profile screen's fragment (#you…) goes once another screen than home shows (a table, its waiting room).
  if (screenOfAddress() && !Object.values(PROFILE_SCREENS).includes(name) && name !== "home") {
    history.replaceState(null, "", location.pathname + location.search);
  }
  if (name === "home") {
    document.title = TITLE;
    // The seat an earlier tab kept (the browser's storage), offered when this tab holds none.
    $("resume-banner").hidden = !lastSeat() || Boolean(loadSeat());
  }
}

/** The first screen when no seat is being resumed: the invitation of a share link, a profile screen's address (`/#you`…), or home. @returns {Screen} */
export function startScreen() {
  return inviteCode() ? "invite" : screenOfAddress() || "home";
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let toastTimer;

/** A short message at the bottom: an error (with a sound) or, `kind` "info", a note. @param {string} text */
export function toast(text, kind = "error") {
  const box = $("toast");
  box.textContent = text;
  box.className = `toast ${kind === "info" ? "info" : ""}`;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.hidden = true), kind === "info" ? 3500 : 5000);
  if (kind !== "info") play("error");
}

/** Say `text` to a screen reader (the live region; the last one said is the one read). @param {string} text */
export function announce(text) {
  const live = $("live");
  live.textContent = "";
  setTimeout(() => (live.textContent = text), 30);
}
