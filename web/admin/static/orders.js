// The Orders page (#/orders) and one order (#/orders/SN): every order,
// newest first, filtered by status, number, customer and creation time
// (the admin order list, docs/shipping.md), and an order's lines, address,
// payments and shipments with a form that ships what is left.
import { h, field, yuan, toInt } from "./dom.js";
import { gql } from "./api.js";
import { say, showError, clearAlert } from "./ui.js";

export const statuses = ["UNPAID", "PAID", "PARTIALLY_SHIPPED", "SHIPPED", "COMPLETED", "CLOSED", "REFUNDED"];

const listQuery = `query ConsoleOrders($first: Int, $after: String, $filter: OrderFilter) {
  orders(first: $first, after: $after, filter: $filter) {
    totalCount
    edges { node { orderSn userId status amount shippingFee createdAt } }
    pageInfo { hasNextPage endCursor }
  }
}`;

const orderFields = `orderSn userId status amount shippingFee currency createdAt shippedAt completedAt needsReview
  shippingAddress { name phone regionCode province city district line postalCode }
  lines { itemId goodsName specValueStr unitPrice quantity shippedQuantity }
  payments { provider paymentId status amount }
  shipments { id carrier trackingNo shippedAt lines { itemId quantity } }`;

const orderQuery = `query ConsoleOrder($sn: String!) { order(orderSn: $sn) { ${orderFields} } }`;
const shipMutation = `mutation ConsoleShip($in: ShipOrderInput!) { shipOrder(input: $in) { ${orderFields} } }`;

const pageSize = 25;
// The filter survives going to an order and back.
let filter = { status: [], orderSn: "", userId: "", after: "", before: "" };

const label = (s) => s.toLowerCase().replace("_", " ");

// A datetime-local value (the browser's local time) as RFC 3339 UTC.
function isoOf(local) {
  if (!local) return null;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? null : d.toISOString().replace(/\.\d{3}Z$/, "Z");
}

export async function renderOrders(app, token) {
  const boxes = statuses.map((s) => h("input", { type: "checkbox", value: s, checked: filter.status.includes(s) }));
  const sn = h("input", { type: "text", value: filter.orderSn, autocomplete: "off" });
  const user = h("input", { type: "text", value: filter.userId, autocomplete: "off" });
  const after = h("input", { type: "datetime-local", value: filter.after });
  const before = h("input", { type: "datetime-local", value: filter.before });
  const tbody = h("tbody");
  const count = h("p", { class: "muted", "data-testid": "order-count" });
  const more = h("button", { type: "button", hidden: true }, "More orders");
  let cursor = null;

  async function load(reset) {
    clearAlert();
    if (reset) {
      cursor = null;
      tbody.replaceChildren();
    }
    const f = {};
    if (filter.status.length) f.status = filter.status;
    if (filter.orderSn) f.orderSn = filter.orderSn;
    if (filter.userId) f.userId = filter.userId;
    if (isoOf(filter.after)) f.createdAfter = isoOf(filter.after);
    if (isoOf(filter.before)) f.createdBefore = isoOf(filter.before);
    let d;
    try {
      d = await gql(token, listQuery, { first: pageSize, after: cursor, filter: f });
    } catch (e) {
      showError("Loading the orders failed", e);
      return;
    }
    const c = d.orders;
    count.textContent = `${c.totalCount} order${c.totalCount === 1 ? "" : "s"}`;
    for (const { node: o } of c.edges) {
      tbody.append(h("tr", { dataset: { orderSn: o.orderSn, status: o.status } },
        h("th", { scope: "row" }, h("a", { href: `#/orders/${encodeURIComponent(o.orderSn)}` }, o.orderSn)),
        h("td", {}, o.userId),
        h("td", {}, label(o.status)),
        h("td", { class: "num" }, yuan(o.amount)),
        h("td", { class: "num" }, yuan(o.shippingFee)),
        h("td", {}, new Date(o.createdAt).toLocaleString()),
      ));
    }
    cursor = c.pageInfo.endCursor;
    more.hidden = !c.pageInfo.hasNextPage;
  }
  more.addEventListener("click", () => load(false));

  const form = h("form", {
    class: "filters", role: "search", "aria-label": "Filter orders",
    onsubmit: (ev) => {
      ev.preventDefault();
      filter = {
        status: boxes.filter((b) => b.checked).map((b) => b.value),
        orderSn: sn.value.trim(), userId: user.value.trim(), after: after.value, before: before.value,
      };
      load(true);
    },
  },
  h("fieldset", { class: "statuses" }, h("legend", {}, "Status"),
    boxes.map((b) => h("label", { class: "check" }, b, " ", label(b.value)))),
  h("div", { class: "grid" },
    field("Order number", sn), field("Customer id", user), field("Created after", after), field("Created before", before)),
  h("button", { type: "submit" }, "Filter"));

  app.replaceChildren(
    h("div", { class: "head" }, h("h1", {}, "Orders")),
    form, count,
    h("table", { class: "orders" },
      h("caption", { class: "visually-hidden" }, "Orders"),
      h("thead", {}, h("tr", {},
        ...["Order", "Customer", "Status", "Amount", "Shipping", "Created"].map((t) => h("th", { scope: "col" }, t)))),
      tbody),
    more);
  await load(true);
}

export async function renderOrder(app, token, orderSn) {
  const d = await gql(token, orderQuery, { sn: orderSn });
  if (!d.order) {
    app.replaceChildren(h("h1", {}, "No such order"), h("p", {}, h("a", { href: "#/orders" }, "Back to the orders")));
    return;
  }
  show(app, token, d.order);
}

function show(app, token, o) {
  const addr = o.shippingAddress;
  const left = (l) => l.quantity - l.shippedQuantity;
  const name = (l) => `${l.goodsName} ${l.specValueStr}`.trim();
  const byItem = Object.fromEntries(o.lines.map((l) => [l.itemId, l]));
  const parts = [
    h("p", {}, h("a", { href: "#/orders" }, "Back to the orders")),
    h("h1", {}, `Order ${o.orderSn}`),
    h("p", { "data-testid": "order-status", dataset: { status: o.status } },
      `${label(o.status)} · ${yuan(o.amount)} (shipping ${yuan(o.shippingFee)}) · customer ${o.userId}`,
      o.needsReview ? " · needs review" : ""),
    h("section", { class: "card", "aria-label": "Address" }, h("h2", {}, "Address"),
      addr ? h("p", {}, `${addr.name} ${addr.phone}`, h("br"), `${addr.province} ${addr.city} ${addr.district} ${addr.line} ${addr.postalCode} (${addr.regionCode})`)
        : h("p", { class: "muted" }, "No address yet: the customer gives one before it can ship.")),
    h("section", { class: "card", "aria-label": "Lines" }, h("h2", {}, "Lines"),
      h("table", {}, h("thead", {}, h("tr", {}, ...["Goods", "Unit price", "Ordered", "Shipped"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, o.lines.map((l) => h("tr", { dataset: { itemId: l.itemId } },
          h("th", { scope: "row" }, name(l)), h("td", { class: "num" }, yuan(l.unitPrice)),
          h("td", { class: "num" }, String(l.quantity)), h("td", { class: "num" }, String(l.shippedQuantity))))))),
    h("section", { class: "card", "aria-label": "Payments" }, h("h2", {}, "Payments"),
      o.payments.length === 0 ? h("p", { class: "muted" }, "None yet.")
        : h("ul", {}, o.payments.map((p) => h("li", {}, `${p.provider} ${p.paymentId}: ${label(p.status)} ${yuan(p.amount)}`)))),
    h("section", { class: "card", "aria-label": "Shipments" }, h("h2", {}, "Shipments"),
      o.shipments.length === 0 ? h("p", { class: "muted" }, "None yet.")
        : h("ul", { "data-testid": "shipments" }, o.shipments.map((s) => h("li", { dataset: { trackingNo: s.trackingNo } },
          `${s.carrier} ${s.trackingNo}, ${new Date(s.shippedAt).toLocaleString()}: `,
          s.lines.map((x) => `${byItem[x.itemId] ? name(byItem[x.itemId]) : x.itemId} × ${x.quantity}`).join(", "))))),
  ];
  if (o.status === "PAID" || o.status === "PARTIALLY_SHIPPED") parts.push(shipForm(app, token, o, left, name));
  app.replaceChildren(...parts);
}

function shipForm(app, token, o, left, name) {
  const carrier = h("input", { type: "text", autocomplete: "off", required: true });
  const tracking = h("input", { type: "text", autocomplete: "off", required: true });
  const open = o.lines.filter((l) => left(l) > 0);
  const qty = open.map((l) => h("input", { type: "number", min: "0", max: String(left(l)), value: String(left(l)) }));
  const button = h("button", { type: "submit", class: "primary" }, "Ship");
  return h("form", {
    class: "card", "aria-label": "Ship",
    onsubmit: async (ev) => {
      ev.preventDefault();
      clearAlert();
      const lines = [];
      for (const [i, l] of open.entries()) {
        const n = toInt(qty[i].value);
        if (n === null || n < 0 || n > left(l)) {
          showError("Shipping failed", { message: `Quantity of ${name(l)}: 0 to ${left(l)}`, code: "INVALID_INPUT" });
          return;
        }
        if (n > 0) lines.push({ itemId: l.itemId, quantity: n });
      }
      button.disabled = true;
      say("Shipping…");
      try {
        const d = await gql(token, shipMutation, { in: { orderSn: o.orderSn, carrier: carrier.value.trim(), trackingNo: tracking.value.trim(), lines } });
        say(`Shipped: the order is ${label(d.shipOrder.status)}`);
        show(app, token, d.shipOrder);
      } catch (e) {
        say("");
        button.disabled = false;
        showError("Shipping failed", e);
      }
    },
  }, h("h2", {}, "Ship"),
  h("div", { class: "grid" }, field("Carrier", carrier), field("Tracking number", tracking),
    open.map((l, i) => field(`Quantity of ${name(l)}`, qty[i], { hint: `${left(l)} left` }))),
  button);
}
