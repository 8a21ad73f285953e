// @ts-check
// The page's state: one object, read by every part of the controller (app.js wires
// them), and `resetTable()`, which forgets the table this page was at.

import { $ } from "./dom.js";

/** @typedef {import("./selectors.js").TableView} TableView */

/**
 * The page's state: one object, written only by the controller's modules (the tests read it as window.rackem.state).
 * @typedef {object} AppState
 * @property {string} screen the screen shown (one of SCREENS, js/screens.js)
 * @property {any} lobby the last `lobby` message while the table waits, else null
 * @property {TableView | null} tv the latest view of the table this page is at
 * @property {number} receivedAt when `tv` arrived (performance.now()), for the clocks
 * @property {{ id: string, version: number } | null} pending the move sent and not answered yet
 * @property {boolean} repairMode R pressed: the next slot key repairs
 * @property {boolean} historyOpen the recent-moves list is open (phone)
 * @property {string[]} log the recent moves' sentences, newest first (20 at most)
 * @property {(() => void) | null} afterLeft what to do once the server says `left`
 * @property {boolean} connected the socket is open and greeted
 * @property {number} lastTick the last second the clock ticked aloud
 * @property {any} verified the fair-deal check's answer for this match
 * @property {number} clockSeat the seat whose clock runs (-1: none), set by render()
 */

/** @type {AppState} */
export const state = {
  screen: "loading",
  lobby: null,
  tv: null,
  receivedAt: 0,
  pending: null,
  repairMode: false,
  historyOpen: false,
  log: [],
  afterLeft: null,
  connected: false,
  lastTick: -1,
  verified: null,
  clockSeat: -1,
};

/** No table any more (a new one, a seat given up, a token refused): its state and overlays go. */
export function resetTable() {
  state.tv = null;
  state.log = [];
  state.pending = null;
  state.repairMode = false;
  state.historyOpen = false;
  state.verified = null;
  $("round-over").hidden = true;
  $("match-over").hidden = true;
  $("hint").hidden = true;
}
