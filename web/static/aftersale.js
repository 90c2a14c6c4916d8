// After-sales on "My orders" (docs/after-sales.md): "Request a refund /
// return" on a paid, shipped or completed order (requestAfterSale, with an
// idempotency key per intent), the order's after-sales with their status and
// amount, the return's parcel (returnShipped) and withdrawing a request
// (cancelAfterSale). Amounts are the server's: the page never computes one.
import { h, yuan } from "./dom.js";
import { gql, newIdempotencyKey } from "./graphql.js";

export const afterSaleFields = `id type status amount reason rejectReason returnCarrier returnTrackingNo createdAt
  lines { itemId quantity amount }`;

const requestMutation = `mutation RequestAfterSale($in: RequestAfterSaleInput!) { requestAfterSale(input: $in) { id status amount } }`;
export const returnShippedMutation = `mutation ReturnShipped($id: ID!, $carrier: String!, $no: String!) { returnShipped(id: $id, carrier: $carrier, trackingNo: $no) { id status } }`;
export const cancelMutation = `mutation CancelAfterSale($id: ID!) { cancelAfterSale(id: $id) { id status } }`;

// The order statuses requestAfterSale accepts.
export const requestable = ["PAID", "PARTIALLY_SHIPPED", "SHIPPED", "COMPLETED"];
// After-sales that hold their units; a rejected or cancelled one gave them back.
const holding = ["REQUESTED", "APPROVED", "RETURN_SHIPPED", "REFUNDING", "REFUNDED"];
// cancelAfterSale accepts these: nothing was refunded yet.
const cancellable = ["REQUESTED", "APPROVED", "RETURN_SHIPPED"];

const label = (s) => s.toLowerCase().replace(/_/g, " ");
const typeText = { REFUND_ONLY: "refund only", RETURN_AND_REFUND: "return and refund" };
const lineName = (l) => `${l.goodsName} ${l.specValueStr}`.trim();

// left is how many units of each line no standing after-sale holds: the most
// a new request may ask for (the server's own check decides).
export function unitsLeft(o) {
  const held = {};
  for (const a of o.afterSales) {
    if (!holding.includes(a.status)) continue;
    for (const l of a.lines) held[l.itemId] = (held[l.itemId] || 0) + l.quantity;
  }
  return Object.fromEntries(o.lines.map((l) => [l.itemId, l.quantity - (held[l.itemId] || 0)]));
}

// requestForm is one request's form. Its idempotency key is made when the
// form opens (one intent) and kept after an answer that may mean the server
// is still working on it, so sending again cannot make a second request.
export function requestForm(o, session, done) {
  const left = unitsLeft(o);
  let key = newIdempotencyKey();
  const qty = o.lines.map((l) => h("input", {
    type: "number", min: "0", max: String(left[l.itemId]), value: "0", step: "1", name: "quantity",
    disabled: left[l.itemId] <= 0, "data-testid": "after-sale-qty", "data-item-id": l.itemId,
  }));
  const shipped = o.lines.some((l) => l.shippedQuantity > 0);
  const radio = (value, text, disabled) => h("label", { class: "check" },
    h("input", { type: "radio", name: `after-sale-type-${o.orderSn}`, value, checked: value === "REFUND_ONLY", disabled }), " ", text);
  const reason = h("textarea", { name: "reason", rows: "2", required: true, "data-testid": "after-sale-reason" });
  const error = h("p", { class: "order-result failed", role: "alert", "data-testid": "after-sale-error" });
  const send = h("button", { type: "submit", "data-testid": "after-sale-send" }, "Send request");
  const fail = (text, code) => {
    error.textContent = text;
    if (code) error.dataset.code = code;
    else delete error.dataset.code;
  };
  return h("form", {
    class: "after-sale-form", "data-testid": "after-sale-form", "aria-label": `Refund or return for order ${o.orderSn}`,
    onsubmit: async (ev) => {
      ev.preventDefault();
      fail("");
      const lines = [];
      for (const [i, l] of o.lines.entries()) {
        const raw = qty[i].value.trim();
        const n = raw === "" ? 0 : Number(raw);
        if (!Number.isInteger(n) || n < 0 || n > Math.max(left[l.itemId], 0)) {
          fail(`Quantity of ${lineName(l)}: 0 to ${Math.max(left[l.itemId], 0)}`);
          qty[i].focus();
          return;
        }
        if (n > 0) lines.push({ itemId: l.itemId, quantity: n });
      }
      if (lines.length === 0) {
        fail("Choose how many units of a line you want to send back or be refunded.");
        return;
      }
      if (!reason.value.trim()) {
        fail("Say why: the shop reads the reason before it decides.");
        reason.focus();
        return;
      }
      const type = ev.target.querySelector(`input[type=radio]:checked`).value;
      send.disabled = true;
      try {
        const d = await gql(requestMutation, { in: { orderSn: o.orderSn, type, lines, reason: reason.value.trim() } },
          { token: session.token, idempotencyKey: key });
        const a = d.requestAfterSale;
        await done(`After-sale ${a.id} ${label(a.status)}: ${yuan(a.amount)}`);
      } catch (e) {
        // A new key unless the server may still finish this one: what is
        // sent next may differ, and the old key would refuse it.
        if (!e.retryable) key = newIdempotencyKey();
        fail(`${e.code}: ${e.message}`, e.code);
        send.disabled = false;
      }
    },
  },
  h("h3", {}, "Request a refund / return"),
  h("ul", { class: "after-sale-lines" }, o.lines.map((l, i) => h("li", {},
    h("label", {}, `${lineName(l)} `, h("span", { class: "hint" }, `(${Math.max(left[l.itemId], 0)} of ${l.quantity} can be asked for)`), " ", qty[i])))),
  h("fieldset", { class: "after-sale-type" }, h("legend", {}, "What you want"),
    radio("REFUND_ONLY", "Refund only", false), " ",
    radio("RETURN_AND_REFUND", shipped ? "Return and refund (send the goods back)" : "Return and refund (once something shipped)", !shipped)),
  h("label", { class: "reason" }, "Reason ", reason),
  send, error);
}

// afterSaleList is the order's after-sales with what the buyer can still do
// with each: send a return's parcel details, withdraw a request.
export function afterSaleList(o, act) {
  const byItem = Object.fromEntries(o.lines.map((l) => [l.itemId, l]));
  return h("ul", { class: "after-sales", "data-testid": "after-sales" }, o.afterSales.map((a) => h("li", {
    "data-testid": "after-sale", dataset: { id: a.id, status: a.status, amount: a.amount, type: a.type },
  },
  h("p", {}, `After-sale ${a.id} · ${typeText[a.type] || a.type} · `,
    h("strong", { "data-testid": "after-sale-status" }, label(a.status)), ` · ${yuan(a.amount)}`),
  h("p", { class: "after-sale-items" }, a.lines.map((l) => `${byItem[l.itemId] ? lineName(byItem[l.itemId]) : l.itemId} × ${l.quantity} (${yuan(l.amount)})`).join(", ")),
  h("p", { class: "muted" }, "Reason: ", a.reason),
  a.rejectReason && h("p", { class: "reject-reason", "data-testid": "reject-reason" }, "Rejected: ", a.rejectReason),
  (a.returnCarrier || a.returnTrackingNo) && h("p", { "data-testid": "return-parcel" }, `Sent back by ${a.returnCarrier}, tracking number ${a.returnTrackingNo}`),
  a.status === "APPROVED" && a.type === "RETURN_AND_REFUND" && returnForm(a, act),
  cancellable.includes(a.status) && h("button", {
    type: "button", "data-testid": "after-sale-cancel", "aria-label": `Withdraw after-sale ${a.id}`,
    onclick: () => act(cancelMutation, { id: a.id }, `After-sale ${a.id} withdrawn`),
  }, "Withdraw"))));
}

function returnForm(a, act) {
  const carrier = h("input", { type: "text", name: "carrier", required: true, autocomplete: "off" });
  const no = h("input", { type: "text", name: "trackingNo", required: true, autocomplete: "off" });
  return h("form", {
    class: "return-form", "data-testid": "return-form", "aria-label": `Return parcel of ${a.id}`,
    onsubmit: (ev) => {
      ev.preventDefault();
      act(returnShippedMutation, { id: a.id, carrier: carrier.value.trim(), no: no.value.trim() }, `After-sale ${a.id}: return sent`);
    },
  },
  h("p", {}, "Approved: send the goods back, then tell the shop how."),
  h("label", {}, "Carrier ", carrier), " ", h("label", {}, "Tracking number ", no), " ",
  h("button", { type: "submit", "data-testid": "return-shipped" }, "I sent it back"));
}
