// The goods listing: a category menu, a search box, a sort and "load more",
// all kept in the URL (/shop/?category=ID&q=TEXT&sort=PRICE_ASC) so that
// every listing is a link, and the form is a plain GET form.
import { h } from "./dom.js";
import { gql } from "./graphql.js";
import { card } from "./list.js";

const pageSize = 24;

export const sorts = [
  ["ID_ASC", "Newest listed last"],
  ["PRICE_ASC", "Price: low to high"],
  ["PRICE_DESC", "Price: high to low"],
  ["SALES_DESC", "Best selling"],
  ["NAME_ASC", "Name"],
  ["CREATED_AT_DESC", "Newest first"],
];

const menuQuery = `query Menu {
  categories { id name slug children { id name slug } }
}`;

const pathQuery = `query CategoryPath($id: ID!) {
  category(id: $id) { id name path { id name } }
}`;

const listQuery = `query Listing($first: Int!, $after: String, $filter: GoodsFilter, $sort: GoodsSort) {
  goodsList(first: $first, after: $after, filter: $filter, sort: $sort) {
    totalCount
    edges { node { id name stockMode priceRange { min max } totalStock images { url alt } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

// params reads the listing the URL asks for.
function params() {
  const u = new URL(location.href);
  const sort = sorts.some(([k]) => k === u.searchParams.get("sort")) ? u.searchParams.get("sort") : "ID_ASC";
  const i = sort.lastIndexOf("_");
  return {
    category: u.searchParams.get("category") || "",
    q: (u.searchParams.get("q") || "").trim(),
    sort,
    gqlSort: { field: sort.slice(0, i), direction: sort.slice(i + 1) },
  };
}

function link(p, changes) {
  const u = new URLSearchParams();
  const next = { category: p.category, q: p.q, sort: p.sort, ...changes };
  if (next.category) u.set("category", next.category);
  if (next.q) u.set("q", next.q);
  if (next.sort && next.sort !== "ID_ASC") u.set("sort", next.sort);
  const s = u.toString();
  return "/shop/" + (s ? "?" + s : "");
}

function menu(p, roots) {
  const item = (c, cls) => h("li", { class: cls },
    h("a", { href: link(p, { category: c.id }), "aria-current": c.id === p.category ? "page" : null, dataset: { categoryId: c.id } }, c.name));
  return h("nav", { class: "categories", "aria-label": "Categories", "data-testid": "categories" },
    h("ul", {},
      h("li", {}, h("a", { href: link(p, { category: "" }), "aria-current": p.category ? null : "page", dataset: { categoryId: "" } }, "All goods")),
      roots.flatMap((r) => [item(r, "root"), ...r.children.map((c) => item(c, "child"))]),
    ));
}

function controls(p) {
  const sort = h("select", { name: "sort", "data-testid": "sort", "aria-label": "Sort", onchange: (e) => e.target.form.requestSubmit() },
    sorts.map(([k, label]) => h("option", { value: k, selected: k === p.sort }, label)));
  return h("form", { class: "controls", method: "get", action: "/shop/", role: "search" },
    p.category && h("input", { type: "hidden", name: "category", value: p.category }),
    h("input", { type: "search", name: "q", value: p.q, placeholder: "Search name or code", "aria-label": "Search", "data-testid": "search", maxlength: 60 }),
    sort,
    h("button", { type: "submit" }, "Search"));
}

export async function renderListing(app) {
  const p = params();
  document.title = "Storefront";
  const heading = h("h1", { "data-testid": "listing-title" }, "Goods");
  const total = h("p", { class: "total", "data-testid": "total" });
  const list = h("ul", { class: "goods-list", "data-testid": "goods-list" });
  const more = h("button", { type: "button", class: "more", "data-testid": "more", hidden: true }, "Load more");
  const status = h("p", { class: "status", role: "status" });
  const side = h("aside", { class: "side" });
  const body = h("section", { class: "listing", "data-testid": "listing" }, heading, controls(p), total, list, status, more);
  app.replaceChildren(h("div", { class: "shop" }, side, body));

  gql(menuQuery, {}).then((d) => side.replaceChildren(menu(p, d.categories)), () => {});
  if (p.category) {
    gql(pathQuery, { id: p.category }).then((d) => {
      if (d.category) heading.textContent = d.category.path.map((c) => c.name).join(" › ");
    }, () => {});
  }

  const filter = {};
  if (p.category) filter.categoryId = p.category;
  if (p.q) filter.search = p.q;
  let after = null;
  async function load() {
    more.disabled = true;
    app.setAttribute("aria-busy", "true");
    try {
      const data = await gql(listQuery, { first: pageSize, after, filter, sort: p.gqlSort });
      const conn = data.goodsList;
      for (const { node } of conn.edges) list.append(card(node));
      after = conn.pageInfo.endCursor;
      more.hidden = !conn.pageInfo.hasNextPage;
      total.textContent = `${conn.totalCount} goods`;
      total.dataset.total = String(conn.totalCount);
      status.textContent = list.children.length ? "" : (p.q ? `Nothing matches “${p.q}”.` : "No goods here yet.");
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
