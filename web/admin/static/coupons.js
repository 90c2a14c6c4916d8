// The Coupons page (#/coupons): create a coupon (createCoupon), list every
// coupon newest first with what was claimed and used (coupons), stop one
// (stopCoupon: claiming ends, claimed coupons stay usable). The rules are
// the API's (internal/promo): the page only checks that what is typed is a
// number or an amount, and shows the API's own message for the rest.
import { h, field, toMoney, toInt, yuan } from "./dom.js";
import { gql } from "./api.js";
import { say, clearAlert, alertWith, showError } from "./ui.js";

const couponFields = `id name kind amountOff percentOff maxDiscount minSubtotal goodsIds totalQuantity perCustomerLimit
  claimStartsAt claimEndsAt validDays code stopped claimed used createdAt`;

const listQuery = `query ConsoleCoupons($first: Int, $after: String) {
  coupons(first: $first, after: $after) { edges { node { ${couponFields} } } pageInfo { hasNextPage endCursor } }
}`;
const createMutation = `mutation ConsoleCreateCoupon($input: CreateCouponInput!) { createCoupon(input: $input) { ${couponFields} } }`;
const stopMutation = `mutation ConsoleStopCoupon($id: ID!) { stopCoupon(id: $id) { ${couponFields} } }`;

const kinds = [["AMOUNT_OFF", "Amount off"], ["PERCENT_OFF", "Percent off"]];
// 20 a page: the coupon fields with their own resolvers (code, stopped, the
// amounts) are what the complexity limit weighs most, and 25 pass it.
const pageSize = 20;
const when = (t) => (t ? new Date(t).toLocaleString() : "");

// datetime-local gives local wall time without a zone; the API wants RFC 3339.
function toTime(v) {
  const d = new Date(v);
  return isNaN(d) ? null : d.toISOString();
}

// What a coupon takes off, in words: "¥10.00 off", "15% off, at most ¥20.00".
export function offText(c) {
  if (c.kind === "AMOUNT_OFF") return `${yuan(c.amountOff)} off`;
  return `${c.percentOff}% off` + (c.maxDiscount ? `, at most ${yuan(c.maxDiscount)}` : "");
}

function windowText(c) {
  if (!c.claimStartsAt && !c.claimEndsAt) return "any time";
  return `${when(c.claimStartsAt) || "now"} – ${when(c.claimEndsAt) || "no end"}`;
}

export async function renderCoupons(app, token) {
  const tbody = h("tbody");
  const more = h("button", { type: "button", hidden: true }, "More coupons");
  let cursor = null;

  function row(c) {
    const stop = c.stopped ? null : h("button", {
      type: "button", class: "danger",
      onclick: async (ev) => {
        clearAlert();
        ev.target.disabled = true;
        try {
          const d = await gql(token, stopMutation, { id: c.id });
          tr.replaceWith(row(d.stopCoupon));
          say(`Coupon ${c.name} stopped: no more claims; claimed ones stay usable`);
        } catch (e) {
          showError(`Stopping coupon ${c.name} failed`, e);
          ev.target.disabled = false;
        }
      },
    }, `Stop coupon ${c.name} (${c.id})`);
    const tr = h("tr", { dataset: { couponId: c.id, stopped: String(c.stopped) } },
      h("th", { scope: "row" }, c.name),
      h("td", {}, offText(c)),
      h("td", { class: "num" }, yuan(c.minSubtotal)),
      h("td", {}, c.goodsIds.length ? c.goodsIds.join(", ") : "all goods"),
      h("td", { class: "num" }, c.totalQuantity == null ? `${c.claimed} / unlimited` : `${c.claimed} / ${c.totalQuantity}`),
      h("td", { class: "num" }, String(c.used)),
      h("td", { class: "num" }, String(c.perCustomerLimit)),
      h("td", {}, windowText(c)),
      h("td", { class: "num" }, String(c.validDays)),
      h("td", {}, c.code || ""),
      h("td", {}, c.stopped ? "stopped" : "claimable"),
      h("td", {}, stop));
    return tr;
  }

  async function load(reset) {
    if (reset) {
      cursor = null;
      tbody.replaceChildren();
    }
    let d;
    try {
      d = await gql(token, listQuery, { first: pageSize, after: cursor });
    } catch (e) {
      showError("Loading the coupons failed", e);
      return;
    }
    for (const { node } of d.coupons.edges) tbody.append(row(node));
    cursor = d.coupons.pageInfo.endCursor;
    more.hidden = !d.coupons.pageInfo.hasNextPage;
  }
  more.addEventListener("click", () => load(false));

  app.replaceChildren(
    h("div", { class: "head" }, h("h1", {}, "Coupons")),
    createForm(token, () => load(true)),
    h("section", { "aria-labelledby": "h-coupon-list", class: "card" }, h("h2", { id: "h-coupon-list" }, "Every coupon"),
      h("div", { class: "matrix-wrap" }, h("table", { class: "coupons" },
        h("caption", { class: "visually-hidden" }, "Coupons"),
        h("thead", {}, h("tr", {}, ...["Coupon", "Takes off", "Minimum subtotal", "Goods", "Claimed", "Used",
          "Per customer", "Claim window", "Valid days", "Code", "Status", "Action"].map((t) => h("th", { scope: "col" }, t)))),
        tbody)),
      more));
  await load(true);
}

function createForm(token, reload) {
  const name = h("input", { type: "text", autocomplete: "off" });
  const kind = h("select", {}, kinds.map(([v, t]) => h("option", { value: v }, t)));
  const amount = h("input", { type: "text", inputmode: "decimal", autocomplete: "off" });
  const percent = h("input", { type: "text", inputmode: "numeric", autocomplete: "off" });
  const cap = h("input", { type: "text", inputmode: "decimal", autocomplete: "off" });
  const min = h("input", { type: "text", inputmode: "decimal", autocomplete: "off", value: "0.00" });
  const goods = h("input", { type: "text", autocomplete: "off" });
  const total = h("input", { type: "text", inputmode: "numeric", autocomplete: "off" });
  const per = h("input", { type: "text", inputmode: "numeric", autocomplete: "off", value: "1" });
  const starts = h("input", { type: "datetime-local" });
  const ends = h("input", { type: "datetime-local" });
  const days = h("input", { type: "text", inputmode: "numeric", autocomplete: "off", value: "30" });
  const code = h("input", { type: "text", autocomplete: "off" });
  const submit = h("button", { type: "submit", class: "primary" }, "Create coupon");

  // Only the fields of the chosen kind are shown (and sent).
  const amountField = field("Amount off", amount, { hint: "Taken off the lines in scope, at most their subtotal." });
  const percentField = field("Percent off", percent, { hint: "1 to 99, rounded half up to the cent." });
  const capField = field("Maximum discount", cap, { hint: "Optional: the most it takes off." });
  const showKind = () => {
    const pct = kind.value === "PERCENT_OFF";
    amountField.hidden = pct;
    percentField.hidden = !pct;
    capField.hidden = !pct;
  };
  kind.addEventListener("change", showKind);
  showKind();

  // plan turns the form into CreateCouponInput, or throws an Error naming
  // the field to fix.
  function plan() {
    const bad = (label, raw, want) => new Error(`${label}: "${raw}" is not ${want}`);
    const int = (label, el, { optional } = {}) => {
      const raw = el.value.trim();
      if (raw === "" && optional) return undefined;
      const n = toInt(raw);
      if (n === null) throw bad(label, raw, "a whole number");
      return n;
    };
    const amountOf = (label, el, { optional } = {}) => {
      const raw = el.value.trim();
      if (raw === "" && optional) return undefined;
      const m = toMoney(raw);
      if (m === null) throw bad(label, raw, "an amount like 10.00");
      return m;
    };
    if (!name.value.trim()) throw new Error("Coupon name is empty");
    const input = { name: name.value.trim(), kind: kind.value, minSubtotal: amountOf("Minimum subtotal", min, { optional: true }) ?? "0.00" };
    if (kind.value === "AMOUNT_OFF") {
      input.amountOff = amountOf("Amount off", amount);
    } else {
      input.percentOff = int("Percent off", percent);
      const c = amountOf("Maximum discount", cap, { optional: true });
      if (c !== undefined) input.maxDiscount = c;
    }
    const ids = goods.value.split(/[\s,，]+/).filter(Boolean);
    for (const id of ids) if (!/^\d+$/.test(id)) throw bad("Goods ids", id, "a goods id");
    if (ids.length) input.goodsIds = ids;
    const t = int("Total quantity", total, { optional: true });
    if (t !== undefined) input.totalQuantity = t;
    input.perCustomerLimit = int("Per-customer limit", per);
    input.validDays = int("Valid days", days);
    if (starts.value) input.claimStartsAt = toTime(starts.value);
    if (ends.value) input.claimEndsAt = toTime(ends.value);
    if (code.value.trim()) input.code = code.value.trim();
    return input;
  }

  const form = h("form", {
    class: "card", "aria-labelledby": "h-new-coupon",
    onsubmit: async (ev) => {
      ev.preventDefault();
      clearAlert();
      let input;
      try {
        input = plan();
      } catch (e) {
        alertWith(h("p", {}, "Not created: " + e.message));
        return;
      }
      submit.disabled = true;
      say("Creating the coupon…");
      try {
        const d = await gql(token, createMutation, { input });
        name.value = "";
        code.value = "";
        await reload();
        say(`Coupon ${d.createCoupon.name} created (id ${d.createCoupon.id})`);
      } catch (e) {
        say("");
        showError("Creating the coupon failed", e);
      } finally {
        submit.disabled = false;
      }
    },
  },
  h("h2", { id: "h-new-coupon" }, "New coupon"),
  h("div", { class: "grid" },
    field("Coupon name", name), field("Kind", kind), amountField, percentField, capField,
    field("Minimum subtotal", min, { hint: "Over the lines in scope; 0.00: none." }),
    field("Goods ids", goods, { hint: "Its scope, separated by commas; empty: every goods." }),
    field("Total quantity", total, { hint: "How many can ever be claimed; empty: unlimited." }),
    field("Per-customer limit", per),
    field("Claim starts", starts, { hint: "Empty: now." }), field("Claim ends", ends, { hint: "Empty: until stopped." }),
    field("Valid days", days, { hint: "A claimed coupon is usable this many days." }),
    field("Coupon code", code, { hint: "Optional, unique: customers may claim by it." })),
  submit);
  return form;
}
