// @ts-check
// The You screen (docs/web.md, "Profiles"): the profile's name (rename), its rating (and
// whether it is still provisional), the leaderboard choice, the record in all and per
// player count, the last matches with their replay links, the rating's course
// (js/chart.js), *Link another device* (a one-time code and its countdown), *Have a
// code?* for this device, and *Forget me* behind a confirmation. `renderYou` draws it
// from the state; `initYou` hooks its controls to what they do.

import { el } from "./cards.js";
import { ratingChart, ratingCourse } from "./chart.js";
import { $, dialog, input } from "./dom.js";
import { normalCode } from "./home.js";

/** @typedef {import("./profile-state.js").ProfileState} ProfileState */
/** @typedef {import("./protocol.js").Stats} Stats */
/** @typedef {import("./protocol.js").StatLine} StatLine */
/** @typedef {import("./protocol.js").HistoryMatch} HistoryMatch */

/**
 * What the You screen's controls do (js/profile.js).
 * @typedef {object} YouActions
 * @property {() => void} make *Start my profile*
 * @property {(name: string) => void} rename
 * @property {(visible: boolean) => void} setPublic
 * @property {() => void} linkCode *Get a code*
 * @property {(code: string) => void} redeem *Have a code?*
 * @property {() => void} forget *Forget me*, confirmed
 * @property {(text: string) => void} error
 */

/** @param {YouActions} actions */
export function initYou(actions) {
  $("btn-make-profile").addEventListener("click", actions.make);
  $("form-rename").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = input("you-name").value.trim();
    if (!name || name.length > 20 || /[\u0000-\u001f\u007f]/.test(name)) {
      actions.error("A name has 1 to 20 characters.");
      $("you-name").focus();
      return;
    }
    actions.rename(name);
  });
  $("you-public").addEventListener("change", () => actions.setPublic(input("you-public").checked));
  $("btn-link-code").addEventListener("click", actions.linkCode);
  $("form-link").addEventListener("submit", (event) => {
    event.preventDefault();
    const code = normalCode(input("link-code").value);
    if (code.length !== 6) {
      actions.error("A code has 6 letters and digits.");
      $("link-code").focus();
      return;
    }
    input("link-code").value = "";
    actions.redeem(code);
  });
  const confirmForget = dialog("forget-dialog");
  $("btn-forget-me").addEventListener("click", () => {
    confirmForget.returnValue = "";
    confirmForget.showModal();
  });
  confirmForget.addEventListener("close", () => {
    if (confirmForget.returnValue !== "forget") return;
    $("you-title").focus(); // the profile's controls go with it
    actions.forget();
  });
}

/** The You screen, and the home screen's *You* button (with the rating). @param {ProfileState} profile */
export function renderYou(profile) {
  const me = profile.status === "bound" ? profile.me : null;
  $("btn-you").textContent = me ? `You · ${me.rating.value}` : "You";
  $("you-status").textContent = statusText(profile);
  $("you-note").textContent = profile.note || "";
  $("you-note").hidden = !profile.note;
  $("you-none").hidden = profile.status !== "none";
  $("you-profile").hidden = !me;
  if (!me) return;
  $("you-rating").textContent = `Rating ${me.rating.value}`;
  $("you-provisional").hidden = !me.rating.provisional;
  $("you-rating-note").textContent = me.rating.provisional
    ? "Provisional: it settles after about ten rated matches (quick matches between players with profiles)."
    : "";
  const name = input("you-name");
  if (document.activeElement !== name || name.dataset.shown !== me.name) {
    name.value = me.name;
    name.dataset.shown = me.name;
  }
  // The checkbox as the server answered, once per answer: a click waits for it unchanged.
  const visible = input("you-public");
  if (visible.dataset.shown !== String(me.public)) {
    visible.checked = me.public;
    visible.dataset.shown = String(me.public);
  }
  renderStats(me.stats);
  renderHistory(profile.history);
  $("you-link").hidden = !profile.link;
  $("you-link-code").textContent = profile.link ? profile.link.code : "";
  tickYou(profile, Date.now());
}

/** What the top of the You screen says of the profile. @param {ProfileState} profile */
function statusText(profile) {
  switch (profile.status) {
    case "binding":
    case "making":
      return "Opening your profile…";
    case "unavailable":
      return "Profiles are not available on this server right now: you can still play.";
    case "none":
      return profile.forgotten ? "Your profile is forgotten: nothing of it is kept, on the server or in this browser." : "";
    default:
      return "";
  }
}

/** The link code's countdown (every quarter second while it shows). @param {ProfileState} profile @param {number} now */
export function tickYou(profile, now) {
  if (!profile.link) return;
  const left = Math.ceil((profile.link.expires_ms - now) / 1000);
  const text =
    left > 0
      ? `Type it on the other device within ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}.`
      : "This code has expired: get a new one.";
  const box = $("you-link-left");
  if (box.textContent !== text) box.textContent = text;
  $("you-link").classList.toggle("expired", left <= 0);
}

const STAT_ROWS = /** @type {const} */ ([
  ["played", "Matches played"],
  ["won", "Matches won"],
  ["rounds_won", "Rounds won"],
  ["mean_own_turns_to_go_out", "Own turns to go out (mean)"],
  ["best_bonus_run", "Best bonus run"],
]);

/** The record: a row per number, a column for all matches and one per player count played. @param {Stats} stats */
function renderStats(stats) {
  const counts = Object.keys(stats.by_players || {})
    .filter((n) => (stats.by_players?.[n]?.played || 0) > 0)
    .sort();
  /** @type {[string, StatLine][]} */
  const columns = [["All", stats], ...counts.map((n) => /** @type {[string, StatLine]} */ ([`${n} players`, stats.by_players?.[n]]))];
  $("you-stats").replaceChildren(
    el("thead", {}, el("tr", {}, el("td", {}), ...columns.map(([label]) => el("th", { scope: "col" }, label)))),
    el(
      "tbody",
      {},
      ...STAT_ROWS.map(([key, label]) =>
        el("tr", {}, el("th", { scope: "row" }, label), ...columns.map(([, line]) => el("td", {}, statText(line[key])))),
      ),
    ),
  );
}

/** @param {number | null | undefined} value */
function statText(value) {
  if (value === null || value === undefined) return "–";
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

/** @param {number} place @param {number} of */
function placeText(place, of) {
  const suffix = place === 1 ? "st" : place === 2 ? "nd" : place === 3 ? "rd" : "th";
  return `${place}${suffix} of ${of}`;
}

/** The last matches, newest first, and the rating's course above them. @param {HistoryMatch[] | null} matches */
function renderHistory(matches) {
  const chartBox = $("you-chart");
  if (!matches) {
    chartBox.replaceChildren(el("p", { class: "note" }, "Loading…"));
    $("you-history").replaceChildren();
    return;
  }
  const chart = ratingChart(ratingCourse(matches));
  chartBox.replaceChildren(
    chart ||
      el("p", { class: "note" }, "Play rated matches (quick matches between players with profiles) to see your rating's course here."),
  );
  if (!matches.length) {
    $("you-history").replaceChildren(el("li", { class: "empty" }, "No matches yet: the ones you play show here."));
    return;
  }
  $("you-history").replaceChildren(...matches.map(matchItem));
}

/** One match of the history. @param {HistoryMatch} m */
function matchItem(m) {
  const when = new Date(m.finished_ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  const players = m.players
    .slice()
    .sort((a, b) => a.seat - b.seat)
    .map((p) => el(p.seat === m.seat ? "b" : "span", {}, `${p.name}${p.bot ? " (computer)" : ""} ${p.score}`));
  const joined = players.flatMap((p, i) => (i ? [" · ", p] : [p]));
  let rating = "unrated";
  if (m.rated && m.rating_before !== null && m.rating_after !== null) {
    const change = m.rating_after - m.rating_before;
    rating = `rating ${m.rating_before} → ${m.rating_after} (${change >= 0 ? "+" : "−"}${Math.abs(change)})`;
  }
  return el(
    "li",
    { class: m.place === 1 ? "won" : "" },
    el(
      "div",
      { class: "match-head" },
      el("time", { datetime: new Date(m.finished_ms).toISOString() }, when),
      el("span", { class: "place" }, placeText(m.place, m.players.length)),
    ),
    el("div", { class: "match-players" }, ...joined),
    el(
      "div",
      { class: "match-foot" },
      el("span", { class: m.rated ? "rated" : "note" }, rating),
      m.replay
        ? el("a", { class: "btn small", href: replayHref(m), "aria-label": `Replay the match of ${when}` }, "Replay")
        : el("span", { class: "note" }, "record no longer kept"),
    ),
  );
}

/** The replay's address, with the seats' names in its fragment (js/replay-link.js) as the match-over screen's link has them. @param {HistoryMatch} m */
function replayHref(m) {
  const replay = m.replay || "";
  if (replay.includes("#")) return replay;
  const names = m.players
    .slice()
    .sort((a, b) => a.seat - b.seat)
    .map((p) => encodeURIComponent(p.name || ""));
  return `${replay}#seats=${names.join(",")}`;
}
