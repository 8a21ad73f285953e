// @ts-check
// The replay viewer (replay.html): a finished match, from GET /match/{table_id}.json
// for /replay/{table_id} or from a downloaded rackem-match/1 file (picker or drop),
// verified in the page and then stepped through deal by deal and move by move. With
// `&review=N` in the link's fragment it also shows the coach's review of seat N (GET
// /review/{table_id}.json?seat=N, js/coach.js): each decision's mark, the better move
// and its cost, the accuracy, and jumps to the mistakes. A page of its own, apart from
// the game's: what it holds is the viewer's `state` below.

import { chip, el } from "./cards.js";
import { MARKS, SLIPS, accuracyText, costText, fetchReview, markOf, moveAdvice } from "./coach.js";
import { deckSize, scoredLength, sideOf, sides } from "./rules.js";
import { MAX_LOG_BYTES, ReplayRefused, buildReplay, parseLogText, whoDecided, winnerText } from "./replay-model.js";
import { replayNames, replayReviewSeat } from "./replay-link.js";

import { $, button, input } from "./dom.js";

/** @typedef {import("./protocol.js").Rules} Rules */
/** @typedef {import("./replay-model.js").Replay} Replay */
/** @typedef {import("./replay-model.js").Frame} Frame */
/** @typedef {import("./coach.js").Review} Review */
/** @typedef {import("./coach.js").ReviewDecision} ReviewDecision */

/**
 * A review as the viewer shows it: the seat's decisions with the step each was made at
 * (`step`), by step; the mistakes (inaccuracies and worse) among them.
 * @typedef {{ seat: number, review: Review, decisions: (ReviewDecision & { step: number, index: number })[],
 *   slips: (ReviewDecision & { step: number, index: number })[] }} ShownReview
 */

/** @type {Record<string, string>} */
const BADGE = { human: "", bot: "bot", cover: "cover" };

/**
 * The viewer's state: the replay shown (null: none, or refused), the step shown, the
 * seats' names (from the link), the timer while it plays, the review shown (null: none).
 * @type {{ replay: Replay | null, step: number, names: string[], timer: ReturnType<typeof setInterval> | null,
 *   review: ShownReview | null }}
 */
const state = { replay: null, step: 0, names: [], timer: null, review: null };

/** The replay shown (the drawing and stepping run only once one is). */
const shown = () => /** @type {Replay} */ (state.replay);

/** @param {number} seat */
const name = (seat) => state.names[seat] || `Seat ${seat + 1}`;
/** @param {number} slot */
const mark = (slot) => (slot + 1) * 5;

// -- loading ----------------------------------------------------------------------------

/** @param {string} pathname */
function tableIdFromPath(pathname) {
  const found = /^\/replay\/([^/]+)\/?$/.exec(pathname);
  if (!found) return null;
  try {
    return decodeURIComponent(found[1]);
  } catch {
    return found[1];
  }
}

/** @param {string} text */
function showStatus(text) {
  $("replay-status").textContent = text;
  $("replay-status").className = "replay-status";
}

/** @param {string} message */
function refuse(message) {
  stop();
  state.replay = null;
  dropReview();
  $("viewer").hidden = true;
  $("replay-status").textContent = "";
  const box = $("replay-error");
  box.textContent = message;
  box.hidden = false;
}

/** Verify `log` and show it from its first step (false: refused). @param {any} log @param {string} source */
async function show(log, source) {
  stop();
  dropReview();
  $("replay-error").hidden = true;
  showStatus("Checking the match log…");
  let replay;
  try {
    replay = await buildReplay(log);
  } catch (exc) {
    if (exc instanceof ReplayRefused) {
      refuse(`✗ ${exc.message}`);
      return false;
    }
    throw exc;
  }
  state.replay = replay;
  $("replay-source").textContent = source;
  const rounds = (replay.report.rounds || []).length;
  const moves = replay.moves.length;
  const deals = `${rounds} deal${rounds === 1 ? "" : "s"}`;
  const how = replay.committed
    ? `the seed matches the commitment, all ${deals} follow from it`
    : replay.seeded
      ? `all ${deals} follow from the seed (the log has no commitment to check it against)`
      : `the log stacks its ${deals} (no seed: a test log)`;
  $("replay-status").textContent = `✓ Verified: ${how}, all ${moves} move${moves === 1 ? "" : "s"} are legal and the scores add up.`;
  $("replay-status").className = "replay-status ok";
  input("slider").max = String(replay.frames.length - 1);
  $("replay-rules").textContent = rulesText(replay.rules);
  $("replay-fair").hidden = !replay.seeded;
  $("replay-commitment").textContent = log.commitment || "none in the log";
  $("replay-seed").textContent = log.seed || "";
  $("viewer").hidden = false;
  setStep(0);
  return true;
}

/** @param {string} tableId @param {number} seat the seat whose review to show, -1 for none */
async function loadTable(tableId, seat) {
  $("replay-title").textContent = "Match replay";
  document.title = `Replay of ${tableId} — Rack'em`;
  showStatus("Loading the match log…");
  let response;
  try {
    response = await fetch(`/match/${encodeURIComponent(tableId)}.json`, { cache: "no-store" });
  } catch {
    refuse("✗ Could not reach the server. Check the connection and reload the page.");
    return;
  }
  if (response.status === 404) {
    refuse(
      `✗ No finished match has the id “${tableId}”. A match can be replayed once it is over: ` +
        "check the link, or open a downloaded match log below.",
    );
    return;
  }
  if (!response.ok) {
    refuse(`✗ The server could not fetch the match log right now (it answered ${response.status}). Try again shortly.`);
    return;
  }
  let log;
  try {
    log = await response.json();
  } catch {
    refuse("✗ The server's answer was not a match log.");
    return;
  }
  if ((await show(log, `Table ${tableId}, from the server's match log.`)) && seat >= 0) await loadReview(tableId, seat);
}

/** @param {File | null | undefined} file */
async function loadFile(file) {
  if (!file) return;
  state.names = [];
  if (file.size > MAX_LOG_BYTES) {
    refuse("✗ This file is too large to be a match log.");
    return;
  }
  let log;
  try {
    log = parseLogText(await file.text());
  } catch (exc) {
    refuse(`✗ ${exc instanceof ReplayRefused ? exc.message : "This file could not be read."}`);
    return;
  }
  if (await show(log, `The file ${file.name}.`)) $("step-title").focus(); // the keys step at once
}

// -- drawing ------------------------------------------------------------------------------

/** @param {Rules} rules */
function rulesText(rules) {
  const parts = [`${rules.players} players`, `to ${rules.target}`];
  if (rules.run_to_go_out > 1) parts.push(`a run of ${rules.run_to_go_out} to go out`);
  for (const [key, text] of [
    ["bonus", "bonus for runs"],
    ["partners", "partners"],
    ["descending", "descending"],
    ["repair_token", "repair token"],
    ["visible_center", "visible centre"],
    ["reshuffle_on_recycle", "reshuffled turnovers"],
  ]) {
    if (rules[/** @type {keyof Rules} */ (key)]) parts.push(text);
  }
  return `Rules: ${parts.join(", ")}.`;
}

/** Who decided each seat's moves over the whole match, in order of first appearance. @param {number} seat */
function decidersOf(seat) {
  /** @type {string[]} */
  const seen = [];
  for (const move of shown().moves) {
    if (move.seat === seat && move.by && !seen.includes(move.by)) seen.push(move.by);
  }
  return seen;
}

/** @param {string} by */
function badge(by) {
  return el("span", { class: `badge ${BADGE[by] || ""}` }, whoDecided(by));
}

/** @param {Frame} frame @param {number} seat @param {number} size @param {Rules} rules */
function rackRow(frame, seat, size, rules) {
  const rack = frame.racks[seat];
  const ordered = scoredLength(rack, rules.descending);
  const mover = frame.kind === "move" && frame.seat === seat;
  const playing = frame.phase === "draw" || frame.phase === "resolve";
  const notes = [];
  if (frame.dealer === seat) notes.push("dealer");
  if (playing && frame.turn === seat) notes.push("to move");
  if (rules.repair_token) notes.push(frame.repairTokens[seat] ? "repair token" : "token used");
  if (rules.partners) notes.push(`team ${sideOf(rules, seat) === 0 ? "A" : "B"}`);
  const cards = rack.map((card, slot) => {
    const changed = mover && (frame.changed || []).includes(slot);
    return el(
      "li",
      { class: `rslot ${changed ? "changed" : ""} ${slot < ordered ? "in-order" : ""}` },
      el("span", { class: "rmark", "aria-hidden": "true" }, mark(slot)),
      chip(card, size),
    );
  });
  return el(
    "div",
    {
      class: `rack-row ${mover ? "mover" : ""} ${playing && frame.turn === seat ? "turn" : ""}`,
      "data-seat": seat,
    },
    el(
      "div",
      { class: "rack-who" },
      el("b", {}, name(seat)),
      ...decidersOf(seat).map(badge),
      notes.length ? el("span", { class: "note" }, notes.join(" · ")) : null,
      el("span", { class: "note" }, `${ordered} in order`),
    ),
    el(
      "ol",
      {
        class: "rack-cards",
        "aria-label": `${name(seat)}'s rack, slot 5 to 50: ${rack.join(", ")}`,
      },
      ...cards,
    ),
  );
}

/** @param {Frame} frame @param {Rules} rules */
function scoresTable(frame, rules) {
  const seats = frame.scores.map((_, s) => s);
  const header = el("tr", {}, el("th", { scope: "col" }, "Round"), ...seats.map((s) => el("th", { scope: "col" }, name(s))));
  const rows = frame.rounds.map((r, i) =>
    el(
      "tr",
      {},
      el("th", { scope: "row" }, `${i + 1}${r.winner === null ? " · nobody out" : ` · ${name(r.winner)} out`}`),
      ...r.points.map((p) => el("td", {}, p)),
    ),
  );
  const totals = el(
    "tr",
    { class: "totals" },
    el("th", { scope: "row" }, "Total"),
    ...frame.scores.map((score, seat) => el("td", { "data-seat": seat }, el("b", {}, score))),
  );
  const table = el("table", { class: "round-table", "aria-label": "Points per round and totals" }, header, ...rows, totals);
  if (!rules.partners) return [table];
  const teams = new Array(sides(rules)).fill(0);
  frame.scores.forEach((s, seat) => {
    teams[sideOf(rules, seat)] += s;
  });
  return [table, el("p", { class: "note" }, `Team A: ${teams[0]} · Team B: ${teams[1]}`)];
}

/** @param {Frame} frame */
function render(frame) {
  const replay = shown();
  const { rules, moves } = replay;
  const size = deckSize(rules);
  if (frame.kind === "deal") {
    $("step-title").textContent = `Round ${frame.round} dealt`;
    $("step-text").replaceChildren(`${name(frame.dealer)} dealt; ${name(frame.turn)} plays first.`);
  } else {
    $("step-title").textContent = `Move ${frame.moveNo} of ${moves.length} · round ${frame.round}`;
    $("step-text").replaceChildren(
      el("b", {}, name(frame.seat ?? -1)),
      " ",
      frame.by ? badge(frame.by) : "",
      " ",
      frame.text.endsWith("!") ? frame.text : `${frame.text}.`,
    );
  }
  const endings = [];
  if (frame.ended) {
    const r = frame.ended;
    const who = r.winner === null ? "nobody went out" : `${name(r.winner)} went out`;
    const points = r.points.map((p, s) => `${name(s)} +${p}`).join(", ");
    endings.push(`Round ${frame.round} over: ${who}. ${points}.`);
  }
  if (frame.phase === "match_over") endings.push(`${winnerText(rules, frame.winner, name)}.`);
  else if (frame === replay.frames[replay.frames.length - 1] && !replay.report.finished) {
    endings.push("The table ended here, before anyone won the match.");
  }
  $("round-end").textContent = endings.join(" ");
  $("round-end").hidden = endings.length === 0;
  renderStepReview();

  $("racks").replaceChildren(...frame.racks.map((_, seat) => rackRow(frame, seat, size, rules)));
  $("stock-count").textContent = `${frame.stock} card${frame.stock === 1 ? "" : "s"}`;
  $("held").replaceChildren(
    frame.held === null
      ? "—"
      : el("span", {}, chip(frame.held, size), ` from the ${frame.heldFrom === "discard" ? "discard pile" : "stock"}`),
  );
  const top = frame.discard[frame.discard.length - 1];
  $("discard-top").replaceChildren(top === undefined ? "empty" : chip(top, size), ` (${frame.discard.length})`);
  $("discard-list").replaceChildren(...frame.discard.map((c) => chip(c, size)));
  $("discard-list").setAttribute("aria-label", `Discard pile, bottom to top: ${frame.discard.join(", ") || "empty"}`);
  $("scores").replaceChildren(...scoresTable(frame, rules));
}

// -- stepping -----------------------------------------------------------------------------

/** @param {number} index */
function setStep(index) {
  const frames = shown().frames;
  const step = Math.max(0, Math.min(frames.length - 1, index));
  state.step = step;
  const frame = frames[step];
  const slider = input("slider");
  slider.value = String(step);
  const where = frame.kind === "deal" ? `round ${frame.round} dealt` : `move ${frame.moveNo} of ${shown().moves.length}`;
  slider.setAttribute("aria-valuetext", `Step ${step} of ${frames.length - 1}: ${where}`);
  $("step-count").textContent = `${step} of ${frames.length - 1}`;
  $("viewer").dataset.step = String(step);
  $("viewer").dataset.moves = String(frame.moveNo);
  button("btn-first").disabled = step === 0;
  button("btn-prev").disabled = step === 0;
  button("btn-next").disabled = step === frames.length - 1;
  button("btn-last").disabled = step === frames.length - 1;
  render(frame);
  if (step === frames.length - 1) stop();
}

// -- the review ---------------------------------------------------------------------------

function dropReview() {
  state.review = null;
  $("review").hidden = true;
  $("slip-jumps").hidden = true;
  $("review-keys").hidden = true;
  $("review-status").hidden = true;
  $("step-review").hidden = true;
}

/** Fetch seat `seat`'s review and show it beside the replay (or say quietly that there is none). @param {string} tableId @param {number} seat */
async function loadReview(tableId, seat) {
  const status = $("review-status");
  status.textContent = `Loading the review of ${name(seat)}'s play…`;
  status.hidden = false;
  const review = await fetchReview(tableId, seat, 2);
  if (!state.replay) return;
  if (!review) {
    status.textContent = `The review of ${name(seat)}'s play is unavailable right now.`;
    return;
  }
  status.hidden = true;
  showReview(review, seat);
}

/** The step of each move of the log (the frame after it). */
function stepsOfMoves() {
  /** @type {number[]} */
  const steps = [];
  shown().frames.forEach((frame, step) => {
    if (frame.kind === "move") steps[frame.moveNo - 1] = step;
  });
  return steps;
}

/** Show `review` of `seat`: the summary, the jumps, every decision marked. @param {Review} review @param {number} seat */
function showReview(review, seat) {
  const steps = stepsOfMoves();
  const moves = shown().moves;
  const decisions = review.decisions
    .map((d, index) => ({ ...d, index, step: steps[d.at] ?? -1 }))
    .filter((d) => d.step > 0 && moves[d.at].seat === seat)
    .sort((a, b) => a.step - b.step);
  const slips = decisions.filter((d) => SLIPS.includes(d.mark));
  state.review = { seat, review, decisions, slips };
  const summary = review.summary;
  $("review-title").textContent = `Review of ${name(seat)}'s play`;
  $("review-summary").textContent =
    `Accuracy ${accuracyText(summary.accuracy)} over ${summary.decisions} decision${summary.decisions === 1 ? "" : "s"}` +
    (slips.length ? `; ${slips.length} to look at again.` : ": nothing to look at again.");
  $("review-marks").replaceChildren(
    ...MARKS.map((m) =>
      el(
        "li",
        { class: `rv rv-${m.mark}` },
        el("span", { class: "rv-sign", "aria-hidden": "true" }, m.sign),
        ` ${summary.marks[m.mark] ?? 0} ${m.word}`,
      ),
    ),
  );
  const byIndex = new Map(decisions.map((d) => [d.index, d]));
  const costliest = summary.costliest
    .map((i) => byIndex.get(i))
    .filter((d) => d !== undefined)
    .slice(0, 3);
  $("review-costliest").replaceChildren(
    ...(costliest.length
      ? costliest.map((d) =>
          el(
            "li",
            {},
            el(
              "button",
              { type: "button", class: "btn small jump", "data-step": d.step, onclick: () => jump(d.step) },
              `Move ${d.at + 1}: ${markOf(d.mark).sign} ${markOf(d.mark).word}, ${costText(d.cost)}`,
            ),
          ),
        )
      : [el("li", { class: "note" }, "none")]),
  );
  $("review-log").replaceChildren(
    ...decisions.map((d) => {
      const m = markOf(d.mark);
      const frame = shown().frames[d.step];
      return el(
        "li",
        { class: `rv rv-${d.mark}` },
        el(
          "button",
          { type: "button", class: "decision", "data-step": d.step, onclick: () => jump(d.step) },
          el("span", { class: "rv-mark" }, el("span", { class: "rv-sign", "aria-hidden": "true" }, m.sign), ` ${m.word}`),
          ` Move ${d.at + 1}: ${frame.text}`,
        ),
      );
    }),
  );
  $("review").hidden = false;
  $("slip-jumps").hidden = false;
  $("review-keys").hidden = false;
  renderStepReview();
}

/** Stop playing and show `step`. @param {number} step */
function jump(step) {
  stop();
  setStep(step);
}

/** The review's part of the step shown: the decision's mark, the better move and its cost; the jumps' state. */
function renderStepReview() {
  const line = $("step-review");
  const shownReview = state.review;
  if (!shownReview) {
    line.hidden = true;
    return;
  }
  const step = state.step;
  const decision = shownReview.decisions.find((d) => d.step === step);
  if (decision) {
    const m = markOf(decision.mark);
    const before = shown().frames[step - 1];
    const top = before.discard.length ? before.discard[before.discard.length - 1] : null;
    /** @type {(HTMLElement | string)[]} */
    const parts = [
      el(
        "span",
        { class: `rv-mark rv rv-${decision.mark}` },
        el("span", { class: "rv-sign", "aria-hidden": "true" }, m.sign),
        ` ${m.word}`,
      ),
    ];
    if (SLIPS.includes(decision.mark)) {
      const better = moveAdvice(decision.best, { held: before.held, top });
      parts.push(` Better: ${better}. This move ${costText(decision.cost)}.`);
    } else if (decision.mark === "best") {
      parts.push(" The computer's choice too.");
    } else {
      parts.push(` Close to the best: ${moveAdvice(decision.best, { held: before.held, top })}.`);
    }
    line.replaceChildren(...parts);
    line.hidden = false;
  } else {
    line.hidden = true;
  }
  button("btn-prev-slip").disabled = !shownReview.slips.some((d) => d.step < step);
  button("btn-next-slip").disabled = !shownReview.slips.some((d) => d.step > step);
  for (const node of document.querySelectorAll("#review [data-step]")) {
    if (Number(/** @type {HTMLElement} */ (node).dataset.step) === step) node.setAttribute("aria-current", "step");
    else node.removeAttribute("aria-current");
  }
  const list = $("review-log");
  const current = list.querySelector('[aria-current="step"]');
  if (current instanceof HTMLElement && !$("review").hidden) {
    const top = current.offsetTop - list.offsetTop;
    if (top < list.scrollTop || top + current.offsetHeight > list.scrollTop + list.clientHeight) {
      list.scrollTop = Math.max(0, top - list.clientHeight / 2);
    }
  }
}

/** To the next (1) or previous (-1) mistake of the review, if there is one. @param {1 | -1} direction */
function toSlip(direction) {
  const slips = state.review ? state.review.slips : [];
  const found = direction > 0 ? slips.find((d) => d.step > state.step) : slips.findLast((d) => d.step < state.step);
  if (found) jump(found.step);
}

function stop() {
  if (state.timer !== null) clearInterval(state.timer);
  state.timer = null;
  const play = $("btn-play");
  $("step-live").setAttribute("aria-live", "polite");
  play.setAttribute("aria-pressed", "false");
  play.textContent = "▶ Play";
}

function play() {
  if (!state.replay) return;
  if (state.step === state.replay.frames.length - 1) setStep(0);
  stop();
  state.timer = setInterval(() => setStep(state.step + 1), Number(input("speed").value));
  const button = $("btn-play");
  $("step-live").setAttribute("aria-live", "off"); // no stream of announcements while it plays
  button.setAttribute("aria-pressed", "true");
  button.textContent = "❚❚ Pause";
}

const toggle = () => (state.timer === null ? play() : stop());

/** @param {KeyboardEvent} event */
function onKey(event) {
  if (!state.replay || $("viewer").hidden) return;
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const target = event.target;
  if (target === $("slider") && event.key === " ") {
    event.preventDefault();
    toggle();
    return;
  }
  if (target instanceof HTMLInputElement || target instanceof HTMLSelectElement) return; // the slider steps itself
  const activates = target instanceof Element && target.closest("button, summary, a");
  if (activates && (event.key === " " || event.key === "Enter")) return; // its own click
  /** @type {Record<string, () => void>} */
  const actions = {
    ArrowLeft: () => setStep(state.step - 1),
    ArrowRight: () => setStep(state.step + 1),
    Home: () => setStep(0),
    End: () => setStep(shown().frames.length - 1),
    " ": toggle,
  };
  if (state.review) {
    actions.n = actions.N = () => toSlip(1);
    actions.p = actions.P = () => toSlip(-1);
  }
  const action = actions[event.key];
  if (!action) return;
  event.preventDefault();
  if (event.key !== " ") stop();
  action();
}

function wire() {
  $("btn-first").addEventListener("click", () => {
    stop();
    setStep(0);
  });
  $("btn-prev").addEventListener("click", () => {
    stop();
    setStep(state.step - 1);
  });
  $("btn-next").addEventListener("click", () => {
    stop();
    setStep(state.step + 1);
  });
  $("btn-last").addEventListener("click", () => {
    stop();
    setStep(shown().frames.length - 1);
  });
  $("btn-play").addEventListener("click", toggle);
  $("btn-next-slip").addEventListener("click", () => toSlip(1));
  $("btn-prev-slip").addEventListener("click", () => toSlip(-1));
  $("speed").addEventListener("change", () => state.timer !== null && play());
  $("slider").addEventListener("input", () => {
    stop();
    setStep(Number(input("slider").value));
  });
  document.addEventListener("keydown", onKey);
  $("file-input").addEventListener("change", () => loadFile(input("file-input").files?.[0]));
  const zone = $("drop-zone");
  /** @param {DragEvent} event */
  const hasFiles = (event) => Array.from(event.dataTransfer?.types || []).includes("Files");
  document.addEventListener("dragover", (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    zone.classList.add("over");
  });
  document.addEventListener("dragleave", (event) => {
    if (event.relatedTarget === null) zone.classList.remove("over");
  });
  document.addEventListener("drop", (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    zone.classList.remove("over");
    loadFile(event.dataTransfer?.files[0]);
  });
}

wire();
const tableId = tableIdFromPath(location.pathname);
if (tableId) {
  state.names = replayNames(location.hash);
  loadTable(tableId, replayReviewSeat(location.hash));
} else {
  showStatus("Open a downloaded match log to replay it.");
}
