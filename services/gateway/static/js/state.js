// @ts-check
// The store: the page's one state object (its shape and every change to it are
// js/reduce.js's), `dispatch(action)`, which runs the reducer and then the subscribers
// (app.js subscribes `render`, and the invitation's socket), and `getState()` for the
// modules that read it.

import { initialState, reduce } from "./reduce.js";

/** @typedef {import("./reduce.js").AppState} AppState */
/** @typedef {import("./reduce.js").Action} Action */

/** @type {AppState} */
let current = initialState;

/** @type {((state: AppState) => void)[]} */
const listeners = [];

/** The state now (never to be changed: dispatch an action). */
export function getState() {
  return current;
}

/**
 * The one way the state changes: the reducer's next state, then every subscriber,
 * unless nothing changed. Not to be called from a subscriber.
 * @param {Action} action
 */
export function dispatch(action) {
  const next = reduce(current, action);
  if (next === current) return;
  current = next;
  for (const listener of listeners) listener(current);
}

/** Call `listener` with the new state after every change. @param {(state: AppState) => void} listener */
export function subscribe(listener) {
  listeners.push(listener);
}
