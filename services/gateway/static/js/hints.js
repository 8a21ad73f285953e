// @ts-check
// Short hints in a player's first game, at the moments new players go wrong.
// Each hint shows once; all of them stop after the first finished match, or when
// the player turns hints off in the help screen.

import { loadPrefs, updatePrefs } from "./store.js";

const touch = () => globalThis.matchMedia && matchMedia("(pointer: coarse)").matches;

/** @typedef {import("./protocol.js").Rules} Rules */

/** Each hint's text, for the table's rules. @type {Record<string, (rules: Rules) => string>} */
export const HINTS = {
  marks: (r) =>
    `The marks 5 to 50 are slot positions, not card values: any card can go in any slot. ` +
    `Aim for numbers that ${r.descending ? "go down" : "go up"} from slot 5 to slot 50.`,
  draw: () =>
    touch()
      ? "Your turn: tap the stock to draw, or tap the discard pile to take its top card."
      : "Your turn: draw from the stock (click it, or press S) or take the top of the discard pile (D).",
  place: () =>
    `${touch() ? "Tap a slot" : "Click a slot (or press 1–0)"} to put your card there; the card in that slot ` +
    "goes to the discard pile. Cards never move between slots, so pick the slot with care.",
  discard: () => "A card taken from the discard pile must be placed in your rack — it cannot be thrown back.",
  throw: () => `Don't want a card from the stock? Throw it${touch() ? "" : " (T)"} onto the discard pile and your rack stays as it is.`,
  run: (r) => `To go out you also need a run of ${r.run_to_go_out} consecutive numbers side by side, like 18, 19, 20.`,
};

/** Hints show in a player's first game, unless turned off. */
export function hintsActive() {
  const prefs = loadPrefs();
  return prefs.hints && prefs.gamesFinished === 0;
}

/**
 * The text of hint `key` if it should show now (and remember it was shown), else null.
 * @param {string} key
 * @param {Rules} rules
 * @returns {string | null}
 */
export function take(key, rules) {
  if (!hintsActive()) return null;
  const prefs = loadPrefs();
  if (prefs.hintsSeen.includes(key)) return null;
  updatePrefs({ hintsSeen: [...prefs.hintsSeen, key] });
  return HINTS[key](rules);
}
