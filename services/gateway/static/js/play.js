// @ts-check
// Playing a turn: what the table's controls and keys do (`tableActions`), a move sent
// only when the view's `legal` allows it (`sendMove`, with `withGoOut` for the bonus
// rule's Stay in), and why a control does nothing now when it does not (`explainBlocked`).

import { conn } from "./conn.js";
import { $, input } from "./dom.js";
import { render } from "./render.js";
import { announce, showHint, toast } from "./screens.js";
import { isPlaying } from "./selectors.js";
import { state } from "./state.js";
import { legalSets, seatName } from "./table.js";

/** What the table's controls do (js/table.js's TableScreen calls them; so do the keys). */
export const tableActions = {
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
};

/** R pressed: the next digit repairs, if a repair is legal now (else say why not). */
export function armRepair() {
  const ok = Boolean(state.tv && legalSets(state.tv, state.pending).repair.size);
  if (ok) {
    state.repairMode = true;
    announce("Repair: press 1 to 9 to swap that slot with the next one.");
    render();
  } else if (state.tv && state.tv.view.rules.repair_token) {
    toast("No repair now: draw first, and the token works once a round.", "info");
  }
  return ok;
}

/** Escape: no repair armed, the history closed. */
export function cancelModes() {
  state.repairMode = false;
  state.historyOpen = false;
  render();
}

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
