// @ts-check
// The coach: a move said as advice ("draw from the stock", "place the 17 in slot 20"),
// for the table's Hint and for a review's better moves, and a seat's review of a
// finished match (GET /review/{table_id}.json?seat=N, the gateway asks the bots): its
// types, its marks in words and shapes, and fetching it, quietly null when the server
// has none (the match still running, the bots away).

/** @typedef {import("./protocol.js").Move} Move */

/** How good a decision was, best first. @typedef {"best" | "good" | "inaccuracy" | "mistake" | "blunder"} Mark */

/**
 * One decision of the reviewed seat: the move played (`played`, as the match log has it),
 * the bots' best there, and what the played one cost in turns.
 * @typedef {object} ReviewDecision
 * @property {number} at the move's index in the match log's `moves`
 * @property {number} round
 * @property {number} turn
 * @property {"human" | "bot" | "cover" | string} by
 * @property {"draw" | "resolve" | string} kind
 * @property {Move} played
 * @property {Move} best
 * @property {number} cost
 * @property {Mark} mark
 */

/**
 * @typedef {object} ReviewSummary
 * @property {number} decisions
 * @property {number} accuracy a percentage
 * @property {Record<Mark, number>} marks how many decisions got each mark
 * @property {number[]} costliest indices into `decisions`, costliest first
 */

/**
 * The gateway's `rackem-review/1` answer.
 * @typedef {{ format: string, seat: number, decisions: ReviewDecision[], summary: ReviewSummary }} Review
 */

/** Every mark, best first: its word and its sign (the sign is a shape, never colour alone). @type {{ mark: Mark, word: string, sign: string }[]} */
export const MARKS = [
  { mark: "best", word: "best", sign: "✓" },
  { mark: "good", word: "good", sign: "○" },
  { mark: "inaccuracy", word: "inaccuracy", sign: "?!" },
  { mark: "mistake", word: "mistake", sign: "?" },
  { mark: "blunder", word: "blunder", sign: "??" },
];

/** The marks that call for a better move. */
export const SLIPS = ["inaccuracy", "mistake", "blunder"];

/** A mark's sign and word. @param {string} mark */
export function markOf(mark) {
  return MARKS.find((m) => m.mark === mark) || { mark: "good", word: mark, sign: "·" };
}

/** @param {number} slot */
const slotMark = (slot) => (slot + 1) * 5;

/**
 * A move as advice, in the table's own words (its keys' help: "draw from the stock",
 * "take the top of the discard pile", "place in slot 20", "throw … away").
 * @param {Move} move
 * @param {{ held?: number | null, top?: number | null }} [cards] the card held (to place or throw), the discard pile's top
 */
export function moveAdvice(move, cards = {}) {
  const held = cards.held ?? null;
  const top = cards.top ?? null;
  const slot = move.slot ?? 0;
  const stay = move.go_out === false ? ", and stay in" : "";
  switch (move.act) {
    case "draw":
      return move.from === "discard" ? `take the top of the discard pile${top === null ? "" : ` (${top})`}` : "draw from the stock";
    case "place":
      return `${held === null ? "place your card" : `place the ${held}`} in slot ${slotMark(slot)}${stay}`;
    case "throw":
      return `${held === null ? "throw your card" : `throw the ${held}`} away${stay}`;
    case "repair":
      return `swap slots ${slotMark(slot)} and ${slotMark(slot + 1)} with the repair token`;
    default:
      return "—";
  }
}

/** What a decision cost, in own turns ("cost about 0.14 turns"). @param {number} cost */
export function costText(cost) {
  const rounded = Math.round(cost * 100) / 100;
  if (rounded < 0.01) return "cost less than a hundredth of a turn";
  return `cost about ${rounded} turn${rounded === 1 ? "" : "s"}`;
}

/** An accuracy as a percentage ("87.5%"). @param {number} accuracy */
export const accuracyText = (accuracy) => `${Math.round(accuracy * 10) / 10}%`;

/** Where the gateway reviews one seat of a finished match. @param {string} tableId @param {number} seat */
export function reviewUrl(tableId, seat) {
  return `/review/${encodeURIComponent(tableId)}.json?seat=${seat}`;
}

/**
 * A seat's review of a finished match, or null when the server has none to give
 * (404 while the match runs, 503 while the bots are away, a network error, not a review).
 * `tries` asks again after 1 s, 2 s…: the match's log may land a moment after its last view.
 * @param {string} tableId
 * @param {number} seat
 * @param {number} [tries]
 * @returns {Promise<Review | null>}
 */
export async function fetchReview(tableId, seat, tries = 1) {
  for (let attempt = 0; attempt < tries; attempt++) {
    if (attempt) await new Promise((done) => setTimeout(done, 1000 * attempt));
    try {
      const response = await fetch(reviewUrl(tableId, seat), { cache: "no-store" });
      if (response.status === 404 && attempt + 1 < tries) continue;
      if (!response.ok) return null;
      const review = await response.json();
      return isReview(review) ? review : null;
    } catch {
      if (attempt + 1 >= tries) return null;
    }
  }
  return null;
}

/** The answer has the shape the page reads. @param {any} data @returns {data is Review} */
function isReview(data) {
  return Boolean(
    data &&
      typeof data === "object" &&
      Array.isArray(data.decisions) &&
      data.summary &&
      typeof data.summary.accuracy === "number" &&
      data.summary.marks &&
      Array.isArray(data.summary.costliest),
  );
}
