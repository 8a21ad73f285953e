// @ts-check
// How to play (the help dialog): opening it with its hints setting, giving focus back
// when it closes, and the setting that brings the first-game hints back.

import { $, dialog, input } from "./dom.js";
import { SCREEN_FOCUS } from "./screens.js";
import { getState } from "./state.js";
import { loadPrefs, updatePrefs } from "./store.js";

/** What had focus when How to play opened. @type {HTMLElement | null} */
let helpOpener = null;

export function openHelp() {
  const help = dialog("help");
  input("pref-hints").checked = loadPrefs().hints;
  helpOpener = /** @type {HTMLElement | null} */ (document.activeElement);
  if (!help.open) help.showModal();
}

/** The dialog's close and its hints setting, and the two buttons that open it. */
export function initHelp() {
  // Closing How to play gives focus back to what had it, or to the screen's heading.
  $("help").addEventListener("close", () => {
    const back =
      helpOpener && helpOpener !== document.body && helpOpener.checkVisibility?.()
        ? helpOpener
        : $(SCREEN_FOCUS[getState().screen] || "main");
    helpOpener = null;
    if (back) back.focus({ preventScroll: true });
  });
  $("btn-help").addEventListener("click", openHelp);
  $("btn-howto").addEventListener("click", openHelp);
  $("pref-hints").addEventListener("change", (e) =>
    updatePrefs({
      hints: /** @type {HTMLInputElement} */ (e.target).checked,
      gamesFinished: 0,
      hintsSeen: /** @type {HTMLInputElement} */ (e.target).checked ? [] : loadPrefs().hintsSeen,
    }),
  );
}
