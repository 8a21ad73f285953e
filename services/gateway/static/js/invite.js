// @ts-check
// The invitation a share link opens (/?code=K7MX2Q): the table's code, your name, Join.
// "Other ways to play" goes to the ordinary home page.
//
// Who is waiting: a table open to spectators (`spectators: "public"`) shows its waiting
// room to anyone with the code, so while the invitation shows, a WebSocket of its own
// watches the code (docs/protocol.md, "Spectators") and lists the seats of each `lobby`
// it is sent: names, free seats, the host, computer players. The page's own connection
// never watches, so joining from the invitation is the ordinary `join`. A table not open
// to spectators answers `no_spectators`: the invitation then stays as it is (code, name,
// Join) and says nothing. The second connection closes when the invitation goes (Join,
// Other ways to play, any other screen) and once the table has started or closed.

import { el } from "./cards.js";
import { $, input } from "./dom.js";
import { normalCode } from "./home.js";
import { rulesText } from "./lobby.js";
import { Connection } from "./net.js";
import { loadPrefs, updatePrefs } from "./store.js";

/** The 6-character room code of the share link this page was opened with, or "". */
export function inviteCode() {
  const code = normalCode(new URLSearchParams(location.search).get("code"));
  return code.length === 6 ? code : "";
}

/** @typedef {import("./protocol.js").Lobby} Lobby */

/**
 * The invitation's form and its *Other ways to play*.
 * @param {{ join: (name: string, code: string) => void, error: (text: string) => void, home: () => void }} handlers
 */
export function initInvite({ join, error, home }) {
  const code = inviteCode();
  if (!code) return;
  $("invite-code").textContent = code;
  input("invite-name").value = loadPrefs().name;
  $("form-invite").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = input("invite-name").value.trim();
    if (!name || name.length > 20 || /[\u0000-\u001f\u007f]/.test(name)) {
      error("Type your name first (1 to 20 characters).");
      $("invite-name").focus();
      return;
    }
    updatePrefs({ name });
    input("name").value = name;
    stopPeek();
    join(name, code);
  });
  $("btn-invite-home").addEventListener("click", (event) => {
    event.preventDefault();
    history.replaceState(null, "", "/");
    stopPeek();
    home();
  });
}

/** The invitation's own connection, watching the table's waiting room, while it shows. @type {Connection | null} */
let peek = null;

/** The invitation showed at the last state (app.js subscribes `followInvite` to the store). */
let showing = false;

/**
 * The page's state changed: when the invitation opens, watch its table's waiting room;
 * when it goes, stop.
 * @param {import("./reduce.js").AppState} state
 */
export function followInvite(state) {
  const shown = state.screen === "invite";
  if (shown === showing) return;
  showing = shown;
  inviteShown(shown);
}

/** The invitation is shown (true) or not (false): watch its table's waiting room, or stop. @param {boolean} shown */
function inviteShown(shown) {
  if (!shown) {
    stopPeek();
    return;
  }
  const code = inviteCode();
  if (!code || peek) return;
  const conn = new Connection({
    url: Connection.defaultUrl(),
    onOpen: () => conn.send({ type: "watch", code }),
    onStatus: () => {},
    onMessage(msg) {
      if (peek !== conn) return;
      if (msg.type === "lobby") showWaiting(msg);
      else if (msg.type === "error" || msg.type === "view") stopPeek(); // not open to spectators, or gone
    },
  });
  peek = conn;
  conn.connect();
}

function stopPeek() {
  if (!peek) return;
  peek.close();
  peek = null;
}

/** The table's waiting room, as its spectators see it (names only: no card is dealt yet). */
/** @param {Lobby} lobby */
function showWaiting(lobby) {
  if (lobby.status !== "waiting") {
    stopPeek();
    $("invite-waiting").hidden = false;
    $("invite-seats").replaceChildren();
    $("invite-rules").textContent = "";
    $("invite-status").textContent =
      lobby.status === "started" ? "This table's match has already started." : "This table was closed by its host.";
    return;
  }
  const free = lobby.seats.filter((s) => !s.taken).length;
  $("invite-seats").replaceChildren(
    ...lobby.seats.map((s) =>
      el(
        "li",
        { class: s.taken ? "" : "free" },
        el("span", { class: "nm" }, s.taken ? s.name || `Seat ${s.seat + 1}` : "Free seat"),
        s.bot ? el("span", { class: "badge bot" }, "computer") : null,
        s.seat === lobby.creator_seat ? el("span", { class: "badge" }, "host") : null,
      ),
    ),
  );
  $("invite-rules").textContent = rulesText(lobby.rules) + (lobby.level ? ` · computer: ${lobby.level}` : "");
  $("invite-status").textContent = free ? `${free} free seat${free > 1 ? "s" : ""}: join to take one.` : "Every seat is taken.";
  $("invite-waiting").hidden = false;
  $("invite-name-note").textContent = "Shown to the players at this table and to anyone watching it.";
}
