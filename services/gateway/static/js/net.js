// @ts-check
// One WebSocket to the gateway (docs/protocol.md), kept open until `close()`: hello
// first, then the caller's messages; on a drop it reconnects with exponential backoff
// and jitter, and `onOpen` lets the caller resume its seat with the token. What it
// holds (the socket, the queue, the timers) is its own: callers use its methods.

/** @typedef {import("./protocol.js").ClientMessage} ClientMessage */
/** @typedef {import("./protocol.js").ServerMessage} ServerMessage */
/** @typedef {import("./reduce.js").ConnectionStatus} ConnectionStatus */

/**
 * @typedef {object} ConnectionOptions
 * @property {string} url
 * @property {(msg: ServerMessage) => void} onMessage every message but `welcome`
 * @property {() => void} onOpen greeted by the server (`welcome`), before the queue is sent
 * @property {(status: ConnectionStatus) => void} onStatus connecting, open, or waiting to retry
 */

const BACKOFF_MS = [500, 1000, 2000, 4000, 8000, 15000];
const PING_MS = 25000;

export class Connection {
  /** @type {ClientMessage[]} sent before `welcome`: sent once greeted */
  #queue = [];
  #ready = false;
  #attempt = 0;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  #timer;
  /** @type {ReturnType<typeof setInterval> | undefined} */
  #pinger;

  /** @param {ConnectionOptions} options */
  constructor({ url, onMessage, onOpen, onStatus }) {
    this.url = url;
    this.onMessage = onMessage;
    this.onOpen = onOpen;
    this.onStatus = onStatus;
    /** @type {WebSocket | null} the socket now (tests close it to drop the connection) */
    this.ws = null;
  }

  /** The gateway's `/ws` on the page's own host. */
  static defaultUrl() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${location.host}/ws`;
  }

  /** Open the socket (again). */
  connect() {
    clearTimeout(this.#timer);
    this.#ready = false;
    this.onStatus({ state: "connecting", attempt: this.#attempt });
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch {
      this.retry();
      return;
    }
    this.ws = ws;
    ws.onopen = () => ws.send(JSON.stringify({ type: "hello", version: 1, client: "rackem-web" }));
    ws.onmessage = (event) => {
      /** @type {ServerMessage} */
      let msg;
      try {
        msg = JSON.parse(event.data);
      } catch {
        return;
      }
      if (msg.type === "welcome") {
        this.#ready = true;
        this.#attempt = 0;
        this.onStatus({ state: "open" });
        this.onOpen();
        const queued = this.#queue.splice(0);
        for (const m of queued) this.send(m);
        clearInterval(this.#pinger);
        this.#pinger = setInterval(() => this.send({ type: "ping", t: Date.now() }), PING_MS);
        return;
      }
      this.onMessage(msg);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.#ready = false;
      clearInterval(this.#pinger);
      this.retry();
    };
    ws.onerror = () => ws.close();
  }

  /** Try again after the backoff. */
  retry() {
    const base = BACKOFF_MS[Math.min(this.#attempt, BACKOFF_MS.length - 1)];
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    this.#attempt += 1;
    this.onStatus({ state: "waiting", retryAt: Date.now() + delay, attempt: this.#attempt });
    this.#timer = setTimeout(() => this.connect(), delay);
  }

  /** Reconnect now instead of waiting out the backoff. */
  retryNow() {
    if (this.#ready) return;
    clearTimeout(this.#timer);
    if (this.ws) {
      this.ws.onclose = null;
      this.ws.close();
    }
    this.connect();
  }

  /** Drop this connection (and the seat it is bound to at the gateway) and open a fresh one. */
  fresh() {
    this.drop();
    this.#attempt = 0;
    this.connect();
  }

  /** Close for good: no reconnect, nothing more sent or received. */
  close() {
    this.drop();
    this.#queue = [];
  }

  /** Close the socket, its handlers and timers gone. */
  drop() {
    clearTimeout(this.#timer);
    clearInterval(this.#pinger);
    const old = this.ws;
    this.ws = null;
    this.#ready = false;
    if (old) {
      old.onopen = null;
      old.onclose = null;
      old.onmessage = null;
      old.onerror = null;
      try {
        old.close();
      } catch {
        /* already closed */
      }
    }
  }

  /** How many messages wait for the connection (sent once the server greets it). */
  queued() {
    return this.#queue.length;
  }

  /**
   * Send a message now, or once the connection is (re)established (a move or a ping only
   * now: false when it could not go).
   * @param {ClientMessage} msg
   */
  send(msg) {
    if (this.#ready && this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(msg));
      return true;
    }
    if (msg.type !== "ping" && msg.type !== "move") this.#queue.push(msg);
    return false;
  }
}
