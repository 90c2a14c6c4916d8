// One SKU's details: its ledger, its stock pools (list, create, close) and
// the orders its ledger names (status, amount, refund). Every action is one
// of the admin API's mutations; the panel adds no rule of its own.
import { h, field, toMoney, toInt } from "./dom.js";
import { gql } from "./api.js";
import { say, clearAlert, alertWith, showError } from "./ui.js";
import * as Q from "./queries.js";

const changeTypes = {
  1: "order deduct", 2: "payment deduct", 3: "cancel/close restore", 4: "refund restore",
  5: "admin adjustment / opening", 6: "stocktake", 7: "moved to a pool", 8: "returned from a pool",
};

const when = (t) => new Date(t).toLocaleString();

// datetime-local gives local wall time without a zone; the API wants RFC 3339.
function toTime(v) {
  const d = new Date(v);
  return isNaN(d) ? null : d.toISOString();
}

function localInput(d) {
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

export class SkuPanel {
  constructor(box, token, sku, label, onStock) {
    this.box = box;
    this.token = token;
    this.sku = sku;
    this.label = label;
    this.onStock = onStock;
  }

  async open() {
    this.ledgerBody = h("tbody");
    this.ledgerMore = h("button", { type: "button", hidden: true, onclick: () => this.loadLedger(false) }, "More ledger rows");
    this.poolsBody = h("tbody");
    this.ordersBody = h("tbody");
    const heading = h("h2", { id: "h-sku", tabindex: "-1" }, `SKU ${this.label} · id ${this.sku.id}`);
    this.box.replaceChildren(h("section", { class: "card panel", "aria-labelledby": "h-sku" },
      heading,
      h("button", { type: "button", class: "link", onclick: () => this.box.replaceChildren() }, "Close details"),
      h("h3", {}, "Ledger"),
      h("table", {}, h("thead", {}, h("tr", {}, ...["Time", "Change", "Type", "Before → after", "Business", "Remark", "Pool"].map((t) => h("th", { scope: "col" }, t)))),
        this.ledgerBody),
      this.ledgerMore,
      h("h3", {}, "Stock pools"),
      h("table", {}, h("thead", {}, h("tr", {}, ...["Name", "Price", "Quantity", "Stock", "Available", "Sold", "Per buyer", "Window", "Status", ""].map((t) => h("th", { scope: "col" }, t)))),
        this.poolsBody),
      this.poolForm(),
      h("h3", {}, "Recent orders of this SKU"),
      h("p", { class: "hint" }, "Orders named by this SKU's ledger (lock-at-order orders appear once paid)."),
      h("table", {}, h("thead", {}, h("tr", {}, ...["Order", "Status", "Amount", "Placed", ""].map((t) => h("th", { scope: "col" }, t)))),
        this.ordersBody),
      this.lookupForm(),
    ));
    heading.focus();
    await Promise.all([this.loadLedger(true), this.loadPools()]);
  }

  async loadLedger(reset) {
    if (reset) {
      this.after = null;
      this.ledgerBody.replaceChildren();
      this.orderSns = [];
    }
    let d;
    try {
      d = await gql(this.token, Q.ledgerQuery, { id: this.sku.id, after: this.after });
    } catch (e) {
      showError("Loading the ledger failed", e);
      return;
    }
    const c = d.stockLedger;
    for (const { node: l } of c.edges) {
      this.ledgerBody.append(h("tr", {},
        h("td", {}, when(l.createdAt)),
        h("td", { class: "num" }, (l.changeNum > 0 ? "+" : "") + l.changeNum),
        h("td", {}, `${l.changeType} ${changeTypes[l.changeType] || ""}`),
        h("td", { class: "num" }, `${l.beforeStock} → ${l.afterStock}`),
        h("td", {}, `${l.bizType} ${l.bizSn}`),
        h("td", {}, l.remark),
        h("td", {}, l.poolId === "0" ? "main" : l.poolId)));
      if (l.bizType === "order" && !this.orderSns.includes(l.bizSn)) this.orderSns.push(l.bizSn);
    }
    this.after = c.pageInfo.endCursor;
    this.ledgerMore.hidden = !c.pageInfo.hasNextPage;
    await this.loadOrders();
  }

  async loadOrders() {
    const rows = [];
    for (const sn of this.orderSns.slice(0, 10)) {
      try {
        const d = await gql(this.token, Q.orderQuery, { sn });
        if (d.order) rows.push(this.orderRow(d.order));
      } catch (e) {
        showError(`Loading order ${sn} failed`, e);
        return;
      }
    }
    this.ordersBody.replaceChildren(...rows);
  }

  // Any order by its number (the API has no admin-wide order list): an
  // unpaid lock-at-order order has no ledger row yet, for one.
  lookupForm() {
    const sn = h("input", { type: "text", autocomplete: "off", size: 24 });
    const find = async () => {
      clearAlert();
      const v = sn.value.trim();
      if (!v) return;
      try {
        const d = await gql(this.token, Q.orderQuery, { sn: v });
        if (!d.order) {
          alertWith(h("p", {}, `No order ${v}.`));
          return;
        }
        if (!this.orderSns.includes(v)) this.orderSns.unshift(v);
        await this.loadOrders();
      } catch (e) {
        showError(`Loading order ${v} failed`, e);
      }
    };
    sn.addEventListener("keydown", (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        find();
      }
    });
    return h("div", { class: "row" }, field("Order number", sn), h("button", { type: "button", onclick: find }, "Find order"));
  }

  orderRow(o) {
    let action = "";
    if (o.status === "PAID") {
      const reason = h("input", { type: "text", autocomplete: "off", "aria-label": `Refund reason for ${o.orderSn}`, size: 12 });
      const button = h("button", {
        type: "button",
        onclick: async () => {
          clearAlert();
          if (!reason.value.trim()) {
            alertWith(h("p", {}, `Refund reason for ${o.orderSn} is empty.`));
            return;
          }
          button.disabled = true;
          try {
            await gql(this.token, Q.refundOrder, { sn: o.orderSn, reason: reason.value.trim() });
            say(`Order ${o.orderSn} refunded`);
            await this.loadLedger(true);
            this.onStock();
          } catch (e) {
            showError(`Refunding ${o.orderSn} failed`, e);
            button.disabled = false;
          }
        },
      }, `Refund order ${o.orderSn}`);
      action = h("span", {}, reason, button);
    }
    return h("tr", {}, h("th", { scope: "row" }, o.orderSn + (o.needsReview ? " (needs review)" : "")),
      h("td", {}, o.status), h("td", { class: "num" }, `${o.amount} ${o.currency}`), h("td", {}, when(o.createdAt)), h("td", {}, action));
  }

  async loadPools() {
    let d;
    try {
      d = await gql(this.token, Q.poolsQuery, { id: this.sku.id });
    } catch (e) {
      showError("Loading the stock pools failed", e);
      return;
    }
    this.poolsBody.replaceChildren(...d.stockPools.edges.map(({ node: p }) => h("tr", {},
      h("th", { scope: "row" }, p.name),
      h("td", { class: "num" }, p.price), h("td", { class: "num" }, String(p.quantity)),
      h("td", { class: "num" }, String(p.stock)), h("td", { class: "num" }, String(p.availableStock)),
      h("td", { class: "num" }, String(p.sold)), h("td", { class: "num" }, String(p.perBuyerLimit)),
      h("td", {}, `${when(p.startsAt)} – ${when(p.endsAt)}`), h("td", {}, p.status),
      h("td", {}, p.status === "ENDED" ? "" : h("button", {
        type: "button",
        onclick: async (ev) => {
          clearAlert();
          ev.target.disabled = true;
          try {
            await gql(this.token, Q.closePool, { id: p.id });
            say(`Pool ${p.name} closed; its remainder went back to main stock`);
            await Promise.all([this.loadPools(), this.loadLedger(true)]);
            this.onStock();
          } catch (e) {
            showError(`Closing pool ${p.name} failed`, e);
            ev.target.disabled = false;
          }
        },
      }, `Close pool ${p.name} (${p.id})`)))));
  }

  poolForm() {
    const now = new Date();
    const name = h("input", { type: "text", autocomplete: "off" });
    const price = h("input", { type: "text", inputmode: "decimal", autocomplete: "off", size: 8 });
    const qty = h("input", { type: "text", inputmode: "numeric", autocomplete: "off", size: 5 });
    const limit = h("input", { type: "text", inputmode: "numeric", autocomplete: "off", size: 4, value: "1" });
    const starts = h("input", { type: "datetime-local", value: localInput(now) });
    const ends = h("input", { type: "datetime-local", value: localInput(new Date(now.getTime() + 3600e3)) });
    const submit = h("button", { type: "button" }, "Create pool");
    submit.addEventListener("click", async () => {
      clearAlert();
      const p = toMoney(price.value), q = toInt(qty.value), l = toInt(limit.value);
      const s = toTime(starts.value), e = toTime(ends.value);
      if (!name.value.trim()) return alertWith(h("p", {}, "Pool name is empty."));
      if (p === null) return alertWith(h("p", {}, `Pool price: "${price.value}" is not an amount like 79.00`));
      if (q === null) return alertWith(h("p", {}, `Pool quantity: "${qty.value}" is not a whole number`));
      if (l === null) return alertWith(h("p", {}, `Pool per-buyer limit: "${limit.value}" is not a whole number`));
      if (!s || !e) return alertWith(h("p", {}, "Pool starts and Pool ends need a date and time."));
      submit.disabled = true;
      try {
        await gql(this.token, Q.createPool, { input: { itemId: this.sku.id, name: name.value.trim(), price: p, quantity: q, perBuyerLimit: l, startsAt: s, endsAt: e } });
        say(`Pool ${name.value.trim()} created; ${q} units moved from main stock`);
        name.value = "";
        await Promise.all([this.loadPools(), this.loadLedger(true)]);
        this.onStock();
      } catch (err) {
        showError("Creating the pool failed", err);
      } finally {
        submit.disabled = false;
      }
    });
    return h("div", { class: "pool-form" },
      field("Pool name", name), field("Pool price", price), field("Pool quantity", qty),
      field("Pool per-buyer limit", limit), field("Pool starts", starts), field("Pool ends", ends), submit);
  }
}
