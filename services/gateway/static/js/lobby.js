// @ts-check
// The waiting room: the code and share link, who has joined, Start for the creator,
// and the fill countdown of a quick-match table.

import { el } from "./cards.js";
import { $, input } from "./dom.js";

/** @typedef {import("./protocol.js").Lobby} Lobby */
/** @typedef {import("./protocol.js").Rules} Rules */

/** The link that invites a friend to the table. @param {string} code */
export function shareLink(code) {
  return `${location.origin}/?code=${encodeURIComponent(code)}`;
}

/** The rules in a line (those a player notices). @param {Rules | null | undefined} rules */
export function rulesText(rules) {
  if (!rules) return "";
  const parts = [`${rules.players} players`, `play to ${rules.target}`];
  if (rules.run_to_go_out) parts.push(`run of ${rules.run_to_go_out} to go out`);
  for (const [key, label] of [
    ["bonus", "bonus"],
    ["partners", "partners"],
    ["descending", "descending"],
    ["repair_token", "repair token"],
    ["visible_center", "visible centre"],
    ["reshuffle_on_recycle", "reshuffle"],
  ]) {
    if (rules[/** @type {keyof Rules} */ (key)]) parts.push(label);
  }
  return parts.join(" · ");
}

/** The waiting room. @param {Lobby} lobby */
export function renderLobby(lobby) {
  const isPublic = lobby.public || lobby.creator_seat < 0;
  $("lobby-title").textContent = isPublic ? "Finding players…" : "Waiting for friends";
  $("lobby-code").textContent = lobby.code;
  $("lobby-code-box").hidden = isPublic;
  $("lobby-share").hidden = isPublic;
  input("lobby-link").value = shareLink(lobby.code);
  const seats = $("lobby-seats");
  seats.replaceChildren(
    ...lobby.seats.map((s) => {
      const you = s.seat === lobby.you;
      const li = el(
        "li",
        { class: `${s.taken ? "" : "free"} ${you ? "you" : ""}` },
        el("span", { class: "nm" }, s.taken ? s.name || `Seat ${s.seat + 1}` : "Free seat"),
        you ? el("span", { class: "badge you" }, "you") : null,
        s.bot ? el("span", { class: "badge bot" }, "computer") : null,
        s.seat === lobby.creator_seat ? el("span", { class: "badge" }, "host") : null,
      );
      return li;
    }),
  );
  $("lobby-rules").textContent = rulesText(lobby.rules) + (lobby.level ? ` · computer: ${lobby.level}` : "");
  const creator = lobby.creator_seat >= 0 && lobby.creator_seat === lobby.you;
  $("btn-start").hidden = !creator || lobby.status !== "waiting";
  const free = lobby.seats.filter((s) => !s.taken).length;
  $("lobby-note").textContent = creator
    ? free
      ? `Share the code or the link. Start whenever you like: computer players take the ${free} free seat${free > 1 ? "s" : ""}.`
      : "Everyone is here."
    : isPublic
      ? "The match starts when the table is full, or computer players fill the free seats when the timer runs out."
      : "Waiting for the host to start the match.";
  tickLobby(lobby);
}

/** Update the fill countdown (called every second while the lobby shows). @param {Lobby | null} lobby */
export function tickLobby(lobby) {
  const fill = $("lobby-fill");
  if (!lobby || !lobby.fill_deadline_ms) {
    fill.hidden = true;
    return;
  }
  const left = Math.max(0, Math.ceil((lobby.fill_deadline_ms - Date.now()) / 1000));
  fill.hidden = false;
  fill.textContent = left > 0 ? `Starting in ${left} s` : "Starting…";
}
