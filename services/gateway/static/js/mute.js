// @ts-check
// The sound button (and the M key): mute or unmute, remembered in the preferences and
// said aloud, the button's pressed state and label kept in step.

import { $ } from "./dom.js";
import { announce } from "./screens.js";
import { isMuted, play, setMuted } from "./sound.js";
import { updatePrefs } from "./store.js";

/** Sounds on or off, and the button saying so. @param {boolean} muted */
export function applyMute(muted) {
  setMuted(muted);
  const button = $("btn-sound");
  button.setAttribute("aria-pressed", String(muted));
  button.setAttribute("aria-label", muted ? "Unmute sounds (M)" : "Mute sounds (M)");
  button.title = muted ? "Sounds off — press M to turn them on" : "Sounds on — press M to mute";
}

/** The sound button and M: mute or unmute, remembered and said aloud. */
export function toggleMute() {
  applyMute(!isMuted());
  updatePrefs({ muted: isMuted() });
  announce(isMuted() ? "Sounds off" : "Sounds on");
  if (!isMuted()) play("draw");
}
