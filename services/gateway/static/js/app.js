// @ts-check
// The rackem web client's wiring: the modules below hooked to the connection, the
// page's buttons and keys, then the first screen and the connection opened.
// Protocol: docs/protocol.md. Everything the player sees comes from the server's
// `lobby` and `view` messages; the page never decides a move is legal by itself.
// What each module holds: docs/web.md, "Files".

import { conn, handleEvents } from "./conn.js";
import { $, button, input } from "./dom.js";
import { checkMatch } from "./finish.js";
import { connectionEvents } from "./handlers.js";
import { openHelp, initHelp } from "./help.js";
import { initHome } from "./home.js";
import { initInvite } from "./invite.js";
import { bindKeys } from "./keys.js";
import { applyMute, toggleMute } from "./mute.js";
import { armRepair, cancelModes, tableActions } from "./play.js";
import { initTable, tick } from "./render.js";
import { SCREENS, show, toast } from "./screens.js";
import { canContinue, continueRound, goHome, leaveMatch, takeSeatBack } from "./seat.js";
import { createTable, joinTable, playAgain, quickMatch, resumeLast, watchTable } from "./start.js";
import { state } from "./state.js";
import { forgetSeat, loadPrefs, loadSeat, saveSeat } from "./store.js";
import { initWatch } from "./watch.js";

handleEvents(connectionEvents);
initTable(tableActions);
setInterval(tick, 250);

$("btn-back").addEventListener("click", takeSeatBack);
$("btn-continue").addEventListener("click", () => continueRound());
$("btn-start").addEventListener("click", () => conn.send({ type: "start" }));
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
  const tv = state.tv;
  if (!tv) return;
  button("btn-verify").disabled = true;
  try {
    state.verified = await checkMatch(tv, (loadSeat() || {}).commitment || null);
  } finally {
    button("btn-verify").disabled = false;
    $("verify-result").scrollIntoView({ block: "nearest" }); // the answer in view, on a phone too
  }
});
$("hint-close").addEventListener("click", () => ($("hint").hidden = true));

initHelp();
$("btn-sound").addEventListener("click", toggleMute);

bindKeys({
  atTable: () => state.screen === "table" && Boolean(state.tv),
  help: openHelp,
  toggleMute,
  draw: (source) => tableActions.draw(source),
  slot: (i) => tableActions.slot(i),
  throwCard: () => tableActions.throwCard(),
  repair: (i) => tableActions.repair(i),
  armRepair,
  cancel: cancelModes,
  toggleHistory: () => tableActions.toggleHistory(),
  canContinue,
  continueRound,
});

initInvite({
  error: (text) => toast(text),
  home: () => show("home"),
  join: joinTable,
});

initHome({
  error: (text) => toast(text),
  quickMatch,
  create: createTable,
  join: joinTable,
});

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
conn.connect();
if ("serviceWorker" in navigator && window.isSecureContext) {
  navigator.serviceWorker.register("/sw.js").catch(() => {});
}

// A handle for tests and curious players: read-only state.
Object.defineProperty(window, "rackem", { value: Object.freeze({ state, conn }), writable: false });
