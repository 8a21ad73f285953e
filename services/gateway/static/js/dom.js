// @ts-check
// The page's elements by id, typed for what each kind of element is. The pages
// (index.html, replay.html) always hold the ids the scripts ask for.

/** @param {string} id @returns {HTMLElement} */
export const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** An <input> (or <select>): value, checked, disabled. @param {string} id @returns {HTMLInputElement} */
export const input = (id) => /** @type {HTMLInputElement} */ (document.getElementById(id));

/** @param {string} id @returns {HTMLButtonElement} */
export const button = (id) => /** @type {HTMLButtonElement} */ (document.getElementById(id));

/** @param {string} id @returns {HTMLDialogElement} */
export const dialog = (id) => /** @type {HTMLDialogElement} */ (document.getElementById(id));

/** @param {string} id @returns {HTMLFormElement} */
export const form = (id) => /** @type {HTMLFormElement} */ (document.getElementById(id));

/** @param {string} id @returns {HTMLAnchorElement} */
export const link = (id) => /** @type {HTMLAnchorElement} */ (document.getElementById(id));
