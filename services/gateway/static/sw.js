// A minimal service worker: keeps the page's shell so it opens offline or on a bad
// network. Network first (a fresh deploy shows at once), the cache as a fallback.
// It never touches the WebSocket (/ws) or anything outside the shell, such as match logs.
// The replay viewer is in the shell too (/replay/ and its files), so a downloaded match
// log can be replayed offline; every /replay/{table_id} is that one page.

const CACHE = "rackem-shell-v9";
const SHELL = [
  "/",
  "/index.html",
  "/css/app.css",
  "/css/replay.css",
  "/replay/",
  "/manifest.webmanifest",
  "/icons/icon.svg",
  "/icons/icon-192.png",
  "/icons/icon-512.png",
  "/js/app.js",
  "/js/cards.js",
  "/js/changes.js",
  "/js/chart.js",
  "/js/coach.js",
  "/js/conn.js",
  "/js/daily.js",
  "/js/dom.js",
  "/js/finish.js",
  "/js/handlers.js",
  "/js/help.js",
  "/js/hints.js",
  "/js/home.js",
  "/js/invite.js",
  "/js/keys.js",
  "/js/leaderboard.js",
  "/js/lobby.js",
  "/js/messages.js",
  "/js/movelog.js",
  "/js/mute.js",
  "/js/replay.js",
  "/js/replay-link.js",
  "/js/replay-model.js",
  "/js/net.js",
  "/js/play.js",
  "/js/profile.js",
  "/js/profile-state.js",
  "/js/protocol.js",
  "/js/reduce.js",
  "/js/rematch.js",
  "/js/render.js",
  "/js/rng.js",
  "/js/rules.js",
  "/js/screens.js",
  "/js/seat.js",
  "/js/selectors.js",
  "/js/sha256.js",
  "/js/sound.js",
  "/js/start.js",
  "/js/state.js",
  "/js/store.js",
  "/js/table.js",
  "/js/verify.js",
  "/js/view.js",
  "/js/watch.js",
  "/js/you.js",
];

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  // The page loads its files under /v/<version>/ (services/gateway/static_files.py):
  // they are kept under their plain paths, so the shell opens offline whatever its version.
  const plain = url.pathname.replace(/^\/v\/[^/]+\//, "/");
  const path = plain === "/" || plain === "/index.html" ? "/" : /^\/replay(\/|$)/.test(plain) ? "/replay/" : plain;
  if (!SHELL.includes(path)) return; // /ws, /match/…, health: straight to the network
  event.respondWith(
    fetch(request)
      .then((response) => {
        if (response.ok) {
          const copy = response.clone();
          caches.open(CACHE).then((cache) => cache.put(path, copy));
        }
        return response;
      })
      .catch(() => caches.match(path)),
  );
});
