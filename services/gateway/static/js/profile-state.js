// @ts-check
// The profile's part of the page's state (`AppState.profile`) and its every change, pure:
// the profile bound to the connection, its history, the leaderboard, a link code, the
// Daily Rack, and the profile requests on their way (`asked`), oldest first. The gateway
// answers a connection's messages in order, each profile request with its own message or
// an `error`; an error carries no request id, so `asked` says which request it answers:
// a profile error code (`bad_profile`, `bad_link_code`, `no_profile`, `daily_played`)
// answers the request that can get it, any other code the oldest request on its way.
// js/reduce.js runs `receiveProfile` for every server message and `askProfile` for the
// page's `profile_asked`; nothing here touches the page, the network or storage.

import { errorText } from "./messages.js";

/** @typedef {import("./protocol.js").ServerMessage} ServerMessage */
/** @typedef {import("./protocol.js").ProfileMessage} ProfileMessage */
/** @typedef {import("./protocol.js").HistoryMatch} HistoryMatch */
/** @typedef {import("./protocol.js").LeaderboardEntry} LeaderboardEntry */
/** @typedef {import("./protocol.js").DailyMessage} DailyMessage */

/**
 * A profile request of the page's: `bind` (a stored key), `make` (a new profile), `link`
 * (a link code typed in), `update` (a new name, the leaderboard choice), `refresh` (the
 * bound profile again), `link_code`, `forget`, `history`, `leaderboard`, `daily`, `play_daily`.
 * @typedef {"bind" | "make" | "link" | "update" | "refresh" | "link_code" | "forget" | "history" | "leaderboard" | "daily" | "play_daily"} Asked
 */

/**
 * What the page knows of its profile. `status`: `none` (no profile on this device, or
 * none bound), `binding` (a stored key sent), `making` (a new profile or a link code sent),
 * `bound`, `unavailable` (the server keeps no profiles now: the page plays on without).
 * @typedef {object} ProfileState
 * @property {"none" | "binding" | "making" | "bound" | "unavailable"} status
 * @property {ProfileMessage | null} me the last `profile` message (without its key)
 * @property {HistoryMatch[] | null} history the last `history`, newest first (null: not asked yet)
 * @property {LeaderboardEntry[] | null} leaderboard
 * @property {{ code: string, expires_ms: number } | null} link the link code shown
 * @property {DailyMessage | null} daily
 * @property {string | null} note the last refusal of a You screen request, as a sentence
 * @property {string | null} boardNote why the leaderboard cannot be shown
 * @property {string | null} dailyNote why the Daily Rack cannot be shown or played
 * @property {boolean} forgotten the profile was forgotten on this page (the You screen says so)
 * @property {Asked[]} asked the requests on their way, oldest first
 */

/** @type {ProfileState} */
export const initialProfile = {
  status: "none",
  me: null,
  history: null,
  leaderboard: null,
  link: null,
  daily: null,
  note: null,
  boardNote: null,
  dailyNote: null,
  forgotten: false,
  asked: [],
};

/** The profile answers of the server, each to the requests it can answer. @type {Record<string, Asked[]>} */
const ANSWERS = {
  profile: ["bind", "make", "link", "update", "refresh"],
  history: ["history"],
  leaderboard: ["leaderboard"],
  link_code: ["link_code"],
  forgotten: ["forget"],
  daily: ["daily"],
  seated: ["play_daily"],
};

/** The error codes only a profile request gets, and the requests that can get each. @type {Record<string, Asked[]>} */
const PROFILE_ERRORS = {
  bad_profile: ["bind"],
  bad_link_code: ["link"],
  no_profile: ["update", "refresh", "link_code", "forget", "history", "play_daily"],
  daily_played: ["play_daily"],
};

/** The other error codes a profile request may get: they answer the oldest request on its way. */
const GENERIC_ERRORS = [
  "unavailable",
  "rate_limited",
  "bad_request",
  "bad_frame",
  "bad_name",
  "internal",
  "busy",
  "already_seated",
  "watching",
];

/** No profile any more (forgotten, or its key refused): what the page knew of it goes. */
const NO_PROFILE = Object.freeze({ status: /** @type {const} */ ("none"), me: null, history: null, link: null });

/** A request sent. @param {ProfileState} profile @param {Asked} kind @returns {ProfileState} */
export function askProfile(profile, kind) {
  const asked = [...profile.asked, kind];
  if (kind === "bind") return { ...profile, asked, status: profile.status === "bound" ? "bound" : "binding" };
  if (kind === "make" || kind === "link") return { ...profile, asked, status: profile.status === "bound" ? "bound" : "making", note: null };
  if (kind === "daily" || kind === "play_daily") return { ...profile, asked, dailyNote: null };
  if (kind === "leaderboard") return { ...profile, asked, boardNote: null };
  if (kind === "update" || kind === "link_code" || kind === "forget") return { ...profile, asked, note: null };
  return { ...profile, asked };
}

/** A new connection: nothing asked on the last one will be answered. @param {ProfileState} profile */
export function greetedProfile(profile) {
  return profile.asked.length ? { ...profile, asked: [] } : profile;
}

/**
 * What a server message does to the profile's state: `profile` the next state (the same
 * object when nothing changed), `handled` when the message answers a profile request
 * (the rest of the reducer then leaves it alone), `refused` the request an error answered.
 * @param {ProfileState} profile
 * @param {ServerMessage} msg
 * @returns {{ profile: ProfileState, handled: boolean, refused: Asked | null }}
 */
export function receiveProfile(profile, msg) {
  if (msg.type === "error") return refuse(profile, msg);
  const answers = ANSWERS[msg.type];
  if (!answers) return { profile, handled: false, refused: null };
  const asked = without(profile.asked, answers);
  switch (msg.type) {
    case "profile": {
      const { key, ...me } = msg;
      return { profile: { ...profile, asked, status: "bound", me, forgotten: false, note: null }, handled: true, refused: null };
    }
    case "history":
      return { profile: { ...profile, asked, history: msg.matches }, handled: true, refused: null };
    case "leaderboard":
      return { profile: { ...profile, asked, leaderboard: msg.entries, boardNote: null }, handled: true, refused: null };
    case "link_code":
      return { profile: { ...profile, asked, link: { code: msg.code, expires_ms: msg.expires_ms } }, handled: true, refused: null };
    case "forgotten":
      return { profile: { ...profile, ...NO_PROFILE, asked, forgotten: true, note: null }, handled: true, refused: null };
    case "daily":
      return { profile: { ...profile, asked, daily: msg, dailyNote: null }, handled: true, refused: null };
    default: // seated: a Daily Rack table, or any other (the table's own part of the state follows)
      return { profile: asked === profile.asked ? profile : { ...profile, asked }, handled: false, refused: null };
  }
}

/**
 * An `error`: the profile request it answers, if any, refused.
 * @param {ProfileState} profile
 * @param {import("./protocol.js").ErrorMessage} msg
 * @returns {{ profile: ProfileState, handled: boolean, refused: Asked | null }}
 */
function refuse(profile, msg) {
  const own = PROFILE_ERRORS[msg.code];
  const kind = own
    ? profile.asked.find((k) => own.includes(k)) || own[0]
    : !msg.id && GENERIC_ERRORS.includes(msg.code)
      ? profile.asked[0]
      : undefined;
  if (!kind) return { profile, handled: false, refused: null };
  const at = profile.asked.indexOf(kind);
  const asked = at < 0 ? profile.asked : [...profile.asked.slice(0, at), ...profile.asked.slice(at + 1)];
  const text = refusalText(kind, msg);
  /** @type {ProfileState} */
  let next = { ...profile, asked };
  if (msg.code === "bad_profile" || msg.code === "no_profile") next = { ...next, ...NO_PROFILE };
  switch (kind) {
    case "bind":
    case "make":
      if (msg.code !== "bad_profile") next = { ...next, status: "unavailable", note: text };
      break;
    case "link":
      next = { ...next, status: profile.status === "making" ? (profile.me ? "bound" : "none") : next.status, note: text };
      break;
    case "leaderboard":
      next = { ...next, boardNote: text };
      break;
    case "daily":
    case "play_daily":
      next = { ...next, dailyNote: text };
      break;
    case "history": // after a refused bind, make or link: what that refusal said stays
      next = { ...next, history: next.history || [], note: next.note || text };
      break;
    default:
      next = { ...next, note: text };
  }
  return { profile: next, handled: true, refused: kind };
}

/** The first of `kinds` gone from `asked` (the same array when none is there). @param {Asked[]} asked @param {Asked[]} kinds */
function without(asked, kinds) {
  const at = asked.findIndex((k) => kinds.includes(k));
  return at < 0 ? asked : [...asked.slice(0, at), ...asked.slice(at + 1)];
}

/** What the page says of a refused profile request. @param {Asked} kind @param {import("./protocol.js").ErrorMessage} msg */
export function refusalText(kind, msg) {
  switch (msg.code) {
    case "bad_link_code":
      return "That code is wrong, used or expired. Ask the other device for a new one.";
    case "no_profile":
      return "This device has no profile now.";
    case "daily_played":
      return "You have played today's Daily Rack already. A new one opens tomorrow.";
    case "bad_profile":
      return "This device's profile is gone.";
    case "bad_name":
      return errorText(msg);
    case "rate_limited":
      return "Too many tries — wait a minute and try again.";
  }
  if (kind === "daily" || kind === "play_daily") return "The Daily Rack is not available right now.";
  if (kind === "leaderboard") return "The leaderboard is not available right now.";
  if (kind === "bind" || kind === "make" || kind === "link") return "Profiles are not available right now: you can still play.";
  return "That did not work right now — try again in a moment.";
}
