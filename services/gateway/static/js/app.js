// @ts-check
// The rackem web client's wiring: the store's one subscriber (`render`), the modules
// below hooked to the connection, the page's buttons and keys, then the connection
// opened. Protocol: docs/protocol.md. Everything the player sees comes from the
// server's `lobby` and `view` messages, through the reducer (js/reduce.js) into the
// state, which `render` draws; the page never decides a move is legal by itself.
// What each module holds: docs/web.md, "Files".

import { conn, connect, handleEvents, send } from "./conn.js";
import { $, input } from "./dom.js";
import { checkMatch } from "./finish.js";
import { connectionEvents } from "./handlers.js";
import { openHelp, initHelp } from "./help.js";
import { initHome } from "./home.js";
import { followInvite, initInvite } from "./invite.js";
import { bindKeys } from "./keys.js";
import { applyMute, toggleMute } from "./mute.js";
import {
  askLinkCode,
  forgetProfile,
  go,
  makeProfile,
  playDaily,
  redeemLinkCode,
  rename,
  route,
  setPublic,
  withProfile,
} from "./profile.js";
import { armRepair, askHint, cancelModes, tableActions } from "./play.js";
import { initTable, render, tick } from "./render.js";
import { SCREENS, toast } from "./screens.js";
import { canContinue, continueRound, goHome, leaveMatch, takeSeatBack } from "./seat.js";
import { createTable, joinTable, playAgain, quickMatch, resumeLast, watchTable } from "./start.js";
import { dispatch, getState, subscribe } from "./state.js";
import { forgetSeat, loadPrefs, loadSeat, saveSeat } from "./store.js";
import { initWatch } from "./watch.js";
import { initYou } from "./you.js";

subscribe(render);
subscribe(followInvite); // the invitation's own socket, while it shows
handleEvents(connectionEvents);
initTable(tableActions);
setInterval(tick, 250);

$("btn-back").addEventListener("click", takeSeatBack);
$("btn-continue").addEventListener("click", () => continueRound());
$("btn-start").addEventListener("click", () => send({ type: "start" }));
$("btn-lobby-leave").addEventListener("click", goHome);
$("btn-copy").addEventListener("click", async () => {
  const link = input("lobby-link").value;
  try {
    await navigator.clipboard.writeText(link);
    toast("Link copied — send it to a friend.", "info");
  } catch {
    input("lobby-link").select();
    toast("Select the link and copy it.", "info");
  }
});
$("btn-leave").addEventListener("click", leaveMatch);
$("btn-home").addEventListener("click", goHome);
$("btn-again").addEventListener("click", playAgain);
$("btn-verify").addEventListener("click", async () => {
  const tv = getState().tv;
  if (!tv) return;
  dispatch({ type: "verify", verified: { table_id: tv.table_id, state: "checking", text: "Checking…" } });
  try {
    dispatch({ type: "verify", verified: await checkMatch(tv, loadSeat()?.commitment || null) });
  } catch (exc) {
    dispatch({ type: "verify", verified: { table_id: tv.table_id, state: "bad", text: `✗ Could not check the match: ${exc}.` } });
  } finally {
    $("verify-result").scrollIntoView({ block: "nearest" }); // the answer in view, on a phone too
  }
});
$("hint-close").addEventListener("click", () => dispatch({ type: "hint", text: null }));

initHelp();
$("btn-sound").addEventListener("click", toggleMute);

bindKeys({
  atTable: () => getState().screen === "table" && Boolean(getState().tv),
  help: openHelp,
  toggleMute,
  draw: (source) => tableActions.draw(source),
  slot: (i) => tableActions.slot(i),
  throwCard: () => tableActions.throwCard(),
  repair: (i) => tableActions.repair(i),
  armRepair,
  cancel: cancelModes,
  toggleHistory: () => tableActions.toggleHistory(),
  askHint,
  canContinue,
  continueRound,
});

// A game's first request makes this device's profile first, if it has none (js/profile.js).
initInvite({
  error: (text) => toast(text),
  home: () => dispatch({ type: "show", screen: "home" }),
  join: withProfile(joinTable),
});

initHome({
  error: (text) => toast(text),
  quickMatch: withProfile(quickMatch),
  create: withProfile(createTable),
  join: withProfile(joinTable),
});

initYou({
  make: makeProfile,
  rename,
  setPublic,
  linkCode: askLinkCode,
  redeem: redeemLinkCode,
  forget: forgetProfile,
  error: (text) => toast(text),
});
$("btn-play-daily").addEventListener("click", playDaily);
for (const control of document.querySelectorAll("[data-go]")) {
  const screen = /** @type {import("./reduce.js").Screen} */ (/** @type {HTMLElement} */ (control).dataset.go);
  control.addEventListener("click", () => go(screen));
}
// The profile's screens live at the address's fragment (#you, #leaderboard, #daily): Back and Forward move between them.
window.addEventListener("popstate", route);
window.addEventListener("hashchange", route);

initWatch({
  error: (text) => toast(text),
  info: (text) => toast(text, "info"),
  watch: watchTable,
});

$("btn-resume").addEventListener("click", resumeLast);
$("btn-forget").addEventListener("click", () => {
  forgetSeat();
  saveSeat(null);
  $("resume-banner").hidden = true;
});

applyMute(loadPrefs().muted);
for (const s of SCREENS) $(`screen-${s}`).hidden = s !== "loading";
connect();
if ("serviceWorker" in navigator && window.isSecureContext) {
  navigator.serviceWorker.register("/sw.js").catch(() => {});
}

// A handle for tests and curious players: the state now (read-only), and the connection.
Object.defineProperty(window, "rackem", {
  value: Object.freeze({
    get state() {
      return getState();
    },
    conn,
  }),
  writable: false,
});
