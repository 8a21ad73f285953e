// @ts-check
// The card table: your rack, the other players, stock, discard pile, the held card,
// whose turn and the clock, scores and recent moves. It draws a `view` message and
// turns clicks, taps and drags into moves; only the moves in the view's `legal`
// list are ever enabled.

import { chip, el, mark, setRackCard, upright } from "./cards.js";
import { moveAdvice } from "./coach.js";
import { scoredLength } from "./rules.js";

import { $, button } from "./dom.js";
import { hintsAllowed, isMyTurn, isSpectator, legalSets, seatName, turnSeat } from "./selectors.js";

/** @typedef {import("./protocol.js").TableView} TableView */
/** @typedef {import("./protocol.js").Seat} Seat */
/** @typedef {import("./selectors.js").LegalSets} LegalSets */
/** @typedef {import("./reduce.js").Coach} Coach */

/** A clock's time left, as m:ss. @param {number} ms */
export function clockText(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** @param {string} cls @param {string} long @param {string} short @param {string} title */
function badge(cls, long, short, title) {
  return el(
    "span",
    { class: `badge ${cls}`, title },
    el("span", { class: "long" }, long),
    el("span", { class: "short", "aria-hidden": "true" }, short),
  );
}

/** A seat's badge: computer, covering, offline, left. @param {Partial<Seat> | undefined} s */
function kindBadge(s) {
  if (!s) return null;
  if (s.left) return badge("bot", "left · computer", "cpu", "Left the table; a computer player took the seat");
  if (s.kind === "bot") return badge("bot", s.level ? `computer · ${s.level}` : "computer", "cpu", "A computer player");
  if (s.kind === "cover") {
    return badge("cover", "computer covering", "cpu", "The clock ran out; the computer plays until this player acts");
  }
  if (!s.connected) return badge("off", "offline", "off", "Not connected; the seat waits for them");
  return null;
}

/** @param {number} side */
const teamName = (side) => (side === 0 ? "Team A" : "Team B");

/**
 * What the table's controls do (js/play.js's `tableActions`).
 * @typedef {object} TableActions
 * @property {(source: "stock" | "discard") => void} draw
 * @property {(slot: number) => void} slot a slot clicked, tapped, dropped on, or its key
 * @property {() => void} throwCard
 * @property {(slot: number) => void} repair swap `slot` and the next one
 * @property {() => void} toggleRepair
 * @property {() => void} toggleHistory
 * @property {() => void} askHint the Hint button: the computer's move for this decision
 */

/**
 * What the table shows besides the view: the page's state of it.
 * @typedef {object} TableUi
 * @property {boolean} covered my seat is played by the computer
 * @property {boolean} pending no move may be made now (one on its way, or not connected)
 * @property {boolean} repairMode
 * @property {boolean} historyOpen
 * @property {string[]} log the recent moves, newest first
 * @property {number} clockSeat the seat whose clock runs, or -1
 * @property {Coach | null} coach the Hint asked for on this decision, and its move once answered
 */

export class TableScreen {
  /** @param {TableActions} actions */
  constructor(actions) {
    this.actions = actions;
    this.slots = [];
    const rack = $("my-rack");
    for (let i = 0; i < 10; i++) {
      const button = el("button", {
        type: "button",
        class: "card slot back",
        "data-slot": i,
      });
      button.addEventListener("click", () => actions.slot(i));
      button.addEventListener("dragover", (e) => {
        if (button.classList.contains("placeable")) {
          e.preventDefault();
          button.classList.add("drop-over");
        }
      });
      button.addEventListener("dragleave", () => button.classList.remove("drop-over"));
      button.addEventListener("drop", (e) => {
        e.preventDefault();
        button.classList.remove("drop-over");
        actions.slot(i);
      });
      const li = el(
        "li",
        {},
        el("span", { class: "mark", "aria-hidden": "true" }, mark(i)),
        button,
        el("kbd", { class: "slot-key", "aria-hidden": "true" }, (i + 1) % 10),
      );
      rack.append(li);
      this.slots.push(button);
    }
    $("stock").addEventListener("click", () => actions.draw("stock"));
    $("discard").addEventListener("click", () => actions.draw("discard"));
    $("btn-throw").addEventListener("click", () => actions.throwCard());
    $("btn-repair").addEventListener("click", () => actions.toggleRepair());
    $("btn-history").addEventListener("click", () => actions.toggleHistory());
    // Only put on the page at a table where hints are allowed (never there, not even hidden, otherwise).
    this.hintButton = el(
      "button",
      {
        type: "button",
        class: "btn coach",
        id: "btn-coach",
        "aria-keyshortcuts": "A",
        title: "Ask the computer for a good move (A)",
        onclick: () => actions.askHint(),
      },
      "Hint ",
      el("kbd", {}, "A"),
    );
    this.lastRack = null;
  }

  /** Draw the table from the view and the page's state of it. @param {TableView} tv @param {TableUi} ui */
  render(tv, ui) {
    const v = tv.view;
    const size = 10 * v.rules.players + 20;
    const legal = legalSets(tv, ui.pending);
    const mine = isMyTurn(tv);
    this.renderInfo(tv);
    this.renderBanner(tv, mine && !ui.covered, legal, ui.covered);
    this.renderRack(tv, size, legal, ui);
    this.renderPiles(tv, size, legal, ui);
    this.renderOpponents(tv, size, ui);
    this.renderScores(tv);
    this.renderLog(ui.log);
    this.renderCoach(tv, mine && !ui.covered && !ui.pending, ui.coach);
  }

  /**
   * The Hint button (only where hints are allowed), the suggested pile, slot or Throw
   * outlined, and the hint in words.
   * @param {TableView} tv
   * @param {boolean} deciding this seat may move now
   * @param {Coach | null} coach
   */
  renderCoach(tv, deciding, coach) {
    const v = tv.view;
    const allowed = hintsAllowed(tv);
    const hint = this.hintButton;
    if (allowed && !hint.isConnected) $("resolve-actions").prepend(hint);
    if (!allowed) hint.remove();
    /** @type {HTMLButtonElement} */ (hint).disabled = !deciding || Boolean(coach);
    const move = allowed && deciding && coach ? coach.move : null;
    const targets = [];
    if (move && move.act === "draw") targets.push($(move.from === "discard" ? "discard" : "stock"));
    if (move && move.act === "throw") targets.push($("btn-throw"));
    if (move && move.act === "place") targets.push(this.slots[move.slot ?? 0]);
    if (move && move.act === "repair") targets.push(this.slots[move.slot ?? 0], this.slots[(move.slot ?? 0) + 1]);
    for (const node of document.querySelectorAll(".coach-pick")) {
      if (!targets.includes(/** @type {HTMLElement} */ (node))) node.classList.remove("coach-pick");
    }
    for (const node of targets) node?.classList.add("coach-pick");
    const top = v.discard.length ? v.discard[v.discard.length - 1] : null;
    let text = "";
    if (allowed && deciding && coach) {
      text = move ? `Hint: ${moveAdvice(move, { held: v.held, top })}.` : "Hint: thinking…";
    }
    const note = $("coach");
    if (note.textContent !== text) note.textContent = text;
  }

  /** @param {TableView} tv */
  renderInfo(tv) {
    const v = tv.view;
    const info = $("table-info");
    info.hidden = false;
    info.replaceChildren(
      el("span", {}, "Round ", el("b", {}, v.round_no)),
      tv.code ? el("span", { class: "code-info" }, el("span", { class: "lbl" }, "Table "), el("b", {}, tv.code)) : "",
      v.commitment
        ? el(
            "span",
            { class: "deal-info", title: `Commitment (SHA-256 of the seed): ${v.commitment}` },
            "Deal ",
            el("b", {}, `${v.commitment.slice(0, 8)}…`),
          )
        : "",
    );
  }

  /** @param {TableView} tv @param {boolean} mine @param {LegalSets} legal @param {boolean} covered */
  renderBanner(tv, mine, legal, covered) {
    const v = tv.view;
    const banner = $("turn-banner");
    banner.classList.toggle("mine", mine);
    banner.classList.toggle("covered", Boolean(covered));
    let text;
    if (covered) text = "Your clock ran out: the computer is playing for you.";
    else if (tv.status === "finished" || v.phase === "match_over") text = "Match over";
    else if (tv.status === "ended") text = "The table has ended";
    else if (tv.status === "round_over" || v.phase === "round_over") text = "Round over";
    else if (mine && v.phase === "draw") text = legal.discard || legal.stock ? "Your turn — draw a card" : "Your turn…";
    else if (mine && v.phase === "resolve") {
      text = v.held_from === "discard" ? `Place the ${v.held} in a slot` : `Place the ${v.held} in a slot, or throw it`;
    } else {
      const s = tv.seats.find((x) => x.seat === v.turn);
      const who = seatName(tv, v.turn);
      text = `${who}'s turn${s && s.kind !== "human" ? " (computer)" : ""}`;
    }
    $("turn-text").textContent = `${text}`;
    const score = v.rules.partners ? v.scores.filter((_, s) => s % 2 === v.seat % 2).reduce((a, b) => a + b, 0) : v.scores[v.seat];
    $("my-score").textContent = `${v.rules.partners ? "Your team" : "You"}: ${score}`;
  }

  /** @param {TableView} tv @param {number} size @param {LegalSets} legal @param {TableUi} ui */
  renderRack(tv, size, legal, ui) {
    const v = tv.view;
    const rack = v.rack;
    const inOrder = scoredLength(rack, v.rules.descending);
    const known = (v.known && v.known[v.seat]) || [];
    const placeable = legal.place;
    rack.forEach((card, i) => {
      const button = this.slots[i];
      setRackCard(button, card, size);
      const canPlace = placeable.has(i);
      button.classList.toggle("placeable", canPlace);
      button.classList.toggle("ordered", inOrder > 1 && i < inOrder);
      button.classList.toggle("known-public", Boolean(known[i]));
      button.classList.toggle("swap-pick", ui.repairMode && legal.repair.has(i));
      const changed = this.lastRack && this.lastRack[i] !== card && this.lastRound === v.round_no;
      if (changed) {
        button.classList.remove("just-placed");
        void button.offsetWidth;
        button.classList.add("just-placed");
      }
      button.setAttribute(
        "aria-label",
        `Slot ${mark(i)}: card ${card}${known[i] ? ", seen by others" : ""}` +
          (canPlace ? `. Place your ${v.held} here (key ${(i + 1) % 10})` : ""),
      );
      button.setAttribute("aria-disabled", canPlace ? "false" : "true");
    });
    this.lastRack = [...rack];
    this.lastRound = v.round_no;

    const col = $("repair-col");
    col.hidden = !ui.repairMode || !legal.repair.size;
    if (!col.hidden) {
      col.replaceChildren(
        ...Array.from({ length: 10 }, (_, i) =>
          legal.repair.has(i)
            ? el(
                "div",
                {},
                el(
                  "button",
                  {
                    type: "button",
                    class: "swap-btn",
                    "aria-label": `Swap slots ${mark(i)} and ${mark(i + 1)} (R then ${i + 1})`,
                    onclick: () => this.actions.repair(i),
                  },
                  "⇅",
                ),
              )
            : el("div"),
        ),
      );
    }
  }

  /** @param {TableView} tv @param {number} size @param {LegalSets} legal @param {TableUi} ui */
  renderPiles(tv, size, legal, ui) {
    const v = tv.view;
    const stock = button("stock");
    stock.classList.toggle("can-draw", legal.stock);
    stock.disabled = !legal.stock;
    // An empty stock shows only "empty" (a count of 0 beside it would be text its name lacks).
    stock.replaceChildren(
      ...(v.stock_count > 0
        ? [upright(null, size, "stack-shadow"), el("span", { class: "pile-count", id: "stock-count" }, v.stock_count)]
        : [el("div", { class: "empty-pile" }, "empty")]),
    );
    const count = v.stock_count > 0 ? `${v.stock_count} card${v.stock_count === 1 ? "" : "s"}` : "empty";
    stock.setAttribute("aria-label", `Stock, ${count}${legal.stock ? ". Draw from the stock (S)" : ""}`);

    const top = v.discard.length ? v.discard[v.discard.length - 1] : null;
    const discard = button("discard");
    discard.classList.toggle("can-draw", legal.discard);
    discard.disabled = !legal.discard;
    discard.replaceChildren(top === null ? el("div", { class: "empty-pile" }, "empty") : upright(top, size));
    // The name starts with what the pile shows (its top card), as speech input expects.
    discard.setAttribute(
      "aria-label",
      top === null ? "empty: the discard pile" : `${top}: the top of the discard pile${legal.discard ? `. Take it (D)` : ""}`,
    );

    const mineHeld = v.turn === v.seat && v.phase === "resolve" && v.held;
    const held = $("held");
    if (mineHeld) {
      const card = upright(v.held, size, v.held_from === "discard" ? "from-discard" : "");
      card.draggable = true;
      card.setAttribute("role", "img");
      card.setAttribute("aria-label", `Your card: ${v.held}, from the ${v.held_from}`);
      card.addEventListener("dragstart", (e) => {
        if (!e.dataTransfer) return;
        e.dataTransfer.setData("text/plain", String(v.held));
        e.dataTransfer.effectAllowed = "move";
      });
      held.replaceChildren(card);
      $("held-label").textContent = v.held_from === "discard" ? "From the discard: place it" : "From the stock";
    } else {
      held.replaceChildren(el("div", { class: "empty-pile" }, "draw a card"));
      $("held-label").textContent = "Your card";
    }
    button("btn-throw").disabled = !legal.throw;
    $("btn-throw").hidden = Boolean(mineHeld) && v.held_from === "discard";
    const repair = button("btn-repair");
    repair.hidden = !v.rules.repair_token;
    repair.disabled = !legal.repair.size;
    repair.setAttribute("aria-pressed", ui.repairMode ? "true" : "false");
    repair.textContent = "";
    repair.append(ui.repairMode ? "Cancel repair " : "Repair ", el("kbd", {}, "R"));
    if (v.rules.repair_token) {
      repair.title = v.repair_tokens[v.seat]
        ? "Your repair token: swap two neighbouring cards once this round"
        : "Repair token used this round";
    }
    $("stay-in-box").hidden = !(v.rules.bonus && mineHeld);

    const history = $("history");
    $("btn-history").setAttribute("aria-expanded", String(ui.historyOpen));
    history.hidden = !ui.historyOpen;
    if (ui.historyOpen) {
      $("history-cards").replaceChildren(
        ...(v.discard.length ? [...v.discard].reverse().map((c) => chip(c, size)) : [el("span", { class: "note" }, "empty")]),
      );
      $("stock-known").textContent = v.stock_known
        ? `Everyone saw the stock form, so its order is known (top first): ${v.stock_known.join(", ")}`
        : v.recycles
          ? `The stock has been refilled ${v.recycles} time${v.recycles > 1 ? "s" : ""} this round.`
          : "";
    }
  }

  /** @param {TableView} tv @param {number} size @param {TableUi} ui */
  renderOpponents(tv, size, ui) {
    const v = tv.view;
    const box = $("opponents");
    const n = v.rules.players;
    const others = isSpectator(tv) ? n : n - 1; // a spectator (seat -1) sees every seat here
    box.className = `opponents n${others}`;
    const order = Array.from({ length: others }, (_, k) => (v.seat + 1 + k + n) % n);
    box.replaceChildren(
      ...order.map((seat) => {
        /** @type {Partial<Seat>} */
        const s = tv.seats.find((x) => x.seat === seat) || {};
        const turn = turnSeat(tv) === seat;
        const known = (v.known && v.known[seat]) || [];
        const revealed = v.racks ? v.racks[seat] : null;
        const center = v.rules.visible_center && v.center ? v.center[seat] : null;
        const rack = el("ol", { class: "mini-rack", "aria-label": `${seatName(tv, seat)}'s rack` });
        let visible = 0;
        for (let i = 0; i < 10; i++) {
          const card = revealed ? revealed[i] : known[i] || (i === 4 && center) || null;
          if (card) visible += 1;
          const face = el("div", { class: "card mini" });
          setRackCard(face, card, size);
          rack.append(el("li", {}, el("span", { class: "mark", "aria-hidden": "true" }, mark(i)), face));
        }
        const pickup = v.last_pickup ? v.last_pickup[seat] : null;
        const heldVisible = v.turn === seat && v.phase === "resolve" && v.held_from === "discard" && v.held;
        const clock = turn && ui.clockSeat === seat ? el("span", { class: "clock", "data-clock": seat }, "") : null;
        const panel = el(
          "section",
          {
            class: `opp ${turn ? "turn" : ""}`,
            "aria-label":
              `${seatName(tv, seat)}, ${v.scores[seat]} points${turn ? ", their turn" : ""}` +
              (visible ? `, ${visible} card${visible > 1 ? "s" : ""} known` : ""),
          },
          el(
            "div",
            { class: "opp-name" },
            el("span", {
              class: `dot ${s.connected || s.kind !== "human" ? "" : "off"}`,
              "aria-hidden": "true",
            }),
            el("span", { class: "nm" }, seatName(tv, seat)),
            kindBadge(s),
          ),
          el("div", { class: "opp-score" }, v.scores[seat]),
          el(
            "div",
            { class: "opp-meta" },
            v.rules.partners ? el("span", {}, teamName(seat % 2)) : null,
            turn ? el("span", {}, v.phase === "resolve" ? "deciding…" : "to draw") : null,
            clock,
            heldVisible ? el("span", {}, "holding ", chip(heldVisible, size)) : null,
            pickup ? el("span", {}, "last took ", chip(pickup, size)) : null,
          ),
          rack,
        );
        return panel;
      }),
    );
  }

  /** @param {TableView} tv */
  renderScores(tv) {
    const v = tv.view;
    const r = v.rules;
    const goal = [`First to ${r.target}`];
    goal.push(r.descending ? "racks go down" : "racks go up");
    if (r.run_to_go_out) goal.push(`run of ${r.run_to_go_out} to go out`);
    $("goal").textContent = goal.join(" · ");
    const rows = [el("tr", {}, el("th", { scope: "col" }, "Player"), el("th", { scope: "col", class: "pts" }, "Score"))];
    v.scores.forEach((score, seat) => {
      const cls = `${turnSeat(tv) === seat ? "turn" : ""} ${seat === v.seat ? "me" : ""}`;
      rows.push(
        el(
          "tr",
          { class: cls },
          el("td", {}, seatName(tv, seat), r.partners ? ` (${teamName(seat % 2)})` : ""),
          el("td", { class: "pts" }, score),
        ),
      );
    });
    if (r.partners) {
      [0, 1].forEach((side) => {
        const total = v.scores.filter((_, seat) => seat % 2 === side).reduce((a, b) => a + b, 0);
        rows.push(el("tr", {}, el("td", {}, el("b", {}, teamName(side))), el("td", { class: "pts" }, total)));
      });
    }
    $("scores").replaceChildren(...rows);
  }

  /** @param {string[]} lines */
  renderLog(lines) {
    $("movelog").replaceChildren(...lines.slice(0, 6).map((line) => el("li", {}, line)));
  }
}
