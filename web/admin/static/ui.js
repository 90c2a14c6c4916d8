// The page's two live regions: #status (progress, "Saved") and #alert
// (errors, conflicts). Every API error goes through showError with the
// API's own message and code.
import { h } from "./dom.js";

export function say(text) {
  document.getElementById("status").textContent = text;
}

export function clearAlert() {
  const a = document.getElementById("alert");
  a.hidden = true;
  a.replaceChildren();
}

// alertWith shows children (text and buttons) in the alert region.
export function alertWith(...children) {
  const a = document.getElementById("alert");
  a.replaceChildren(...children);
  a.hidden = false;
}

export function showError(what, e) {
  const code = e && e.code ? ` (${e.code})` : "";
  alertWith(h("p", {}, `${what}: ${(e && e.message) || String(e)}${code}`));
}
