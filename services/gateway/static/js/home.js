// @ts-check
// The home screen: name, New Game / private table options, quick match, join by code.
// Options are remembered in localStorage and only ever sent with a table request.

import { DEFAULTS, RackError, makeRules } from "./rules.js";
import { loadPrefs, updatePrefs } from "./store.js";
import { $, dialog, input } from "./dom.js";

/**
 * Rules options as the protocol's `rules` object: those not at their default (docs/rules.md).
 * @typedef {Record<string, any>} Options
 */

/**
 * What the home forms ask for.
 * @typedef {object} HomeHandlers
 * @property {(text: string) => void} error
 * @property {(name: string, players: number) => void} quickMatch
 * @property {(name: string, rules: Options, level: string, startNow: boolean) => void} create
 * @property {(name: string, code: string) => void} join
 */

/** @typedef {HTMLFormElement & { elements: any }} RulesForm the New game form, its fields by name */

const BOOLS = ["bonus", "partners", "descending", "repair_token", "visible_center", "reshuffle_on_recycle"];
const NUMS = ["target", "max_recycles", "turn_cap"];
/** @type {Record<string, any>} */
const DEFAULT_OPTIONS = DEFAULTS;

/** A room code as typed: upper case, letters and digits only. @param {string | null | undefined} text */
export function normalCode(text) {
  return String(text || "")
    .trim()
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, "");
}

/** Fill the forms from saved preferences and the share link's ?code=. @param {HomeHandlers} handlers */
export function initHome(handlers) {
  const prefs = loadPrefs();
  const form = /** @type {RulesForm} */ (document.getElementById("form-new"));
  input("name").value = prefs.name;
  setRadio(form, "players", prefs.players);
  setRadio(form, "level", prefs.level);
  setRadio($("form-quick"), "quick_players", prefs.quickPlayers);
  writeRules(prefs.rules);

  const code = normalCode(new URLSearchParams(location.search).get("code"));
  if (code) input("join-code").value = code.slice(0, 6);

  form.addEventListener("change", () => {
    syncPartners();
    $("rules-summary").textContent = summary(readRulesLoose());
  });
  $("btn-rules-reset").addEventListener("click", () => {
    writeRules({});
    form.dispatchEvent(new Event("change"));
  });
  $("name").addEventListener("change", () => updatePrefs({ name: input("name").value.trim() }));
  // Enter in the name field leads on to New game, or Join when a code is filled in.
  $("name-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (checkName()) $(normalCode(input("join-code").value).length === 6 ? "btn-join" : "btn-new-game").focus();
  });

  /** @param {"new" | "create" | "quick" | "join"} kind */
  const submit = (kind) => (/** @type {Event} */ event) => {
    event.preventDefault();
    const name = checkName();
    if (!name) return;
    if (kind === "quick") {
      const players = Number(new FormData(/** @type {HTMLFormElement} */ ($("form-quick"))).get("quick_players"));
      updatePrefs({ name, quickPlayers: players });
      handlers.quickMatch(name, players);
    } else if (kind === "join") {
      const joinCode = normalCode(input("join-code").value);
      if (joinCode.length !== 6) {
        handlers.error("A room code has 6 letters and digits.");
        $("join-code").focus();
        return;
      }
      updatePrefs({ name });
      handlers.join(name, joinCode);
    } else {
      let rules;
      try {
        rules = readRules();
      } catch (exc) {
        handlers.error(exc instanceof RackError ? `Check the rules options: ${exc.message}.` : String(exc));
        dialog("rules-options").open = true;
        return;
      }
      const data = new FormData(form);
      const level = String(data.get("level"));
      updatePrefs({ name, players: rules.players, level, rules: withoutPlayers(rules) });
      handlers.create(name, rules, level, kind === "new");
    }
  };
  form.addEventListener("submit", submit("new"));
  $("btn-create").addEventListener("click", submit("create"));
  $("form-quick").addEventListener("submit", submit("quick"));
  $("form-join").addEventListener("submit", submit("join"));
  form.dispatchEvent(new Event("change"));

  function checkName() {
    const name = input("name").value.trim();
    if (!name || name.length > 20 || /[\u0000-\u001f\u007f]/.test(name)) {
      handlers.error("Type your name first (1 to 20 characters).");
      $("name").focus();
      return null;
    }
    return name;
  }
}

/** @param {HTMLElement} form @param {string} name @param {unknown} value */
function setRadio(form, name, value) {
  for (const input of form.querySelectorAll(`input[name="${name}"]`)) {
    const radio = /** @type {HTMLInputElement} */ (input);
    radio.checked = radio.value === String(value);
  }
}

/** @param {Options} rules */
function withoutPlayers(rules) {
  const { players, ...rest } = rules;
  return rest;
}

/** Partners only with 4 players. */
function syncPartners() {
  const form = /** @type {RulesForm} */ (document.getElementById("form-new"));
  const four = new FormData(form).get("players") === "4";
  form.elements.partners.disabled = !four;
  if (!four) form.elements.partners.checked = false;
}

/** The rules options into the form. @param {Options} rules */
function writeRules(rules) {
  const form = /** @type {RulesForm} */ (document.getElementById("form-new"));
  for (const key of BOOLS) form.elements[key].checked = Boolean(rules[key]);
  for (const key of NUMS) form.elements[key].value = rules[key] ?? DEFAULT_OPTIONS[key];
  form.elements.run_to_go_out.value = rules.run_to_go_out === undefined || rules.run_to_go_out === null ? "" : String(rules.run_to_go_out);
  form.elements.tiebreak.value = rules.tiebreak || DEFAULTS.tiebreak;
  syncPartners();
}

/** The options that differ from the standard rules, as the protocol's `rules` object. */
function readRulesLoose() {
  const form = /** @type {RulesForm} */ (document.getElementById("form-new"));
  const data = new FormData(form);
  /** @type {Options} */
  const rules = { players: Number(data.get("players")) };
  for (const key of BOOLS) if (form.elements[key].checked && !form.elements[key].disabled) rules[key] = true;
  for (const key of NUMS) {
    const value = Number(form.elements[key].value);
    if (form.elements[key].value !== "" && value !== DEFAULT_OPTIONS[key]) rules[key] = value;
  }
  const run = form.elements.run_to_go_out.value;
  if (run !== "") rules.run_to_go_out = Number(run);
  if (form.elements.tiebreak.value !== DEFAULTS.tiebreak) rules.tiebreak = form.elements.tiebreak.value;
  return rules;
}

/** The options, validated with the same ranges as the server (throws RackError). */
export function readRules() {
  const rules = readRulesLoose();
  makeRules(rules);
  return rules;
}

/** The options in a few words, beside the form's title. @param {Options} rules */
function summary(rules) {
  const parts = [];
  if (rules.target) parts.push(`to ${rules.target}`);
  for (const key of BOOLS) if (rules[key]) parts.push(key.replace(/_/g, " "));
  if (rules.run_to_go_out !== undefined) parts.push(rules.run_to_go_out ? `run of ${rules.run_to_go_out}` : "no run");
  if (rules.max_recycles !== undefined) parts.push(`${rules.max_recycles} refills`);
  if (rules.turn_cap !== undefined) parts.push(`${rules.turn_cap} turns`);
  if (rules.tiebreak) parts.push("extra round on ties");
  return parts.length ? `(${parts.join(", ")})` : "(standard)";
}
