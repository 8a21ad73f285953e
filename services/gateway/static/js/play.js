// @ts-check
// Playing a turn: what the table's controls and keys do (`tableActions`), a move sent
// only when the view's `legal` allows it (`sendMove`, with `withGoOut` for the bonus
// rule's Stay in), and why a control does nothing now when it does not (`explainBlocked`).
// What they change of the page's state they dispatch (js/reduce.js).

import { send } from "./conn.js";
import { input } from "./dom.js";
import { canRepair, isConnected } from "./reduce.js";
import { announce, toast } from "./screens.js";
import { hintsAllowed, isCovered, isMyTurn, isPlaying, legalSets, seatName } from "./selectors.js";
import { dispatch, getState } from "./state.js";

/** @typedef {import("./protocol.js").Move} Move */

/** Legal moves now, none while a move is on its way. */
function legalNow() {
  const { tv, pending } = getState();
  return tv ? legalSets(tv, pending) : null;
}

/** What the table's controls do (js/table.js's TableScreen calls them; so do the keys). @type {import("./table.js").TableActions} */
export const tableActions = {
  draw(source) {
    const legal = legalNow();
    if (!legal) return;
    if (legal[source]) sendMove({ act: "draw", from: source });
    else explainBlocked(source === "stock" ? "stock" : "discard");
  },
  slot(i) {
    const legal = legalNow();
    if (!legal) return;
    if (getState().repairMode) {
      if (legal.repair.has(i)) sendMove({ act: "repair", slot: i });
      else if (i === 9 && legal.repair.size) sendMove({ act: "repair", slot: 8 });
      return;
    }
    if (legal.place.has(i)) sendMove(withGoOut({ act: "place", slot: i }));
    else explainBlocked("slot");
  },
  throwCard() {
    const legal = legalNow();
    if (!legal) return;
    if (legal.throw) sendMove(withGoOut({ act: "throw" }));
    else explainBlocked("throw");
  },
  repair(i) {
    const legal = legalNow();
    if (legal && legal.repair.has(i)) sendMove({ act: "repair", slot: i });
  },
  toggleRepair() {
    dispatch({ type: "repair_toggled" });
    if (getState().repairMode) announce("Repair: choose two neighbouring slots to swap, R then a digit, or the ⇅ buttons.");
  },
  toggleHistory() {
    dispatch({ type: "history_toggled" });
  },
  askHint,
};

/**
 * Hint (or A): ask the server for the move the computer would make now — only at a table
 * where hints are allowed, on this seat's own decision, once a turn's decision.
 */
export function askHint() {
  const { tv, pending, coach } = getState();
  if (!tv || !hintsAllowed(tv)) return;
  if (!isMyTurn(tv) || isCovered(tv)) {
    toast(isPlaying(tv) ? `Wait for your turn — it is ${seatName(tv, tv.view.turn)}'s.` : "No hint now.", "info");
    return;
  }
  if (pending || (coach && coach.version === tv.version)) return;
  const id = `h${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  if (!send({ type: "hint", id, version: tv.version })) {
    toast("Not connected — reconnecting…");
    return;
  }
  dispatch({ type: "hint_asked", id, version: tv.version });
}

/** R pressed: the next digit repairs, if a repair is legal now (else say why not). */
export function armRepair() {
  const state = getState();
  const ok = canRepair(state);
  if (ok) {
    dispatch({ type: "repair_armed" });
    announce("Repair: press 1 to 9 to swap that slot with the next one.");
  } else if (state.tv && state.tv.view.rules.repair_token) {
    toast("No repair now: draw first, and the token works once a round.", "info");
  }
  return ok;
}

/** Escape: no repair armed, the history closed. */
export function cancelModes() {
  dispatch({ type: "modes_cancelled" });
}

/** The bonus rule's Stay in: a winning place or throw that does not go out. @param {Move} move */
function withGoOut(move) {
  const tv = getState().tv;
  if (tv && tv.view.rules.bonus && input("stay-in").checked) return { ...move, go_out: false };
  return move;
}

/**
 * Say why a control does nothing now — the moments new players go wrong.
 * @param {"stock" | "discard" | "slot" | "throw"} what
 */
function explainBlocked(what) {
  const state = getState();
  const tv = state.tv;
  if (!tv || state.pending) return;
  const v = tv.view;
  if (!isConnected(state)) {
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

/** @param {string} text */
function showHint(text) {
  dispatch({ type: "hint", text });
}

/** Send `move` for the view shown, once: the table waits (`pending`) until it is answered. @param {Move} move */
function sendMove(move) {
  const { tv, pending } = getState();
  if (!tv || pending) return;
  const id = `m${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  if (!send({ type: "move", move, id, version: tv.version })) {
    toast("Not connected — reconnecting…");
    return;
  }
  dispatch({ type: "move_sent", id, version: tv.version });
}
