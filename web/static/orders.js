// "My orders" (/shop/orders): the signed-in customer's orders, newest
// first, each with its lines, the address it ships to and its shipments
// (carrier, tracking number, what each carried); a SHIPPED order has a
// "Confirm receipt" button (confirmReceipt), and an order placed without an
// address can be given one from the book (setOrderAddress). A paid,
// shipped or completed order offers "Request a refund / return" and lists
// its after-sales (aftersale.js).
import { h, yuan } from "./dom.js";
import { gql } from "./graphql.js";
import { AddressBook, addressText } from "./shipping.js";
import { afterSaleFields, afterSaleList, requestForm, requestable } from "./aftersale.js";

const orderFields = `orderSn status subtotal discount amount shippingFee refundedAmount createdAt
  shippingAddress { name phone province city district line }
  lines { itemId goodsName specValueStr quantity shippedQuantity }
  shipments { id carrier trackingNo shippedAt lines { itemId quantity } }
  afterSales { ${afterSaleFields} }`;
const ordersQuery = `query MyOrders { myOrders(first: 20) { edges { node { ${orderFields} } } } }`;
const confirmMutation = `mutation ConfirmReceipt($sn: String!) { confirmReceipt(orderSn: $sn) { ${orderFields} } }`;
const setAddressMutation = `mutation SetOrderAddress($sn: String!, $a: ID!) { setOrderAddress(orderSn: $sn, addressId: $a) { ${orderFields} } }`;

const label = (s) => s.toLowerCase().replace("_", " ");

export async function renderOrders(app, session) {
  const list = h("ol", { class: "orders", "data-testid": "orders" });
  const status = h("p", { class: "status", role: "status", "data-testid": "orders-status" });
  const book = new AddressBook(session, () => {});
  app.replaceChildren(h("h1", {}, "My orders"), status, list);
  app.setAttribute("aria-busy", "true");
  const act = async (query, vars, what) => {
    status.textContent = "";
    delete status.dataset.code;
    app.setAttribute("aria-busy", "true");
    try {
      await gql(query, vars, { token: session.token });
      status.textContent = what;
    } catch (e) {
      status.dataset.code = e.code;
      status.textContent = `${e.code}: ${e.message}`;
    }
    await load();
  };
  // A request made by its form: the form already showed any error.
  const requested = async (what) => {
    delete status.dataset.code;
    status.textContent = what;
    app.setAttribute("aria-busy", "true");
    await load();
  };
  async function load() {
    if (!session.token) {
      list.replaceChildren();
      status.textContent = "Sign in to see your orders.";
      app.setAttribute("aria-busy", "false");
      return;
    }
    try {
      const [d] = await Promise.all([gql(ordersQuery, {}, { token: session.token }), book.load()]);
      list.replaceChildren(...d.myOrders.edges.map(({ node: o }) => order(o)));
      if (d.myOrders.edges.length === 0) status.textContent = "No orders yet.";
    } catch (e) {
      status.dataset.code = e.code;
      status.textContent = `${e.code}: ${e.message}`;
    } finally {
      app.setAttribute("aria-busy", "false");
    }
  }
  function order(o) {
    const byItem = Object.fromEntries(o.lines.map((l) => [l.itemId, l]));
    const name = (l) => `${l.goodsName} ${l.specValueStr}`.trim();
    const a = o.shippingAddress;
    const canAddress = !a && (o.status === "UNPAID" || o.status === "PAID") && book.addresses.length > 0;
    return h("li", { class: "order", "data-testid": "order", dataset: { orderSn: o.orderSn, status: o.status } },
      h("h2", {}, `Order ${o.orderSn}`),
      h("p", { "data-testid": "order-summary", dataset: { subtotal: o.subtotal, discount: o.discount, amount: o.amount } },
        `${label(o.status)} · ${yuan(o.amount)} (subtotal ${yuan(o.subtotal)}` +
        (o.discount !== "0.00" ? `, discount −${yuan(o.discount)}` : "") + `, shipping ${yuan(o.shippingFee)})`),
      h("ul", { class: "order-lines" }, o.lines.map((l) => h("li", {}, `${name(l)} × ${l.quantity}`, l.shippedQuantity ? ` (${l.shippedQuantity} shipped)` : ""))),
      a ? h("p", { class: "ships-to" }, "Ships to ", `${a.name} · ${a.province} ${a.city} ${a.district} ${a.line}`)
        : h("p", { class: "ships-to" }, "No address yet."),
      canAddress && addressPicker(o),
      o.shipments.length > 0 && h("ul", { class: "shipments", "data-testid": "shipments" }, o.shipments.map((s) => h("li", { dataset: { trackingNo: s.trackingNo } },
        `${s.carrier} ${s.trackingNo}, ${new Date(s.shippedAt).toLocaleString()}: `,
        s.lines.map((x) => `${byItem[x.itemId] ? name(byItem[x.itemId]) : x.itemId} × ${x.quantity}`).join(", ")))),
      o.status === "SHIPPED" && h("button", {
        type: "button", class: "order", "data-testid": "confirm-receipt",
        onclick: () => act(confirmMutation, { sn: o.orderSn }, `Order ${o.orderSn}: receipt confirmed`),
      }, "Confirm receipt"),
      (o.afterSales.length > 0 || o.refundedAmount !== "0.00") && h("p", {
        class: "refunded", "data-testid": "order-refunded", dataset: { amount: o.refundedAmount },
      }, `Refunded ${yuan(o.refundedAmount)} of ${yuan(o.amount)}`),
      o.afterSales.length > 0 && afterSaleList(o, act),
      requestable.includes(o.status) && afterSaleRequest(o),
    );
  }
  // The form opens on demand: most orders never need it.
  function afterSaleRequest(o) {
    const slot = h("div", { class: "after-sale-request" });
    const open = h("button", {
      type: "button", "data-testid": "after-sale-open", "aria-expanded": "false",
      onclick: () => {
        const opening = open.getAttribute("aria-expanded") !== "true";
        open.setAttribute("aria-expanded", String(opening));
        slot.replaceChildren(...(opening ? [requestForm(o, session, requested)] : []));
      },
    }, "Request a refund / return");
    return h("div", {}, open, slot);
  }
  function addressPicker(o) {
    const select = h("select", { "aria-label": `Address for order ${o.orderSn}` },
      book.addresses.map((a) => h("option", { value: a.id }, addressText(a))));
    return h("p", { class: "set-address" }, select, " ",
      h("button", {
        type: "button", "data-testid": "set-address",
        onclick: () => act(setAddressMutation, { sn: o.orderSn, a: select.value }, `Order ${o.orderSn} ships there now`),
      }, "Ship it there"));
  }
  await load();
}
