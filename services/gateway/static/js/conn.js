// @ts-check
// The page's one connection to the gateway (js/net.js), shared by every module that
// sends on it. What its events do (js/handlers.js) is hooked in by app.js with
// `handleEvents` before it connects: those handlers send on this connection too.

import { Connection } from "./net.js";

/**
 * @typedef {object} ConnectionEvents
 * @property {() => void} open greeted by the server (`welcome`), before the queue is sent
 * @property {(status: any) => void} status connecting, open, or waiting to retry
 * @property {(msg: any) => void} message any other server message
 */

/** @type {ConnectionEvents} */
let events = { open() {}, status() {}, message() {} };

export const conn = new Connection({
  url: Connection.defaultUrl(),
  onOpen: () => events.open(),
  onStatus: (status) => events.status(status),
  onMessage: (msg) => events.message(msg),
});

/** @param {ConnectionEvents} handlers */
export function handleEvents(handlers) {
  events = handlers;
}
