// The invitation a share link opens (/?code=K7MX2Q): the table's code, your name, Join.
// "Other ways to play" goes to the ordinary home page.

import { normalCode } from "./home.js";
import { loadPrefs, updatePrefs } from "./store.js";

const $ = (id) => document.getElementById(id);

/** The 6-character room code of the share link this page was opened with, or "". */
export function inviteCode() {
  const code = normalCode(new URLSearchParams(location.search).get("code"));
  return code.length === 6 ? code : "";
}

export function initInvite({ join, error, home }) {
  const code = inviteCode();
  if (!code) return;
  $("invite-code").textContent = code;
  $("invite-name").value = loadPrefs().name;
  $("form-invite").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("invite-name").value.trim();
    if (!name || name.length > 20 || /[\u0000-\u001f\u007f]/.test(name)) {
      error("Type your name first (1 to 20 characters).");
      $("invite-name").focus();
      return;
    }
    updatePrefs({ name });
    $("name").value = name;
    join(name, code);
  });
  $("btn-invite-home").addEventListener("click", (event) => {
    event.preventDefault();
    history.replaceState(null, "", "/");
    home();
  });
}
