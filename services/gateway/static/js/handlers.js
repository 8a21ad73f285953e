// @ts-check
// What the connection's events do (app.js hooks them into js/conn.js): on each
// (re)connection resume the seat or the watched table, the top bar's connection
// status, and what each server message does (docs/protocol.md).

import { el } from "./cards.js";
import { conn } from "./conn.js";
import { $ } from "./dom.js";
import { renderLobby } from "./lobby.js";
import { errorText } from "./messages.js";
import { clearOffer, renderRematchLobby, showOffer } from "./rematch.js";
import { render } from "./render.js";
import { show, showStart, toast } from "./screens.js";
import { resetTable, state } from "./state.js";
import { forgetSeat, loadSeat, saveSeat } from "./store.js";
import { onView } from "./view.js";
import { onWatching, renderWatchLobby, stopWatching, watchedCode } from "./watch.js";

/** @type {import("./conn.js").ConnectionEvents} */
export const connectionEvents = {
  open() {
    state.connected = true;
    const seat = loadSeat();
    if (seat) {
      conn.send({ type: "resume", token: seat.token });
      if (state.screen === "loading") $("loading-text").textContent = "Taking your seat again…";
    } else if (watchedCode()) {
      conn.send({ type: "watch", code: watchedCode() });
      if (state.screen === "loading") $("loading-text").textContent = `Watching table ${watchedCode()}…`;
    } else if (state.screen === "loading" && !conn.queue.length) {
      showStart();
    }
    $("offline-note").hidden = true;
    render();
  },
  status(status) {
    const box = $("conn");
    if (status.state === "open") {
      box.replaceChildren();
      return;
    }
    state.connected = false;
    if (status.state === "waiting") {
      const secs = Math.max(1, Math.round((status.retryAt - Date.now()) / 1000));
      box.replaceChildren(
        el("span", {}, `Connection lost — retrying in ${secs} s`),
        el("button", { type: "button", class: "btn small", onclick: () => conn.retryNow() }, "Retry now"),
      );
      // Offline (or the server is away): show the start screen and keep retrying quietly.
      if (state.screen === "loading" && !conn.queue.length) showStart();
      $("offline-note").hidden = state.screen !== "home" && state.screen !== "invite";
    } else if (status.attempt > 0) {
      box.replaceChildren(el("span", {}, "Reconnecting…"));
    }
    render();
  },
  message(msg) {
    const handler = HANDLERS[msg.type];
    if (handler) handler(msg);
  },
};

const HANDLERS = {
  watching(msg) {
    onWatching(msg);
    resetTable();
    $("loading-text").textContent = `Watching table ${msg.code}…`;
    if (state.screen !== "lobby") show("loading");
  },
  rematch_offer: showOffer,
  seated(msg) {
    stopWatching();
    clearOffer();
    const previous = loadSeat();
    const sameTable = previous && previous.table_id === msg.table_id;
    saveSeat({
      token: msg.token,
      seat: msg.seat,
      code: msg.code,
      table_id: msg.table_id,
      commitment: sameTable ? previous.commitment || null : null,
    });
    if (!state.tv || state.tv.table_id !== msg.table_id) {
      resetTable();
      $("loading-text").textContent = "Taking a seat…";
      if (state.screen !== "lobby") show("loading");
    }
  },
  lobby(msg) {
    state.lobby = msg;
    if (msg.status === "closed") {
      forgetSeat();
      state.lobby = null;
      show("home");
      toast("The table was closed by its host.");
      conn.fresh();
      return;
    }
    if (msg.status === "waiting") {
      renderLobby(msg);
      renderWatchLobby(msg);
      renderRematchLobby(msg);
      show("lobby");
    } else if (!state.tv) {
      $("loading-text").textContent = "Dealing the cards…";
      show("loading");
    }
  },
  view: onView,
  moved() {},
  pong() {},
  left() {
    const after = state.afterLeft;
    state.afterLeft = null;
    if (after) after();
  },
  error(msg) {
    if (["no_spectators", "spectators_full", "no_code"].includes(msg.code) && watchedCode() && !loadSeat()) {
      stopWatching(); // the table cannot be watched: back home, not asking again on reconnect
    }
    if (msg.code === "bad_token") {
      forgetSeat();
      resetTable();
      show("home");
      toast("Your seat is no longer available — the table has ended or someone else took it.");
      return;
    }
    if (state.pending && (!msg.id || msg.id === state.pending.id)) state.pending = null;
    if (state.screen === "loading") show(loadSeat() && state.tv ? "table" : "home");
    if (msg.code !== "stale_version") toast(errorText(msg));
    render();
  },
};
