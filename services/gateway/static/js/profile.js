// @ts-check
// The player's profile from the page's side (docs/web.md, "Profiles"): its key, kept in
// localStorage (the server sends a key once, to the device it is made for, and never
// again), bound again on every connection before anything else is sent; a profile made
// quietly at the player's first game (or by *Start my profile* on the You screen); and
// the requests of the You, Leaderboard and Daily Rack screens, each sent and then told to
// the state (`profile_asked`), so that an `error` is known to answer it
// (js/profile-state.js). The screens themselves open by the address's fragment (`#you`,
// `#leaderboard`, `#daily`): the browser's Back leaves them.

import { send } from "./conn.js";
import { dispatch, getState } from "./state.js";
import { loadPrefs } from "./store.js";

/** @typedef {import("./profile-state.js").Asked} Asked */
/** @typedef {import("./protocol.js").ClientMessage} ClientMessage */
/** @typedef {import("./reduce.js").Screen} Screen */

const KEY = "rackem.profile";
const KEY_SHAPE = /^[0-9a-f]{32}$/;

/** The screens of the profile, each at its fragment of the address. @type {Record<string, Screen>} */
export const PROFILE_SCREENS = { "#you": "you", "#leaderboard": "leaderboard", "#daily": "daily" };

/** This device's profile key, or null. */
export function profileKey() {
  try {
    const key = localStorage.getItem(KEY);
    return key && KEY_SHAPE.test(key) ? key : null;
  } catch {
    return null;
  }
}

/** Keep this device's key (null: forget it). @param {string | null} key */
export function saveProfileKey(key) {
  try {
    if (key && KEY_SHAPE.test(key)) localStorage.setItem(KEY, key);
    else localStorage.removeItem(KEY);
  } catch {
    /* storage disabled: the profile lasts as long as the page */
  }
}

/** Send a profile request and note it as on its way. @param {ClientMessage} msg @param {Asked} kind */
function ask(msg, kind) {
  send(msg);
  dispatch({ type: "profile_asked", kind });
}

/**
 * On a new connection, before anything else goes: the stored key, so that every request
 * after it (a quick match, a table) finds the profile bound. Returns whether it was sent;
 * the caller notes it (`profileAsked("bind")`) once the greeting is dispatched.
 */
export function sendBind() {
  const key = profileKey();
  if (key) send({ type: "profile", key });
  return Boolean(key);
}

/** A request sent by another module (the bind on connecting), noted as on its way. @param {Asked} kind */
export function profileAsked(kind) {
  dispatch({ type: "profile_asked", kind });
}

/** The name for a new profile: the one typed on the home screen, if any. */
function typedName() {
  const name = loadPrefs().name.trim();
  return name && name.length <= 20 ? name : "";
}

/**
 * The player is about to play: a profile is made now if this device has none (quietly,
 * with the name typed), so the match counts for it. Nothing when the server keeps none.
 */
export function ensureProfile() {
  const { status } = getState().profile;
  if (profileKey() || status !== "none") return;
  const name = typedName();
  ask(name ? { type: "profile", name } : { type: "profile" }, "make");
}

/** `play` (a function starting a game), with the profile made first. @template {any[]} A @param {(...args: A) => void} play */
export function withProfile(play) {
  return (/** @type {A} */ ...args) => {
    ensureProfile();
    play(...args);
  };
}

/** *Start my profile* on the You screen. */
export function makeProfile() {
  ensureProfile();
  askHistory();
}

/** @param {string} name */
export function rename(name) {
  ask({ type: "profile", name }, "update");
}

/** On the leaderboard, or off it. @param {boolean} visible */
export function setPublic(visible) {
  ask({ type: "profile", public: visible }, "update");
}

/** *Link another device*: a one-time code for the other device to type. */
export function askLinkCode() {
  ask({ type: "link_code" }, "link_code");
}

/** *Have a code?*: this device plays as the profile of that code (its new key comes with the answer). @param {string} code */
export function redeemLinkCode(code) {
  ask({ type: "profile", link: code }, "link"); // its history is asked for once it is bound (js/handlers.js)
}

/** *Forget me*, confirmed: the profile deleted at the server; its key goes when the server says `forgotten`. */
export function forgetProfile() {
  ask({ type: "forget_profile" }, "forget");
}

/** The last matches, if a profile is bound or on its way. */
export function askHistory() {
  const { status } = getState().profile;
  if (status === "bound" || status === "binding" || status === "making" || profileKey()) ask({ type: "history" }, "history");
}

/** *Play today's deal*: a profile first if there is none, then the Daily Rack's table. */
export function playDaily() {
  ensureProfile();
  dispatch({ type: "show", screen: "loading", loading: "Dealing today's Daily Rack…" });
  ask({ type: "play_daily" }, "play_daily");
}

/** What the profile screen `screen` shows, asked for (again). @param {Screen} screen */
export function refreshScreen(screen) {
  const { status } = getState().profile;
  if (screen === "you") {
    if (status === "bound") ask({ type: "profile" }, "refresh");
    askHistory();
  } else if (screen === "leaderboard") {
    ask({ type: "leaderboard" }, "leaderboard");
  } else if (screen === "daily") {
    ask({ type: "daily" }, "daily");
  }
}

/** The screen the address's fragment names, or null. @returns {Screen | null} */
export function screenOfAddress() {
  return PROFILE_SCREENS[location.hash] || null;
}

/** The screens from which a fragment may open another (never from a table or its waiting room). */
const ROUTABLE = ["home", "you", "leaderboard", "daily"];

/** Open `screen` (home, or a profile screen) as a new entry of the browser's history. @param {Screen} screen */
export function go(screen) {
  const hash = Object.keys(PROFILE_SCREENS).find((h) => PROFILE_SCREENS[h] === screen) || "";
  history.pushState(null, "", location.pathname + location.search + hash);
  route();
}

/** Show the screen of the address (after Back, Forward or a typed fragment), asking for what it shows. */
export function route() {
  const state = getState();
  const screen = screenOfAddress() || "home";
  if (!ROUTABLE.includes(state.screen) || screen === state.screen) return;
  dispatch({ type: "show", screen });
  refreshScreen(screen);
}
