// @ts-check
// Which screen shows (and where focus goes when one opens), and the page's short
// messages: toasts, the screen reader's live announcements, the first-game hint box.

import { $, dialog } from "./dom.js";
import { inviteCode, inviteShown } from "./invite.js";
import { play } from "./sound.js";
import { state } from "./state.js";
import { lastSeat, loadSeat } from "./store.js";

export const SCREENS = ["home", "invite", "lobby", "table", "loading"];
// Where focus goes when a screen opens (never the page's body).
export const SCREEN_FOCUS = {
  home: "home-title",
  invite: "invite-name",
  lobby: "lobby-title",
  table: "table-title",
};

export function show(name) {
  if (state.screen === name) return;
  state.screen = name;
  const focusWasIn = document.activeElement;
  for (const s of SCREENS) $(`screen-${s}`).hidden = s !== name;
  inviteShown(name === "invite");
  const lost = !focusWasIn || focusWasIn === document.body || !focusWasIn.checkVisibility?.();
  if (lost && SCREEN_FOCUS[name] && !dialog("help").open) $(SCREEN_FOCUS[name]).focus({ preventScroll: true });
  $("table-info").hidden = name !== "table";
  $("btn-leave").hidden = name !== "table";
  document.body.dataset.screen = name;
  if (name === "home") {
    document.title = "Rack'em — Rack-O online";
    const resume = lastSeat();
    $("resume-banner").hidden = !resume || Boolean(loadSeat());
  }
  $("offline-note").hidden = state.connected;
}

/** The first screen when no seat is being resumed: the invitation of a share link, or home. */
export function showStart() {
  show(inviteCode() ? "invite" : "home");
}

let toastTimer = 0;
export function toast(text, kind = "error") {
  const box = $("toast");
  box.textContent = text;
  box.className = `toast ${kind === "info" ? "info" : ""}`;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.hidden = true), kind === "info" ? 3500 : 5000);
  if (kind !== "info") play("error");
}

export function announce(text) {
  const live = $("live");
  live.textContent = "";
  setTimeout(() => (live.textContent = text), 30);
}

export function showHint(text) {
  if (!text) return;
  $("hint-text").textContent = text;
  $("hint").hidden = false;
}
