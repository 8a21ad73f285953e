// @ts-check
// Getting to a table: asking the server to create one (rules sent in their compact
// form), to join one by code, for a quick match, to watch one, for a rematch or a new
// game (Play again), and to resume the seat of an earlier tab.

import { fresh, send } from "./conn.js";
import { isConnected } from "./reduce.js";
import { canRematch } from "./rematch.js";
import { leaveTable } from "./seat.js";
import { dispatch, getState } from "./state.js";
import { lastSeat, loadPrefs, saveSeat } from "./store.js";
import { spectatorsOption } from "./watch.js";

/** @typedef {import("./protocol.js").Rules} Rules */

/** The loading screen, saying what the page waits for. @param {string} text */
function waitFor(text) {
  dispatch({ type: "show", screen: "loading", loading: text });
}

/**
 * The rules without the values that are their defaults (the server fills those in).
 * @param {Partial<Rules> & { players: number }} rules
 * @returns {Partial<Rules> & { players: number }}
 */
function compactRules(rules) {
  /** @type {Record<string, unknown> & { players: number }} */
  const out = { players: rules.players };
  /** @type {Record<string, unknown>} */
  const defaults = { target: 500, max_recycles: 3, turn_cap: 200, tiebreak: "went_out" };
  for (const [key, value] of Object.entries(rules)) {
    if (key === "players") continue;
    if (key === "run_to_go_out") {
      if (value !== (rules.players === 2 ? 3 : 0)) out[key] = value;
    } else if (key in defaults) {
      if (value !== defaults[key]) out[key] = value;
    } else if (value === true) {
      out[key] = true;
    }
  }
  return out;
}

/**
 * Ask for a new table: against the computer at once (`startNow`), or a private one.
 * @param {string} name
 * @param {Partial<Rules>} rules
 * @param {string} level
 * @param {boolean} startNow
 */
export function createTable(name, rules, level, startNow) {
  waitFor(startNow ? "Dealing the cards…" : "Opening a table…");
  send({
    type: "create_table",
    name,
    rules,
    level,
    start_now: startNow,
    spectators: spectatorsOption(),
  });
}

/** @param {string} name @param {string} code */
export function joinTable(name, code) {
  waitFor(`Joining table ${code}…`);
  send({ type: "join", code, name });
}

/** @param {string} name @param {number} players */
export function quickMatch(name, players) {
  waitFor("Looking for a table…");
  send({ type: "quick_match", name, players });
}

/** @param {string} code */
export function watchTable(code) {
  waitFor(`Watching table ${code}…`);
  send({ type: "watch", code });
}

/** Play again: a rematch with the same people after a finished match, else a new game against the computer. */
export function playAgain() {
  const state = getState();
  const tv = state.tv;
  if (canRematch(tv) && isConnected(state)) {
    // The same people again: the server seats everyone who answers at a new table.
    waitFor("Asking for a rematch…");
    send({ type: "rematch" });
    return;
  }
  const prefs = loadPrefs();
  const rules = tv ? { ...tv.view.rules } : { players: prefs.players, ...prefs.rules };
  leaveTable(() => createTable(prefs.name || "Player", compactRules(rules), prefs.level, true));
}

/** The home screen's Resume it: this tab takes the seat the last tab kept. */
export function resumeLast() {
  const last = lastSeat();
  if (!last) return;
  saveSeat(last);
  waitFor("Taking your seat again…");
  fresh();
}
