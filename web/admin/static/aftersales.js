// The After-sales page (#/after-sales): the queue of after-sales (REQUESTED
// by default, any status by the filter), newest first, each with its order,
// type, lines, amount and reason; approve, reject with a reason, receive a
// returned parcel (docs/after-sales.md). Every rule is the API's: the page
// sends one mutation per click and shows the status the API answers.
import { h, field, yuan } from "./dom.js";
import { gql } from "./api.js";
import { say, clearAlert, showError } from "./ui.js";

export const afterSaleStatuses = ["REQUESTED", "APPROVED", "REJECTED", "RETURN_SHIPPED", "REFUNDING", "REFUNDED", "CANCELLED"];

const fields = `id orderSn type status amount reason rejectReason returnCarrier returnTrackingNo createdAt
  lines { itemId quantity amount }`;

const listQuery = `query ConsoleAfterSales($first: Int, $after: String, $filter: AfterSaleFilter) {
  afterSales(first: $first, after: $after, filter: $filter) { edges { node { ${fields} } } pageInfo { hasNextPage endCursor } }
}`;
const approveMutation = `mutation ConsoleApproveAfterSale($id: ID!) { approveAfterSale(id: $id) { ${fields} } }`;
const rejectMutation = `mutation ConsoleRejectAfterSale($id: ID!, $reason: String!) { rejectAfterSale(id: $id, reason: $reason) { ${fields} } }`;
const receiveMutation = `mutation ConsoleReceiveReturn($id: ID!) { receiveReturn(id: $id) { ${fields} } }`;

// The API's alias limit is 20: one aliased order(orderSn:) per distinct
// order of a page, at most that many in one request.
const pageSize = 20;
const aliasLimit = 20;

const label = (s) => s.toLowerCase().replace(/_/g, " ");
const typeText = { REFUND_ONLY: "refund only", RETURN_AND_REFUND: "return and refund" };

// The filter survives going to an order and back; "" is every status.
let status = "REQUESTED";

// Lines carry item ids only: their names come from the orders, read once
// for the page (aliased order(orderSn:) reads, at most aliasLimit a request).
async function linesOf(token, sns, known) {
  const missing = [...new Set(sns)].filter((sn) => !known.has(sn));
  for (let i = 0; i < missing.length; i += aliasLimit) {
    const chunk = missing.slice(i, i + aliasLimit);
    const vars = Object.fromEntries(chunk.map((sn, j) => [`s${j}`, sn]));
    const q = `query ConsoleAfterSaleOrders(${chunk.map((_, j) => `$s${j}: String!`).join(", ")}) {
      ${chunk.map((_, j) => `o${j}: order(orderSn: $s${j}) { orderSn lines { itemId goodsName specValueStr } }`).join("\n")}
    }`;
    const d = await gql(token, q, vars);
    chunk.forEach((sn, j) => {
      const o = d[`o${j}`];
      known.set(sn, Object.fromEntries(((o && o.lines) || []).map((l) => [l.itemId, `${l.goodsName} ${l.specValueStr}`.trim()])));
    });
  }
}

export async function renderAfterSales(app, token) {
  const select = h("select", {},
    h("option", { value: "" }, "Every status"),
    afterSaleStatuses.map((s) => h("option", { value: s }, label(s))));
  select.value = status;
  const list = h("div", { class: "after-sales", "data-testid": "after-sales" });
  const empty = h("p", { class: "muted", hidden: true }, "No after-sales.");
  const more = h("button", { type: "button", hidden: true }, "More after-sales");
  const names = new Map();
  let cursor = null;

  async function load(reset) {
    clearAlert();
    if (reset) {
      cursor = null;
      list.replaceChildren();
    }
    let d;
    try {
      d = await gql(token, listQuery, { first: pageSize, after: cursor, filter: status ? { status } : {} });
      await linesOf(token, d.afterSales.edges.map((e) => e.node.orderSn), names);
    } catch (e) {
      showError("Loading the after-sales failed", e);
      return;
    }
    for (const { node } of d.afterSales.edges) list.append(card(node));
    cursor = d.afterSales.pageInfo.endCursor;
    more.hidden = !d.afterSales.pageInfo.hasNextPage;
    empty.hidden = list.childElementCount > 0;
  }
  more.addEventListener("click", () => load(false));

  // act sends one mutation for an after-sale and shows what the API answers
  // in its place: its new status in the card and in the status region.
  async function act(a, what, query, vars, el, button) {
    clearAlert();
    button.disabled = true;
    say(`${what} after-sale ${a.id}…`);
    try {
      const d = await gql(token, query, vars);
      const next = Object.values(d)[0];
      el.replaceWith(card(next));
      say(`After-sale ${next.id} is now ${label(next.status)}`);
    } catch (e) {
      say("");
      button.disabled = false;
      showError(`${what} after-sale ${a.id} failed`, e);
    }
  }

  function card(a) {
    const itemName = (id) => (names.get(a.orderSn) || {})[id] || `item ${id}`;
    const headingId = `h-as-${a.id}`;
    const el = h("section", { class: "card after-sale", "aria-labelledby": headingId, dataset: { afterSaleId: a.id, status: a.status } });
    const actions = [];
    if (a.status === "REQUESTED") {
      const approve = h("button", { type: "button", class: "primary", onclick: () => act(a, "Approving", approveMutation, { id: a.id }, el, approve) }, `Approve ${a.id}`);
      // aria-required, not required: the page says why in the alert region, as
      // every other refusal, rather than a browser bubble.
      const reason = h("input", { type: "text", autocomplete: "off", "aria-required": "true" });
      const reject = h("button", { type: "submit", class: "danger" }, `Reject ${a.id}`);
      actions.push(approve, h("form", {
        class: "reject",
        onsubmit: (ev) => {
          ev.preventDefault();
          const r = reason.value.trim();
          if (!r) {
            // The buyer is shown this reason: a rejection without one says nothing.
            showError(`Rejecting after-sale ${a.id} failed`, { message: "a reason is required", code: "INVALID_INPUT" });
            reason.focus();
            return;
          }
          act(a, "Rejecting", rejectMutation, { id: a.id, reason: r }, el, reject);
        },
      }, field(`Reject reason for ${a.id}`, reason), reject));
    }
    if (a.status === "RETURN_SHIPPED") {
      const receive = h("button", { type: "button", class: "primary", onclick: () => act(a, "Receiving the return of", receiveMutation, { id: a.id }, el, receive) }, `Receive return ${a.id}`);
      actions.push(receive);
    }
    if (a.status === "REFUNDING") {
      // Approving a REFUNDING one sends its refund again (a new number after a refusal).
      const again = h("button", { type: "button", onclick: () => act(a, "Sending the refund of", approveMutation, { id: a.id }, el, again) }, `Send the refund of ${a.id} again`);
      actions.push(again);
    }
    el.append(
      h("h2", { id: headingId }, `After-sale ${a.id}`),
      h("p", { "data-testid": "after-sale-summary" },
        "Order ", h("a", { href: `#/orders/${encodeURIComponent(a.orderSn)}` }, a.orderSn,
          // One order may have several after-sales: each link's name stays unique.
          h("span", { class: "visually-hidden" }, ` (after-sale ${a.id})`)),
        ` · ${typeText[a.type] || a.type} · `, h("strong", { "data-testid": "after-sale-status" }, label(a.status)),
        ` · ${yuan(a.amount)} · ${new Date(a.createdAt).toLocaleString()}`),
      h("table", {},
        h("caption", { class: "visually-hidden" }, `Lines of ${a.id}`),
        h("thead", {}, h("tr", {}, ...["Goods", "Quantity", "Amount"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, a.lines.map((l) => h("tr", { dataset: { itemId: l.itemId } },
          h("th", { scope: "row" }, itemName(l.itemId)), h("td", { class: "num" }, String(l.quantity)), h("td", { class: "num" }, yuan(l.amount)))))),
      h("p", {}, "Reason: ", a.reason),
      a.rejectReason ? h("p", {}, "Rejected: ", a.rejectReason) : null,
      a.returnCarrier || a.returnTrackingNo ? h("p", { "data-testid": "return-parcel" }, `Returned by ${a.returnCarrier}, tracking number ${a.returnTrackingNo}`) : null,
      actions.length ? h("div", { class: "actions" }, actions) : null,
    );
    return el;
  }

  const form = h("form", {
    class: "filters search", role: "search", "aria-label": "Filter after-sales",
    onsubmit: (ev) => {
      ev.preventDefault();
      status = select.value;
      load(true);
    },
  }, field("Status", select), h("button", { type: "submit" }, "Show"));

  app.replaceChildren(h("div", { class: "head" }, h("h1", {}, "After-sales")), form, list, empty, more);
  await load(true);
}
