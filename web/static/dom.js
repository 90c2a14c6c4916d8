// Tiny DOM helpers. Everything from the API goes in as text nodes, never as
// HTML, so a goods name cannot inject markup.

// h("button", {class: "x", dataset: {specValueId: "1"}, onclick: f}, "text", child)
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "dataset") Object.assign(el.dataset, v);
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

// Money is a decimal string from the API ("109.00"); it is shown, never computed with.
export function yuan(m) {
  return "¥" + m;
}

export function priceRangeText(r) {
  if (!r) return "Not available";
  return r.min === r.max ? yuan(r.min) : `${yuan(r.min)} – ${yuan(r.max)}`;
}

// Few units left is worth saying; the exact count of a deep stock is not.
export const LOW_STOCK = 10;

export function stockText(n) {
  if (n <= 0) return "Out of stock";
  if (n <= LOW_STOCK) return `Only ${n} left`;
  return `${n} in stock`;
}

// Lock-at-order goods: an order holds its units until it is paid, and an
// order that closes unpaid gives them back. Worth telling the shopper why the
// count can drop without a sale.
export const LOCK_AT_ORDER = "LOCK_AT_ORDER";
export const lockNoteText = "库存锁定至付款 · Your order holds this stock until you pay";
export const lockBadgeText = "库存锁定至付款"; // the goods list's short form
