// @ts-check
// The rackem web client: screens, the connection, and what each server message does.
// Protocol: docs/protocol.md. Everything the player sees comes from the server's
// `lobby` and `view` messages; the page never decides a move is legal by itself.

import { el } from "./cards.js";
import { checkMatch, renderMatchOver, renderRoundOver, tickRoundOver } from "./finish.js";
import { take as takeHint } from "./hints.js";
import { initHome } from "./home.js";
import { initInvite, inviteCode, inviteShown } from "./invite.js";
import { bindKeys } from "./keys.js";
import { renderLobby, tickLobby } from "./lobby.js";
import { errorText } from "./messages.js";
import { viewChanges } from "./changes.js";
import { Connection } from "./net.js";
import { scoredLength } from "./rules.js";
import { isMuted, play, setMuted } from "./sound.js";
import { forgetSeat, lastSeat, loadPrefs, loadSeat, saveSeat, updatePrefs } from "./store.js";
import { TableScreen, clockText, legalSets, seatName } from "./table.js";
import { canRematch, clearOffer, renderRematchLobby, showOffer } from "./rematch.js";
import { initWatch, onWatching, renderWatchLobby, renderWatchTable, spectatorsOption, stopWatching, watchedCode } from "./watch.js";
import { $, button, dialog, input } from "./dom.js";
import { isCovered, isMatchOver, isPlaying, isRoundOver, isSpectator, turnSeat } from "./selectors.js";

const SCREENS = ["home", "invite", "lobby", "table", "loading"];
// Where focus goes when a screen opens (never the page's body).
const SCREEN_FOCUS = {
  home: "home-title",
  invite: "invite-name",
  lobby: "lobby-title",
  table: "table-title",
};

/** @typedef {import("./selectors.js").TableView} TableView */

/**
 * The page's state: one object, written only here (the tests read it as window.rackem.state).
 * @typedef {object} AppState
 * @property {string} screen the screen shown (one of SCREENS)
 * @property {any} lobby the last `lobby` message while the table waits, else null
 * @property {TableView | null} tv the latest view of the table this page is at
 * @property {number} receivedAt when `tv` arrived (performance.now()), for the clocks
 * @property {{ id: string, version: number } | null} pending the move sent and not answered yet
 * @property {boolean} repairMode R pressed: the next slot key repairs
 * @property {boolean} historyOpen the recent-moves list is open (phone)
 * @property {string[]} log the recent moves' sentences, newest first (20 at most)
 * @property {(() => void) | null} afterLeft what to do once the server says `left`
 * @property {boolean} connected the socket is open and greeted
 * @property {number} lastTick the last second the clock ticked aloud
 * @property {any} verified the fair-deal check's answer for this match
 * @property {number} clockSeat the seat whose clock runs (-1: none), set by render()
 */

/** @type {AppState} */
const state = {
  screen: "loading",
  lobby: null,
  tv: null,
  receivedAt: 0,
  pending: null,
  repairMode: false,
  historyOpen: false,
  log: [],
  afterLeft: null,
  connected: false,
  lastTick: -1,
  verified: null,
  clockSeat: -1,
};

// -- screens, messages, announcements ------------------------------------------------------

function show(name) {
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
function showStart() {
  show(inviteCode() ? "invite" : "home");
}

let toastTimer = 0;
function toast(text, kind = "error") {
  const box = $("toast");
  box.textContent = text;
  box.className = `toast ${kind === "info" ? "info" : ""}`;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.hidden = true), kind === "info" ? 3500 : 5000);
  if (kind !== "info") play("error");
}

function announce(text) {
  const live = $("live");
  live.textContent = "";
  setTimeout(() => (live.textContent = text), 30);
}

function showHint(text) {
  if (!text) return;
  $("hint-text").textContent = text;
  $("hint").hidden = false;
}

// -- the connection ---------------------------------------------------------------------------

const conn = new Connection({
  url: Connection.defaultUrl(),
  onOpen() {
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
  onStatus(status) {
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
  onMessage(msg) {
    const handler = HANDLERS[msg.type];
    if (handler) handler(msg);
  },
});

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

// -- the table -------------------------------------------------------------------------------

function resetTable() {
  state.tv = null;
  state.log = [];
  state.pending = null;
  state.repairMode = false;
  state.historyOpen = false;
  state.verified = null;
  $("round-over").hidden = true;
  $("match-over").hidden = true;
  $("hint").hidden = true;
}

/** A `view` message: what changed (pure), then the page's state, its reactions, and drawing it. @param {TableView} tv */
function onView(tv) {
  const prev = state.tv && state.tv.table_id === tv.table_id ? state.tv : null;
  const changed = viewChanges(prev, tv, (s) => seatName(tv, s));
  if (changed.stale) return; // an older view arriving late
  keepView(tv, changed);
  reactTo(tv, changed);
  hintsFor(tv, changed.myTurn);
  document.title = changed.myTurn ? "Your turn — Rack'em" : "Rack'em — Rack-O online";
  show("table");
  render();
}

/**
 * The new view into the page's state and the browser's storage.
 * @param {TableView} tv
 * @param {import("./changes.js").Changes} changed
 */
function keepView(tv, changed) {
  if (changed.newTable) resetTable();
  state.tv = tv;
  state.lobby = null;
  state.receivedAt = performance.now();
  if (state.pending && tv.version > state.pending.version) state.pending = null;
  const seat = loadSeat();
  if (seat && !seat.commitment && tv.view.commitment) saveSeat({ ...seat, commitment: tv.view.commitment });
  if (changed.move) {
    state.log.unshift(changed.move);
    state.log.length = Math.min(state.log.length, 20);
  }
  if (changed.roundDealt) state.log.unshift(`Round ${tv.view.round_no} dealt`);
  if (changed.roundEnded) state.log.unshift(changed.roundEnded);
  if (isMatchOver(tv)) countFinished(tv);
  if (!legalSets(tv).repair.size) state.repairMode = false;
}

/**
 * Sounds and screen-reader announcements for what changed (the last announcement is the one read).
 * @param {TableView} tv
 * @param {import("./changes.js").Changes} changed
 */
function reactTo(tv, changed) {
  const v = tv.view;
  if (changed.move) {
    if (changed.moveByOther) announce(changed.move);
    play(changed.moveSound);
  }
  if (changed.turnStarted) {
    play("turn");
    const top = v.discard.length ? v.discard[v.discard.length - 1] : null;
    announce(
      `Your turn. Draw from the stock with S${top !== null && legalSets(tv).discard ? `, or take the ${top} from the discard pile with D` : ""}.`,
    );
  }
  if (changed.holding) {
    announce(
      v.held_from === "discard"
        ? `You hold ${v.held}. Place it with keys 1 to 0.`
        : `You drew ${v.held}. Place it with keys 1 to 0, or throw it with T.`,
    );
  }
  if (changed.roundEnded) {
    play("round");
    announce(`${changed.roundEnded} Press Enter to continue.`);
  }
  if (changed.matchEnded) {
    play(changed.won ? "win" : "round");
    announce(changed.won ? "You win the match!" : "The match is over.");
  }
}

function countFinished(tv) {
  if (tv.status === "ended" && tv.view.winner === null) return;
  const key = `rackem.counted.${tv.table_id}`;
  if (sessionStorage.getItem(key)) return;
  sessionStorage.setItem(key, "1");
  updatePrefs({ gamesFinished: loadPrefs().gamesFinished + 1 });
}

function hintsFor(tv, mine) {
  const v = tv.view;
  const rules = v.rules;
  // No hints for the computer's moves, nor for a spectator.
  if (!isPlaying(tv) || isCovered(tv) || isSpectator(tv)) return;
  let text = takeHint("marks", rules);
  if (!text && mine && v.phase === "draw") text = takeHint("draw", rules);
  if (!text && mine && v.phase === "resolve") {
    text = v.held_from === "discard" ? takeHint("discard", rules) : takeHint("place", rules) || takeHint("throw", rules);
  }
  if (!text && rules.run_to_go_out && scoredLength(v.rack, rules.descending) >= 6) text = takeHint("run", rules);
  if (text) showHint(text);
}

const table = new TableScreen({
  draw(source) {
    const tv = state.tv;
    if (!tv) return;
    const legal = legalSets(tv, state.pending);
    if (legal[source]) sendMove({ act: "draw", from: source });
    else explainBlocked(source === "stock" ? "stock" : "discard");
  },
  slot(i) {
    const tv = state.tv;
    if (!tv) return;
    if (state.repairMode) {
      if (legalSets(tv, state.pending).repair.has(i)) sendMove({ act: "repair", slot: i });
      else if (i === 9 && legalSets(tv, state.pending).repair.size) sendMove({ act: "repair", slot: 8 });
      return;
    }
    if (legalSets(tv, state.pending).place.has(i)) sendMove(withGoOut({ act: "place", slot: i }));
    else explainBlocked("slot");
  },
  throwCard() {
    const tv = state.tv;
    if (!tv) return;
    if (legalSets(tv, state.pending).throw) sendMove(withGoOut({ act: "throw" }));
    else explainBlocked("throw");
  },
  repair(i) {
    if (state.tv && legalSets(state.tv, state.pending).repair.has(i)) sendMove({ act: "repair", slot: i });
  },
  toggleRepair() {
    state.repairMode = !state.repairMode && Boolean(state.tv && legalSets(state.tv, state.pending).repair.size);
    if (state.repairMode) announce("Repair: choose two neighbouring slots to swap, R then a digit, or the ⇅ buttons.");
    render();
  },
  toggleHistory() {
    state.historyOpen = !state.historyOpen;
    render();
  },
});

function withGoOut(move) {
  const v = state.tv.view;
  if (v.rules.bonus && input("stay-in").checked) return { ...move, go_out: false };
  return move;
}

/** Say why a control does nothing now — the moments new players go wrong. */
function explainBlocked(what) {
  const tv = state.tv;
  const v = tv.view;
  if (state.pending) return;
  if (!state.connected) {
    toast("Not connected — reconnecting…");
    return;
  }
  if (!isPlaying(tv)) return;
  if (v.turn !== v.seat) {
    toast(`Wait for your turn — it is ${seatName(tv, v.turn)}'s.`, "info");
    return;
  }
  if (v.phase === "draw" && what === "slot") {
    showHint(
      "Draw a card first, from the stock or the discard pile. Cards never move between slots: you only replace one card with the card you draw.",
    );
  } else if (v.phase === "draw" && what === "throw") {
    toast("Draw a card first.", "info");
  } else if (v.phase === "resolve" && (what === "stock" || what === "discard")) {
    toast(`You already hold the ${v.held}: place it${v.held_from === "stock" ? " or throw it" : ""}.`, "info");
  } else if (v.phase === "resolve" && what === "throw" && v.held_from === "discard") {
    showHint("A card taken from the discard pile must be placed in your rack — it cannot be thrown back.");
  } else if (what === "discard" && !v.discard.length) {
    toast("The discard pile is empty.", "info");
  }
}

function sendMove(move) {
  const tv = state.tv;
  if (!tv || state.pending) return;
  const id = `m${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  if (!conn.send({ type: "move", move, id, version: tv.version })) {
    toast("Not connected — reconnecting…");
    return;
  }
  state.pending = { id, version: tv.version };
  state.repairMode = false;
  $("hint").hidden = true;
  render();
}

function render() {
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
function tick() {
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
setInterval(tick, 250);

// -- leaving, continuing, starting ----------------------------------------------------------------

/** Give up this tab's seat (a bot takes it if the match runs) and start from a clean connection. */
function leaveTable(after) {
  stopWatching();
  clearOffer();
  const had = loadSeat();
  forgetSeat();
  resetTable();
  state.lobby = null;
  const done = () => {
    state.afterLeft = null;
    conn.fresh();
    if (after) after();
  };
  if (had && state.connected) {
    state.afterLeft = done;
    conn.send({ type: "leave" });
    setTimeout(() => state.afterLeft === done && done(), 1500);
  } else {
    done();
  }
}

function goHome() {
  leaveTable(() => show("home"));
  show("home");
  history.replaceState(null, "", "/");
}

/** One tap or Enter: the seat is mine again (`continue` uncovers a covered seat). */
function takeSeatBack() {
  if (!isCovered(state.tv) || !conn.send({ type: "continue" })) return;
  button("btn-back").disabled = true;
  announce("Your seat is yours again.");
}
$("btn-back").addEventListener("click", takeSeatBack);

$("btn-continue").addEventListener("click", () => continueRound());
function continueRound() {
  if (isCovered(state.tv)) {
    takeSeatBack();
    return;
  }
  const tv = state.tv;
  if (!tv || $("round-over").hidden || (tv.continued || [])[tv.view.seat]) return;
  conn.send({ type: "continue" });
  button("btn-continue").disabled = true;
}

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
$("btn-leave").addEventListener("click", () => {
  const tv = state.tv;
  const running = tv && !isMatchOver(tv);
  if (running && !confirm("Leave the match? A computer player takes your seat for good.")) return;
  goHome();
});
$("btn-home").addEventListener("click", goHome);
$("btn-again").addEventListener("click", () => {
  const tv = state.tv;
  if (canRematch(tv) && state.connected) {
    // The same people again: the server seats everyone who answers at a new table.
    $("loading-text").textContent = "Asking for a rematch…";
    show("loading");
    conn.send({ type: "rematch" });
    return;
  }
  const prefs = loadPrefs();
  const rules = tv ? { ...tv.view.rules } : { players: prefs.players, ...prefs.rules };
  leaveTable(() => createTable(prefs.name || "Player", compactRules(rules), prefs.level, true));
});
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

function compactRules(rules) {
  const out = { players: rules.players };
  const defaults = { target: 500, max_recycles: 3, turn_cap: 200, tiebreak: "went_out" };
  for (const [key, value] of Object.entries(rules)) {
    if (key === "players") continue;
    if (key === "run_to_go_out") {
      if (value !== (rules.players === 2 ? 3 : 0)) out[key] = value;
    } else if (key in defaults) {
      if (value !== defaults[key]) out[key] = value;
    } else if (value === true) {
      out[key] = true;
    }
  }
  return out;
}

function createTable(name, rules, level, startNow) {
  $("loading-text").textContent = startNow ? "Dealing the cards…" : "Opening a table…";
  show("loading");
  conn.send({
    type: "create_table",
    name,
    rules,
    level,
    start_now: startNow,
    spectators: spectatorsOption(),
  });
}

// -- help, sound, startup ----------------------------------------------------------------------------

let helpOpener = null;
function openHelp() {
  const help = dialog("help");
  input("pref-hints").checked = loadPrefs().hints;
  helpOpener = document.activeElement;
  if (!help.open) help.showModal();
}
// Closing How to play gives focus back to what had it, or to the screen's heading.
$("help").addEventListener("close", () => {
  const back =
    helpOpener && helpOpener !== document.body && helpOpener.checkVisibility?.() ? helpOpener : $(SCREEN_FOCUS[state.screen] || "main");
  helpOpener = null;
  if (back) back.focus({ preventScroll: true });
});
$("btn-help").addEventListener("click", openHelp);
$("btn-howto").addEventListener("click", openHelp);
$("pref-hints").addEventListener("change", (e) =>
  updatePrefs({
    hints: /** @type {HTMLInputElement} */ (e.target).checked,
    gamesFinished: 0,
    hintsSeen: /** @type {HTMLInputElement} */ (e.target).checked ? [] : loadPrefs().hintsSeen,
  }),
);

function applyMute(muted) {
  setMuted(muted);
  const button = $("btn-sound");
  button.setAttribute("aria-pressed", String(muted));
  button.setAttribute("aria-label", muted ? "Unmute sounds (M)" : "Mute sounds (M)");
  button.title = muted ? "Sounds off — press M to turn them on" : "Sounds on — press M to mute";
}
function toggleMute() {
  applyMute(!isMuted());
  updatePrefs({ muted: isMuted() });
  announce(isMuted() ? "Sounds off" : "Sounds on");
  if (!isMuted()) play("draw");
}
$("btn-sound").addEventListener("click", toggleMute);

bindKeys({
  atTable: () => state.screen === "table" && Boolean(state.tv),
  help: openHelp,
  toggleMute,
  draw: (source) => table.actions.draw(source),
  slot: (i) => table.actions.slot(i),
  throwCard: () => table.actions.throwCard(),
  repair: (i) => table.actions.repair(i),
  armRepair: () => {
    const ok = Boolean(state.tv && legalSets(state.tv, state.pending).repair.size);
    if (ok) {
      state.repairMode = true;
      announce("Repair: press 1 to 9 to swap that slot with the next one.");
      render();
    } else if (state.tv && state.tv.view.rules.repair_token) {
      toast("No repair now: draw first, and the token works once a round.", "info");
    }
    return ok;
  },
  cancel: () => {
    state.repairMode = false;
    state.historyOpen = false;
    render();
  },
  toggleHistory: () => table.actions.toggleHistory(),
  canContinue: () => (!$("round-over").hidden && !button("btn-continue").disabled) || isCovered(state.tv),
  continueRound,
});

initInvite({
  error: (text) => toast(text),
  home: () => show("home"),
  join(name, code) {
    $("loading-text").textContent = `Joining table ${code}…`;
    show("loading");
    conn.send({ type: "join", code, name });
  },
});

initHome({
  error: (text) => toast(text),
  quickMatch(name, players) {
    $("loading-text").textContent = "Looking for a table…";
    show("loading");
    conn.send({ type: "quick_match", name, players });
  },
  create: (name, rules, level, startNow) => createTable(name, rules, level, startNow),
  join(name, code) {
    $("loading-text").textContent = `Joining table ${code}…`;
    show("loading");
    conn.send({ type: "join", code, name });
  },
});

initWatch({
  error: (text) => toast(text),
  info: (text) => toast(text, "info"),
  watch(code) {
    $("loading-text").textContent = `Watching table ${code}…`;
    show("loading");
    conn.send({ type: "watch", code });
  },
});

$("btn-resume").addEventListener("click", () => {
  const last = lastSeat();
  if (!last) return;
  saveSeat(last);
  $("loading-text").textContent = "Taking your seat again…";
  show("loading");
  conn.fresh();
});
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
