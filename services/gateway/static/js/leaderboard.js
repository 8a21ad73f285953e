// @ts-check
// The Leaderboard screen: the `leaderboard` answer (public profiles with an established
// rating, best first) as a table of place, name and rating.

import { el } from "./cards.js";
import { $ } from "./dom.js";

/** @typedef {import("./profile-state.js").ProfileState} ProfileState */

/** @param {ProfileState} profile */
export function renderLeaderboard(profile) {
  const entries = profile.leaderboard;
  const table = $("leaderboard-table");
  let note = profile.boardNote || "";
  if (!note && !entries) note = "Loading…";
  if (!note && entries && !entries.length) note = "Nobody is on the leaderboard yet.";
  $("leaderboard-note").textContent = note;
  table.hidden = !entries || !entries.length;
  $("leaderboard-rows").replaceChildren(
    ...(entries || []).map((e) =>
      el("tr", {}, el("td", { class: "num" }, String(e.place)), el("td", {}, e.name), el("td", { class: "num" }, String(e.rating))),
    ),
  );
}
