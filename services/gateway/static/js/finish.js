// @ts-check
// Round over and match over: every rack revealed, points and totals, Continue; at the
// end the winner, each player's accuracy (the coach's review, js/coach.js) with *Review
// my play*, the commitment and the revealed seed, the match log to download
// (GET /match/{table_id}.json) and an in-page check that the log verifies.

import { chip, el } from "./cards.js";
import { MARKS, accuracyText } from "./coach.js";
import { scoredLength, longestRun } from "./rules.js";
import { replayUrl } from "./replay-link.js";
import { verifyLog } from "./verify.js";
import { $, button, link } from "./dom.js";
import { seatName } from "./selectors.js";

/** @typedef {import("./protocol.js").TableView} TableView */
/** @typedef {import("./protocol.js").Round} Round */
/** @typedef {import("./reduce.js").Verification} Verification */
/** @typedef {import("./reduce.js").SeatReview} SeatReview */

/** Where the gateway serves a finished match's log. @param {string} tableId */
export function matchLogUrl(tableId) {
  return `/match/${encodeURIComponent(tableId)}.json`;
}

/** Every rack revealed, with this round's points and the totals. @param {TableView} tv @param {Round | undefined} round */
function revealRows(tv, round) {
  const v = tv.view;
  const size = 10 * v.rules.players + 20;
  const racks = v.racks || [];
  return v.scores.map((total, seat) => {
    const rack = racks[seat] || [];
    const ordered = rack.length ? scoredLength(rack, v.rules.descending) : 0;
    const wentOut = round && round.winner === seat;
    const points = round ? round.points[seat] : 0;
    let detail = "";
    if (wentOut) {
      const run = longestRun(rack, v.rules.descending);
      detail = v.rules.bonus && points > 75 ? `went out, run of ${run}` : "went out";
    } else if (rack.length) {
      detail = `${ordered} in order`;
    }
    return el(
      "div",
      { class: `reveal-row ${wentOut ? "winner" : ""}`, "data-seat": seat },
      el("div", { class: "who" }, seatName(tv, seat), el("div", { class: "note" }, detail)),
      el(
        "div",
        { class: "reveal-cards", "aria-label": `${seatName(tv, seat)}'s rack: ${rack.join(", ")}` },
        ...rack.map((c, i) => chip(c, size, !wentOut && i >= ordered ? "broken" : "")),
      ),
      el("div", { class: "pts", title: "Points this round" }, `+${points}`),
      el("div", { class: "tot", title: "Total" }, `${total} total`),
    );
  });
}

/** With partners, each team's seats and total. @param {TableView} tv */
function teamsLine(tv) {
  const v = tv.view;
  if (!v.rules.partners) return null;
  /** @param {number} side */
  const team = (side) => {
    const seats = v.scores.map((_, s) => s).filter((s) => s % 2 === side);
    const total = seats.reduce((sum, s) => sum + v.scores[s], 0);
    return `Team ${side === 0 ? "A" : "B"} (${seats.map((s) => seatName(tv, s)).join(" + ")}): ${total}`;
  };
  return el("p", { class: "note" }, `${team(0)} · ${team(1)}`);
}

/**
 * The round-over screen: who went out, every rack revealed, the points, Continue.
 * @param {TableView} tv
 * @param {number} now unix ms
 * @param {boolean} continueSent Continue pressed, no view since
 */
export function renderRoundOver(tv, now, continueSent) {
  const v = tv.view;
  const round = v.rounds[v.rounds.length - 1];
  const title =
    round && round.winner !== null && round.winner !== undefined
      ? round.winner === v.seat
        ? `You went out! Round ${v.round_no} is yours`
        : `${seatName(tv, round.winner)} went out — round ${v.round_no} over`
      : `Round ${v.round_no} over — nobody went out`;
  $("round-title").textContent = title;
  $("round-reveal").replaceChildren(...revealRows(tv, round), teamsLine(tv) || "");
  const done = tv.continued && tv.continued[v.seat];
  button("btn-continue").disabled = Boolean(done) || continueSent;
  tickRoundOver(tv, now);
}

/** Who the round-over screen waits for, and when the next round starts anyway. @param {TableView} tv @param {number} now unix ms */
export function tickRoundOver(tv, now) {
  const v = tv.view;
  const waiting = (tv.seats || [])
    .filter((s) => s.kind === "human" && !(tv.continued || [])[s.seat] && s.seat !== v.seat)
    .map((s) => s.name);
  const left = tv.continue_deadline_ms ? Math.max(0, Math.ceil((tv.continue_deadline_ms - now) / 1000)) : 0;
  const parts = [];
  if ((tv.continued || [])[v.seat] && waiting.length) parts.push(`Waiting for ${waiting.join(", ")}.`);
  if (left) parts.push(`The next round starts in ${left} s.`);
  $("round-wait").textContent = parts.join(" ");
}

/** The match-over screen: the winner, the points of every round, the fair-deal check's links. @param {TableView} tv */
export function renderMatchOver(tv) {
  const v = tv.view;
  const rules = v.rules;
  let title;
  if (tv.status === "ended" && v.winner === null) {
    title = tv.ended_reason === "abandoned" ? "The table was closed: nobody was left playing" : "The table has ended";
  } else if (rules.partners) {
    const mySide = v.seat % 2;
    title = v.winner === mySide ? "Your team wins the match!" : `Team ${v.winner === 0 ? "A" : "B"} wins the match`;
  } else {
    title = v.winner === v.seat ? "You win the match!" : `${seatName(tv, v.winner ?? -1)} wins the match`;
  }
  $("match-title").textContent = title;
  const round = v.rounds[v.rounds.length - 1];
  const table = el(
    "table",
    { class: "round-table", "aria-label": "Points per round" },
    el("tr", {}, el("th", {}, "Round"), ...v.scores.map((_, s) => el("th", {}, seatName(tv, s)))),
    ...v.rounds.map((r, i) =>
      el(
        "tr",
        {},
        el("td", {}, `${i + 1}${r.winner === null || r.winner === undefined ? "" : ` · ${seatName(tv, r.winner)} out`}`),
        ...r.points.map((p) => el("td", {}, p)),
      ),
    ),
    el("tr", {}, el("td", {}, el("b", {}, "Total")), ...v.scores.map((s) => el("td", {}, el("b", {}, s)))),
  );
  const racks = v.racks ? [el("h3", {}, `The racks at the end of round ${v.round_no}`), ...revealRows(tv, round)] : [];
  $("match-reveal").replaceChildren(...racks, teamsLine(tv) || "", table);
  $("fair-commitment").textContent = v.commitment || "—";
  $("fair-seed").textContent = v.seed || "not revealed";
  const download = link("btn-download");
  download.href = matchLogUrl(tv.table_id);
  download.setAttribute("download", `rackem-${tv.code || tv.table_id}.json`);
  link("btn-replay").href = replayUrl(tv);
}

/**
 * Each player's accuracy on the match-over screen, and *Review my play* for this page's
 * seat; a review the server could not give says so quietly, and none asked shows nothing.
 * @param {TableView} tv
 * @param {SeatReview[]} reviews this match's, by seat
 */
export function renderReviews(tv, reviews) {
  const mine = reviews.filter((r) => r.table_id === tv.table_id);
  $("match-review").hidden = mine.length === 0;
  $("review-title").textContent = mine.length === 1 ? "How you played" : "How everyone played";
  $("review-seats").replaceChildren(
    ...mine.map((r) => {
      const who = el("b", {}, `${seatName(tv, r.seat)}:`);
      if (r.state === "asking") return el("li", { "data-seat": r.seat }, who, " ", el("span", { class: "note" }, "reviewing…"));
      if (!r.summary) return el("li", { "data-seat": r.seat }, who, " ", el("span", { class: "note" }, "review unavailable"));
      const marks = r.summary.marks;
      return el(
        "li",
        { "data-seat": r.seat },
        who,
        " ",
        el("span", { class: "accuracy" }, `${accuracyText(r.summary.accuracy)} accuracy`),
        " ",
        el(
          "span",
          { class: "note" },
          `${r.summary.decisions} decisions: `,
          MARKS.map((m) => `${m.sign} ${marks[m.mark] ?? 0} ${m.word}`).join(" · "),
        ),
      );
    }),
  );
  const own = mine.find((r) => r.seat === tv.view.seat);
  const review = link("btn-review");
  review.hidden = !own || own.state !== "ok";
  review.href = replayUrl(tv, tv.view.seat);
}

/** The in-page check's answer for this match (null: not asked yet). @param {Verification | null} verified */
export function renderVerification(verified) {
  const result = $("verify-result");
  result.className = verified && verified.state !== "checking" ? `verify-result ${verified.state}` : "verify-result";
  result.textContent = verified ? verified.text : "";
  button("btn-verify").disabled = Boolean(verified && verified.state === "checking");
}

/**
 * Fetch the finished match's log and check it: the seed against the commitment the
 * page saw when the match started, every deal re-derived, every move replayed, the
 * scores recomputed and compared with what this page was shown.
 * @param {TableView} tv
 * @param {string | null} seenCommitment
 * @returns {Promise<Verification>}
 */
export async function checkMatch(tv, seenCommitment) {
  const id = tv.table_id;
  /** @param {string} text @returns {Verification} */
  const bad = (text) => ({ table_id: id, state: "bad", text });
  let log;
  try {
    const response = await fetch(matchLogUrl(id), { cache: "no-store" });
    if (!response.ok) throw new Error(`the server answered ${response.status}`);
    log = await response.json();
  } catch (exc) {
    return bad(`Could not fetch the match log: ${errorMessage(exc)}.`);
  }
  if (!("seed" in log) && !("decks" in log)) {
    // A Daily Rack match while its day is open: everyone plays the same deal, so its seed
    // stays in the table service until the day closes (docs/daily.md).
    return {
      table_id: id,
      state: "later",
      text: "Today's Daily Rack deal is secret until the day ends (midnight UTC): check this match from its replay then.",
    };
  }
  const v = tv.view;
  const problems = [];
  if (seenCommitment && log.commitment !== seenCommitment) {
    problems.push("the log's commitment is not the one shown when the match started");
  }
  if (v.seed && log.seed !== v.seed) problems.push("the log's seed is not the one revealed at the table");
  let report;
  try {
    report = await verifyLog(log);
  } catch (exc) {
    return bad(`✗ Not a valid match log: ${errorMessage(exc)}.`);
  }
  if (!report.valid) {
    const at = report.error ? report.error.move_index : null;
    const reason = report.error ? report.error.reason : "";
    problems.push(at === null ? reason : `move ${at + 1} is wrong (${reason})`);
  } else if (JSON.stringify(report.scores) !== JSON.stringify(v.scores)) {
    problems.push(`the replayed scores ${(report.scores || []).join("/")} differ from the table's ${v.scores.join("/")}`);
  }
  if (problems.length) return bad(`✗ Not verified: ${problems[0]}.`);
  const rounds = (report.rounds || []).length;
  return {
    table_id: id,
    state: "ok",
    text:
      `✓ Verified: the seed matches the commitment, ${rounds > 1 ? `all ${rounds} deals follow` : "the deal follows"} from it, ` +
      `all ${log.moves.length} moves are legal and the scores (${(report.scores || []).join(" / ")}) add up.`,
  };
}

/** @param {unknown} exc */
const errorMessage = (exc) => (exc instanceof Error ? exc.message : String(exc));
