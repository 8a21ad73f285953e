// @ts-check
// What the page keeps in the browser. Preferences (name, options, sound, hints) live
// in localStorage; the seat token lives in sessionStorage, so each tab holds its own
// seat and a reload resumes it. A copy of the last seat in localStorage lets a new
// tab offer to resume. Nothing here is sent anywhere but to the table's gateway.

const PREFS = "rackem.prefs";
const SEAT = "rackem.seat";
const LAST = "rackem.lastSeat";
const LAST_MAX_AGE_MS = 2 * 60 * 60 * 1000;

/**
 * The seat this tab holds (the server's `seated`), with the commitment shown when its match started.
 * @typedef {{ token: string, seat: number, code: string, table_id: string, commitment?: string | null, saved?: number }} StoredSeat
 */

/** @param {Storage} storage @param {string} key @returns {any} */
function read(storage, key) {
  try {
    const raw = storage.getItem(key);
    return raw ? JSON.parse(raw) : null;
  } catch {
    return null;
  }
}

/** @param {Storage} storage @param {string} key @param {unknown} value */
function write(storage, key, value) {
  try {
    if (value === null) storage.removeItem(key);
    else storage.setItem(key, JSON.stringify(value));
  } catch {
    /* storage full or disabled: the page still works, it just forgets */
  }
}

/**
 * @typedef {object} Prefs
 * @property {string} name
 * @property {number} players
 * @property {string} level
 * @property {Record<string, any>} rules the rules options not at their default
 * @property {number} quickPlayers
 * @property {boolean} muted
 * @property {boolean} hints
 * @property {number} gamesFinished
 * @property {string[]} hintsSeen
 */

/** @type {Prefs} */
export const DEFAULT_PREFS = {
  name: "",
  players: 2,
  level: "medium",
  rules: {},
  quickPlayers: 2,
  muted: false,
  hints: true,
  gamesFinished: 0,
  hintsSeen: [],
};

/** @returns {Prefs} */
export function loadPrefs() {
  return { ...DEFAULT_PREFS, ...(read(localStorage, PREFS) || {}) };
}

/** @param {Prefs} prefs */
export function savePrefs(prefs) {
  write(localStorage, PREFS, prefs);
}

/** @param {Partial<Prefs>} changes */
export function updatePrefs(changes) {
  const prefs = { ...loadPrefs(), ...changes };
  savePrefs(prefs);
  return prefs;
}

/** The seat this tab holds, or null. @returns {StoredSeat | null} */
export function loadSeat() {
  return read(sessionStorage, SEAT);
}

/** @param {StoredSeat | null} seat */
export function saveSeat(seat) {
  write(sessionStorage, SEAT, seat);
  write(localStorage, LAST, seat ? { ...seat, saved: Date.now() } : null);
}

export function forgetSeat() {
  const mine = loadSeat();
  write(sessionStorage, SEAT, null);
  const last = read(localStorage, LAST);
  if (!last || !mine || last.token === mine.token) write(localStorage, LAST, null);
}

/** A recent seat left by another tab or a closed window, to offer resuming it. @returns {StoredSeat | null} */
export function lastSeat() {
  const last = read(localStorage, LAST);
  if (!last || Date.now() - (last.saved || 0) > LAST_MAX_AGE_MS) return null;
  return last;
}
