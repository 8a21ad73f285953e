// @ts-check
// The page's one connection to the gateway (js/net.js), shared by every module that
// sends on it, through the functions below. What its events do (js/handlers.js) is
// hooked in by app.js with `handleEvents` before it connects.

import { Connection } from "./net.js";

/** @typedef {import("./protocol.js").ClientMessage} ClientMessage */

/**
 * @typedef {object} ConnectionEvents
 * @property {() => void} open greeted by the server (`welcome`), before the queue is sent
 * @property {(status: import("./reduce.js").ConnectionStatus) => void} status connecting, open, or waiting to retry
 * @property {(msg: import("./protocol.js").ServerMessage) => void} message any other server message
 */

/** @type {ConnectionEvents} */
let events = { open() {}, status() {}, message() {} };

/** The connection itself: for `window.rackem` (the tests' handle) only. */
export const conn = new Connection({
  url: Connection.defaultUrl(),
  onOpen: () => events.open(),
  onStatus: (status) => events.status(status),
  onMessage: (msg) => events.message(msg),
});

/** What the connection's events do (set once, before `connect`). @param {ConnectionEvents} handlers */
export function handleEvents(handlers) {
  events = handlers;
}

/** Open the connection (it reconnects by itself from then on). */
export function connect() {
  conn.connect();
}

/** Send `msg` now, or queue it until the server greets the connection (true: sent now). @param {ClientMessage} msg */
export function send(msg) {
  return conn.send(msg);
}

/** How many messages wait to be sent once the connection is greeted. */
export function queuedCount() {
  return conn.queued();
}

/** Reconnect now instead of waiting out the backoff (the top bar's *Retry now*). */
export function retryNow() {
  conn.retryNow();
}

/** Drop the connection (and the seat the gateway bound to it) and open a fresh one. */
export function fresh() {
  conn.fresh();
}
