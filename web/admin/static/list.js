// The goods list: every status (admins see off-shelf and recycled goods
// too), with the enabled SKU count, price range and available stock.
import { h, field, priceRangeText } from "./dom.js";
import { gql } from "./api.js";
import { showError, clearAlert } from "./ui.js";

// skus { id } is the enabled SKUs: the count a shopper can choose from.
const listQuery = `query ConsoleGoods($first: Int, $after: String, $filter: GoodsFilter) {
  goodsList(first: $first, after: $after, filter: $filter) {
    totalCount
    edges { node { id name code status stockMode priceRange { min max } totalStock skus { id } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

const pageSize = 25;
let lastSearch = "";

export async function renderList(app, token) {
  const search = h("input", { type: "search", value: lastSearch, autocomplete: "off" });
  const tbody = h("tbody");
  const count = h("p", { class: "muted" });
  const more = h("button", { type: "button", hidden: true }, "More goods");
  let after = null;

  async function load(reset) {
    clearAlert();
    if (reset) {
      after = null;
      tbody.replaceChildren();
    }
    const filter = lastSearch ? { search: lastSearch } : null;
    let d;
    try {
      d = await gql(token, listQuery, { first: pageSize, after, filter });
    } catch (e) {
      showError("Loading the goods failed", e);
      return;
    }
    const c = d.goodsList;
    count.textContent = `${c.totalCount} goods`;
    for (const { node: g } of c.edges) {
      tbody.append(h("tr", { dataset: { goodsId: g.id } },
        h("th", { scope: "row" }, h("a", { href: `#/goods/${g.id}` }, g.name)),
        h("td", {}, g.code),
        h("td", {}, g.status),
        h("td", {}, g.stockMode === "LOCK_AT_ORDER" ? "lock at order" : "deduct at order"),
        h("td", { class: "num" }, String(g.skus.length)),
        h("td", { class: "num" }, priceRangeText(g.priceRange)),
        h("td", { class: "num" }, String(g.totalStock)),
      ));
    }
    after = c.pageInfo.endCursor;
    more.hidden = !c.pageInfo.hasNextPage;
  }
  more.addEventListener("click", () => load(false));

  const form = h("form", {
    class: "search", role: "search",
    onsubmit: (ev) => {
      ev.preventDefault();
      lastSearch = search.value.trim();
      load(true);
    },
  }, field("Search goods", search), h("button", { type: "submit" }, "Search"));

  app.replaceChildren(
    h("div", { class: "head" }, h("h1", {}, "Goods"), h("a", { class: "button", href: "#/new" }, "New goods")),
    form, count,
    h("table", { class: "goods" },
      h("caption", { class: "visually-hidden" }, "Goods"),
      h("thead", {}, h("tr", {},
        ...["Name", "Code", "Status", "Stock mode", "SKUs", "Price", "Available stock"].map((t) => h("th", { scope: "col" }, t)))),
      tbody),
    more);
  await load(true);
}
