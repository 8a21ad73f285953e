// @ts-check
// The link from the match-over screen to the replay viewer: /replay/{table_id}, with
// the seats' names in the fragment (#seats=Ann,Bot%20Kit). The match log has no
// names; the fragment never reaches the server, and the viewer shows the names as
// plain text, falling back to "Seat 1"… without them.

const MAX_NAME = 20;

/** The replay viewer's address for a table view (`tv`, as the `view` message carries it). @param {import("./protocol.js").TableView} tv */
export function replayUrl(tv) {
  const names = (tv.seats || [])
    .slice()
    .sort((a, b) => a.seat - b.seat)
    .map((s) => encodeURIComponent(s.name || ""));
  const fragment = names.length ? `#seats=${names.join(",")}` : "";
  return `/replay/${encodeURIComponent(tv.table_id)}${fragment}`;
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
