// The goods list: every goods on shelf, a page at a time.
import { h, priceRangeText, stockText, LOCK_AT_ORDER, lockNoteText, lockBadgeText } from "./dom.js";
import { gql } from "./graphql.js";

const pageSize = 24;

const listQuery = `query GoodsList($first: Int!, $after: String) {
  goodsList(first: $first, after: $after) {
    edges { node { id name stockMode priceRange { min max } totalStock } }
    pageInfo { hasNextPage endCursor }
  }
}`;

export async function renderList(app) {
  document.title = "Storefront";
  const list = h("ul", { class: "goods-list", "data-testid": "goods-list" });
  const more = h("button", { type: "button", class: "more", hidden: true }, "More goods");
  const status = h("p", { class: "status", role: "status" });
  app.replaceChildren(h("h1", {}, "Goods"), list, status, more);

  let after = null;
  async function load() {
    more.disabled = true;
    app.setAttribute("aria-busy", "true");
    try {
      const data = await gql(listQuery, { first: pageSize, after });
      const conn = data.goodsList;
      for (const { node } of conn.edges) list.append(card(node));
      after = conn.pageInfo.endCursor;
      more.hidden = !conn.pageInfo.hasNextPage;
      status.textContent = list.children.length ? "" : "No goods on shelf yet.";
    } catch (e) {
      status.textContent = `Could not load the goods (${e.code}): ${e.message}`;
    } finally {
      more.disabled = false;
      app.setAttribute("aria-busy", "false");
    }
  }
  more.addEventListener("click", load);
  await load();
}

// totalStock is available stock (what can still be ordered), not on hand.
function card(g) {
  return h("li", { class: "card", dataset: { goodsId: g.id, stockMode: g.stockMode } },
    h("a", { href: `/shop/goods/${encodeURIComponent(g.id)}` },
      h("span", { class: "name" }, g.name),
      h("span", { class: "price" }, priceRangeText(g.priceRange)),
      h("span", { class: "stock" }, stockText(g.totalStock)),
      g.stockMode === LOCK_AT_ORDER && h("span", { class: "stock-mode", "data-testid": "stock-mode", title: lockNoteText }, lockBadgeText),
    ),
  );
}
