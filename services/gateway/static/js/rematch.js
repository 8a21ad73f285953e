// @ts-check
// Play again (docs/protocol.md, "Rematch"): after a finished match the button asks the
// server for a rematch with the same people; the others see the offer here, on their
// match-over screen (drawn from the state's `offer`), and accept with the same button.
// Whoever answers is seated at the new table (the usual `seated`, `lobby` and views follow).

import { $ } from "./dom.js";
import { isSpectator } from "./selectors.js";

/** @typedef {import("./protocol.js").TableView} TableView */
/** @typedef {import("./protocol.js").Lobby} Lobby */
/** @typedef {import("./protocol.js").RematchOffer} RematchOffer */

/** A finished match this page played a seat of: Play again asks for a rematch. @param {TableView | null} tv */
export function canRematch(tv) {
  return Boolean(tv && tv.status === "finished" && !isSpectator(tv));
}

/**
 * The others' rematch offer: who asked, who answered, and when it starts anyway (none: hidden).
 * @param {RematchOffer | null} offer
 * @param {number} now unix ms
 */
export function renderOffer(offer, now) {
  const note = $("rematch-offer");
  if (!offer) {
    note.hidden = true;
    note.textContent = "";
    return;
  }
  const asked = offer.seats.filter((s) => s.answered).map((s) => s.name);
  const waiting = offer.seats.filter((s) => !s.bot && !s.answered).length;
  let text;
  if (offer.status === "started") {
    text = "The rematch has started without you.";
  } else if (offer.status === "closed") {
    text = "The rematch was called off.";
  } else {
    const left = Math.max(0, Math.ceil((offer.deadline_ms - now) / 1000));
    text = `${asked.join(" and ")} ${asked.length > 1 ? "want" : "wants"} a rematch — press Play again to join.`;
    if (waiting && left) text += ` It starts in ${left} s, with the computer for anyone who has not answered.`;
  }
  note.textContent = text;
  note.hidden = false;
}

/** A rematch's waiting room (a private table without a creator): say what it waits for. @param {Lobby} lobby */
export function renderRematchLobby(lobby) {
  if (lobby.public || lobby.creator_seat >= 0 || lobby.you < 0) return;
  const waiting = lobby.seats.filter((s) => !s.taken).map((s) => s.name);
  $("lobby-title").textContent = "Rematch";
  $("lobby-note").textContent = waiting.length
    ? `Waiting for ${waiting.join(" and ")} to press Play again; the computer takes the seat of anyone who does not.`
    : "Everyone is here.";
}
