// Tiny DOM helpers. Everything from the API goes in as text nodes, never as
// HTML, so a goods or value name cannot inject markup.

// h("button", {class: "x", "aria-label": "…", onclick: f}, "text", child)
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "value") el.value = v;
    else if (k === "checked") el.checked = !!v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

// A visible label tied to its control by id, so the control's accessible
// name is the label's text.
let seq = 0;
export function field(labelText, control, { hint } = {}) {
  const id = control.id || (control.id = "f" + ++seq);
  const label = h("label", { for: id }, labelText);
  return h("div", { class: "field" }, label, control, hint ? h("small", { class: "hint" }, hint) : null);
}

export function setBusy(el, busy) {
  el.setAttribute("aria-busy", busy ? "true" : "false");
}

// Money is a decimal string with two places; the console never computes
// with it as a number. "119" and "119.5" are accepted and padded.
export function toMoney(s) {
  const t = String(s ?? "").trim();
  const m = /^(\d{1,10})(?:\.(\d{0,2}))?$/.exec(t);
  if (!m) return null;
  return m[1].replace(/^0+(?=\d)/, "") + "." + (m[2] || "").padEnd(2, "0");
}

export function toInt(s) {
  const t = String(s ?? "").trim();
  if (!/^[+-]?\d{1,9}$/.test(t)) return null;
  return parseInt(t, 10);
}

export function yuan(m) {
  return m == null ? "—" : "¥" + m;
}

export function priceRangeText(r) {
  if (!r) return "—";
  return r.min === r.max ? yuan(r.min) : `${yuan(r.min)} – ${yuan(r.max)}`;
}
