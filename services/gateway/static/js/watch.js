// @ts-check
// Watching a table as a spectator (docs/protocol.md, "Spectators"): the Watch form on
// the home screen, the watch link /?watch=CODE, the waiting room's watch link for a
// table open to spectators, and the spectator's table: every rack face down with what
// is public (placed pickups, the visible centre, every rack once a round is over),
// whose turn it is, the clocks and the scores. A spectator has no seat and no moves.
// The code watched is kept in sessionStorage; the state says whether the server took
// this page as a spectator (`watching`).

import { $, input } from "./dom.js";
import { normalCode } from "./home.js";
import { isSpectator } from "./selectors.js";

/** @typedef {import("./protocol.js").TableView} TableView */
/** @typedef {import("./protocol.js").Lobby} Lobby */

const KEY = "rackem.watch";

/** The link that opens a table as a spectator. @param {string} code */
export function watchLink(code) {
  return `${location.origin}/?watch=${encodeURIComponent(code)}`;
}

/** The code this tab watches or asked to watch (kept for a reload or a reconnect), or null. */
export function watchedCode() {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

/** Keep the code this tab watches (null: it watches nothing). @param {string | null} code */
export function rememberWatched(code) {
  try {
    if (code) sessionStorage.setItem(KEY, code);
    else sessionStorage.removeItem(KEY);
  } catch {
    /* storage disabled: a reload forgets what was watched */
  }
}

/**
 * The Watch form and the watch link. `handlers.watch(code)` sends `watch`.
 * @param {{ error: (text: string) => void, info: (text: string) => void, watch: (code: string) => void }} handlers
 */
export function initWatch(handlers) {
  const fromLink = normalCode(new URLSearchParams(location.search).get("watch"));
  if (fromLink.length === 6) {
    input("watch-code").value = fromLink;
    rememberWatched(fromLink);
  }
  $("form-watch").addEventListener("submit", (event) => {
    event.preventDefault();
    const code = normalCode(input("watch-code").value);
    if (code.length !== 6) {
      handlers.error("A room code has 6 letters and digits.");
      $("watch-code").focus();
      return;
    }
    rememberWatched(code);
    handlers.watch(code);
  });
  $("btn-copy-watch").addEventListener("click", async () => {
    const link = input("lobby-watch-link").value;
    try {
      await navigator.clipboard.writeText(link);
      handlers.info("Watch link copied: anyone with it can watch this table.");
    } catch {
      input("lobby-watch-link").select();
      handlers.info("Select the link and copy it.");
    }
  });
}

/** The waiting room: a watch link when the table is open to spectators; a spectator's note. */
/** @param {Lobby} lobby */
export function renderWatchLobby(lobby) {
  const open = lobby.spectators === "public";
  $("lobby-watch").hidden = !open;
  if (open) input("lobby-watch-link").value = watchLink(lobby.code);
  if (lobby.you < 0) {
    $("btn-start").hidden = true;
    $("lobby-note").textContent = "You are watching: the cards appear as soon as the host starts the match.";
  }
}

/**
 * The spectator's controls (no Play again: a rematch is for the players), and for
 * everyone at the table how many are watching.
 * @param {TableView} tv
 */
export function renderWatchTable(tv) {
  const watching = isSpectator(tv);
  $("btn-again").hidden = watching;
  if (watching) $("turn-text").title = "You are watching this table";
  const count = tv.watchers || 0;
  const info = $("table-info");
  let badge = /** @type {HTMLElement | null} */ (info.querySelector(".watchers"));
  if (!count) {
    if (badge) badge.remove();
    return;
  }
  if (!badge) {
    badge = document.createElement("span");
    badge.className = "watchers";
    info.append(badge);
  }
  badge.textContent = `${count} watching`;
  badge.title = `${count} spectator${count > 1 ? "s" : ""} watching this table (they see no rack)`;
}

/** Whether the spectators option of a new table is on. */
export function spectatorsOption() {
  return input("opt-spectators").checked ? "public" : "off";
}
