// @ts-check
// Checking a rackem-match/1 log in the page (docs/rules.md, "Match log"): the seed
// against the commitment, every deal re-derived from the seed, every move replayed
// through the rules, and the claimed result recomputed.

import { bytesToHex, hexToBytes } from "./rng.js";
import { sha256 } from "./sha256.js";
import { Match, RackError, makeRules, parseMove } from "./rules.js";

export const FORMAT = "rackem-match/1";
const KEYS = ["format", "rules", "seed", "commitment", "moves", "result", "decks", "first_dealer"];

/** @typedef {import("./rules.js").RoundResult} RoundResult */

/** @param {string} message */
function bad(message) {
  return new RackError("bad_log", message);
}

/**
 * A fresh Match from a log's rules and seed or stacked decks; throws RackError("bad_log").
 * @param {any} log a parsed rackem-match/1 file, not yet checked
 * @returns {Promise<Match>}
 */
export async function matchFromLog(log) {
  if (log === null || typeof log !== "object" || Array.isArray(log)) throw bad("a match log is a JSON object");
  if (log.format !== FORMAT) throw bad(`not a ${FORMAT} log (the "format" field)`);
  const unknown = Object.keys(log)
    .filter((k) => !KEYS.includes(k))
    .sort();
  if (unknown.length) throw bad(`unknown log field: ${unknown[0]}`);
  let rules;
  try {
    rules = makeRules(log.rules ?? {});
  } catch (exc) {
    throw bad(`bad rules: ${exc instanceof Error ? exc.message : exc}`);
  }
  if (!Array.isArray(log.moves)) throw bad('a log needs a "moves" list');
  if ("seed" in log) {
    if (typeof log.seed !== "string" || log.seed.length !== 64 || /[^0-9a-fA-F]/.test(log.seed)) {
      throw bad("seed must be 64 hex characters");
    }
    return Match.create(rules, { seed: hexToBytes(log.seed) });
  }
  if ("decks" in log) {
    const decks = log.decks;
    if (!Array.isArray(decks) || !decks.every((/** @type {unknown} */ d) => Array.isArray(d) && d.every(Number.isInteger))) {
      throw bad("decks must be a list of lists of card numbers");
    }
    return Match.create(rules, { decks, dealer: log.first_dealer ?? null });
  }
  throw bad("the log has neither a seed nor stacked decks");
}

/**
 * What a log's replay says: valid, or the first wrong move (`move_index` null: the log as a whole).
 * @typedef {{ valid: boolean, finished?: boolean, error?: { move_index: number | null, reason: string },
 *   scores?: number[], rounds?: RoundResult[], winner?: number | null }} Report
 */

/** @param {number | null} index @param {string} reason @returns {Report} */
const invalid = (index, reason) => ({ valid: false, error: { move_index: index, reason } });
/** @param {unknown} a @param {unknown} b */
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Re-derive a logged match and compare it with what the log claims. Resolves to
 * {valid: true, finished, scores, rounds, winner} or {valid: false, error: {move_index, reason}};
 * rejects with RackError("bad_log") for something that is not a log at all.
 * @param {any} log a parsed rackem-match/1 file, not yet checked
 * @returns {Promise<Report>}
 */
export async function verifyLog(log) {
  const match = await matchFromLog(log);
  if ("seed" in log && "commitment" in log) {
    const digest = bytesToHex(await sha256(hexToBytes(log.seed)));
    if (digest !== log.commitment) return invalid(null, "the seed does not match the commitment");
  }
  for (let index = 0; index < log.moves.length; index++) {
    try {
      await match.apply(parseMove(log.moves[index]));
    } catch (exc) {
      if (!(exc instanceof RackError)) throw exc;
      return invalid(index, `${exc.code}: ${exc.message}`);
    }
  }
  const result = { scores: match.scores, rounds: match.rounds, winner: match.winner };
  const claimed = log.result;
  if (claimed !== undefined && claimed !== null) {
    if (typeof claimed !== "object" || Array.isArray(claimed)) return invalid(null, "result must be an object");
    for (const [key, value] of Object.entries(result)) {
      if (key in claimed && !same(claimed[key], value)) {
        return invalid(null, `claimed ${key} ${JSON.stringify(claimed[key])}, replay gives ${JSON.stringify(value)}`);
      }
    }
  }
  return { valid: true, finished: match.phase === "match_over", ...result };
}
