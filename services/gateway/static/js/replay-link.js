// @ts-check
// The link from the match-over screen to the replay viewer: /replay/{table_id}, with
// the seats' names in the fragment (#seats=Ann,Bot%20Kit), and for *Review my play* the
// seat whose review to show (#seats=…&review=0). The match log has no names; the
// fragment never reaches the server, and the viewer shows the names as plain text,
// falling back to "Seat 1"… without them.

const MAX_NAME = 20;

/**
 * The replay viewer's address for a table view (`tv`, as the `view` message carries it),
 * with the review of `review`'s seat when given.
 * @param {import("./protocol.js").TableView} tv
 * @param {number} [review]
 */
export function replayUrl(tv, review) {
  const names = (tv.seats || [])
    .slice()
    .sort((a, b) => a.seat - b.seat)
    .map((s) => encodeURIComponent(s.name || ""));
  const parts = [];
  if (names.length) parts.push(`seats=${names.join(",")}`);
  if (review !== undefined && review >= 0) parts.push(`review=${review}`);
  return `/replay/${encodeURIComponent(tv.table_id)}${parts.length ? `#${parts.join("&")}` : ""}`;
}

/** The seat whose review a replay link asks for (`&review=N`), or -1. @param {string} hash */
export function replayReviewSeat(hash) {
  const found = /[#&]review=([0-3])(?:&|$)/.exec(hash || "");
  return found ? Number(found[1]) : -1;
}

/** The seats' names from a replay link's fragment (at most four, each trimmed to 20 characters). @param {string} hash */
export function replayNames(hash) {
  const found = /^#seats=([^&]*)/.exec(hash || "");
  if (!found) return [];
  return found[1]
    .split(",")
    .slice(0, 4)
    .map((part) => {
      try {
        return decodeURIComponent(part).trim().slice(0, MAX_NAME);
      } catch {
        return "";
      }
    });
}
