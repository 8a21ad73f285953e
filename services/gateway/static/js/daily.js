// @ts-check
// The Daily Rack screen: today's deal (its day, when it closes, its commitment), this
// profile's result, *Play today's deal* while it has none, the day's board (score and
// own turns), and the day before's seed to check its entries with. Drawn from the
// `daily` answer; a server without the Daily Rack says so instead.

import { el } from "./cards.js";
import { $ } from "./dom.js";

/** @typedef {import("./profile-state.js").ProfileState} ProfileState */

/** @param {ProfileState} profile */
export function renderDaily(profile) {
  const daily = profile.daily;
  $("daily-note").textContent = profile.dailyNote || "";
  $("daily-note").hidden = !profile.dailyNote;
  $("daily-day").hidden = !daily;
  $("daily-fair").hidden = !daily;
  $("daily-board-box").hidden = !daily;
  const play = $("btn-play-daily");
  if (!daily) {
    $("daily-you").textContent = profile.dailyNote ? "" : "Loading…";
    play.hidden = true;
    return;
  }
  const you = daily.you;
  if (!you) {
    $("daily-you").textContent =
      profile.status === "bound"
        ? "You have not played today's deal yet."
        : "You have not played today's deal yet: playing it starts your profile.";
  } else if (you.finished === false) {
    $("daily-you").textContent = "Your game of today's deal has not finished yet.";
  } else {
    $("daily-you").textContent = `Your result today: ${you.score} points in ${you.own_turns} turns of your own${you.won ? ", a win" : ""}.`;
  }
  play.hidden = Boolean(you) || profile.status === "unavailable";
  $("daily-commitment").textContent = daily.commitment;
  const previous = daily.previous;
  $("daily-prev-label").textContent = previous ? `Seed of ${previous.day}` : "The day before";
  $("daily-prev-seed").textContent = previous ? previous.seed : "none yet";
  $("daily-rows").replaceChildren(
    ...(daily.board.length
      ? daily.board.map((e) =>
          el(
            "tr",
            {},
            el("td", { class: "num" }, String(e.place)),
            el("td", {}, e.name),
            el("td", { class: "num" }, String(e.score)),
            el("td", { class: "num" }, String(e.own_turns)),
          ),
        )
      : [el("tr", {}, el("td", { colspan: "4", class: "note" }, "Nobody has finished today's deal yet."))]),
  );
  tickDaily(profile, Date.now());
}

/** When today's deal closes (every quarter second while the screen shows). @param {ProfileState} profile @param {number} now */
export function tickDaily(profile, now) {
  const daily = profile.daily;
  if (!daily) return;
  const left = Math.max(0, Math.round((daily.closes_ms - now) / 60000));
  const hours = Math.floor(left / 60);
  const text = `Today's deal: ${daily.day}, open for ${hours ? `${hours} h ` : ""}${left % 60} min more.`;
  const box = $("daily-day");
  if (box.textContent !== text) box.textContent = text;
}
