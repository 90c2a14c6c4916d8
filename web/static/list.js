// A goods card of the listing (listing.js).
import { h, priceRangeText, stockText, LOCK_AT_ORDER, lockNoteText, lockBadgeText } from "./dom.js";

// totalStock is available stock (what can still be ordered), not on hand.
export function card(g) {
  return h("li", { class: "card", dataset: { goodsId: g.id, stockMode: g.stockMode } },
    h("a", { href: `/shop/goods/${encodeURIComponent(g.id)}` },
      g.images && g.images.length > 0 && h("img", { src: g.images[0].url, alt: g.images[0].alt || g.name, loading: "lazy" }),
      h("span", { class: "name" }, g.name),
      h("span", { class: "price" }, priceRangeText(g.priceRange)),
      h("span", { class: "stock" }, stockText(g.totalStock)),
      g.stockMode === LOCK_AT_ORDER && h("span", { class: "stock-mode", "data-testid": "stock-mode", title: lockNoteText }, lockBadgeText),
    ),
  );
}
