// @ts-check
// The keyboard scheme: S stock, D discard, 1–0 slots 5–50, T throw, R then a digit
// repair, H history, A Hint (where hints are allowed), Enter continue, M mute, ? help,
// Escape cancel.

/**
 * What the keys do.
 * @typedef {object} KeyActions
 * @property {() => boolean} atTable the table shows (the table's keys work)
 * @property {() => void} help
 * @property {() => void} toggleMute
 * @property {(source: "stock" | "discard") => void} draw
 * @property {(slot: number) => void} slot
 * @property {() => void} throwCard
 * @property {(slot: number) => void} repair
 * @property {() => boolean} armRepair R: true when the next digit repairs
 * @property {() => void} cancel
 * @property {() => void} toggleHistory
 * @property {() => void} askHint A: the Hint (which does nothing where hints are not allowed)
 * @property {() => boolean} canContinue
 * @property {() => void} continueRound
 */

/** Listen to the page's keys. @param {KeyActions} actions */
export function bindKeys(actions) {
  let repairArmed = false;
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = /** @type {HTMLInputElement | null} */ (event.target);
    const typing = target && (target.isContentEditable || ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName));
    if (typing && target.type !== "checkbox" && target.type !== "radio") return;
    if (document.querySelector("dialog[open]")) return; // the help dialog handles its own keys
    const key = event.key;
    if (key === "?" || (key === "/" && event.shiftKey)) {
      event.preventDefault();
      actions.help();
      return;
    }
    if (key === "m" || key === "M") {
      event.preventDefault();
      actions.toggleMute();
      return;
    }
    if (!actions.atTable()) return;
    if (key === "Enter") {
      if (actions.canContinue()) {
        event.preventDefault();
        actions.continueRound();
      }
      return;
    }
    if (key === "Escape") {
      repairArmed = false;
      actions.cancel();
      return;
    }
    const lower = key.length === 1 ? key.toLowerCase() : key;
    if (/^[0-9]$/.test(lower)) {
      event.preventDefault();
      const digit = Number(lower);
      if (repairArmed) {
        repairArmed = false;
        if (digit >= 1 && digit <= 9) actions.repair(digit - 1);
        else actions.cancel();
        return;
      }
      actions.slot(digit === 0 ? 9 : digit - 1);
      return;
    }
    const handled = {
      s: () => actions.draw("stock"),
      d: () => actions.draw("discard"),
      t: () => actions.throwCard(),
      h: () => actions.toggleHistory(),
      a: () => actions.askHint(),
      r: () => {
        repairArmed = actions.armRepair();
      },
    }[lower];
    if (handled) {
      event.preventDefault();
      if (lower !== "r") repairArmed = false;
      handled();
    }
  });
}
