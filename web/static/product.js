// The product page: one row of buttons per spec dimension, greyed out by the
// API's `selectable`, the SKU of a full selection by `skuBySelection`, and an
// order button that cannot order twice for one click-intent. Stock shown is
// available stock (on hand minus what unpaid lock-at-order orders hold):
// what a click can still order.
import { h, yuan, priceRangeText, stockText, LOCK_AT_ORDER, lockNoteText } from "./dom.js";
import { gql, newIdempotencyKey } from "./graphql.js";
import { contentBlock } from "./content.js";
import { subscribe, selectableFrom } from "./live.js";
import { CouponBox } from "./coupons.js";

const selectionFields = `priceRange { min max }
    totalStock
    selectable(selected: $selected) { specValueId selectable }
    sku: skuBySelection(specValueIds: $selected) { id specValueStr sellPrice lineationPrice availableStock }`;

const productQuery = `query Product($id: ID!, $selected: [ID!]!) {
  goods(id: $id) {
    id name stockMode description images { url alt }
    specs { id name values { id name } }
    ${selectionFields}
  }
}`;

const selectionQuery = `query Selection($id: ID!, $selected: [ID!]!) {
  goods(id: $id) {
    ${selectionFields}
  }
}`;

// A click this soon after an order completed is the trailing click of the
// same intent (a double click is two clicks a few hundred ms apart, and the
// server may answer in between): it replays that order instead of making a
// second one. Buying again takes a later click or another selection.
const INTENT_MS = 2000;

// Pushed on every stock change while the page is open (live.js): sizes grey
// out during a sale without a reload.
const stockSubscription = `subscription Stock($id: ID!) {
  goodsStock(goodsId: $id) { totalStock skus { id specValueIds availableStock } }
}`;

const placeOrderMutation = `mutation PlaceOrder($input: PlaceOrderInput!) {
  placeOrder(input: $input) { orderSn status amount }
}`;

export async function renderProduct(app, id, session, cart) {
  await new ProductPage(app, id, session, cart).load();
}

class ProductPage {
  constructor(app, id, session, cart) {
    this.app = app;
    this.cart = cart;
    this.id = id;
    this.session = session;
    // Picks in click order, one per dimension. They are sent to the API in
    // that order on purpose: the server's spec key must make [黑色, L] and
    // [L, 黑色] the same SKU, and the browser test relies on the page not
    // hiding that by sorting.
    this.picks = [];
    this.view = null; // the last answer: {selection, priceRange, totalStock, selectable, sku}
    this.live = null; // the last pushed stock: {totalStock, skus}
    this.seq = 0;
    this.ordering = false;
    // One key per purchase intent: made when a full selection resolves to an
    // SKU, and for the first click more than INTENT_MS after an order
    // completed; never per click. So a double click, or a retry after a
    // timeout, is the same order to the server, even when the server answers
    // before the second click of a double click lands.
    this.key = null;
    this.keySku = null;
    this.keyDoneAt = 0; // when an order placed with this.key completed
    session.onChange(() => this.renderBuy());
  }

  get selection() {
    return this.picks.map((p) => p.valueId);
  }

  get full() {
    return this.goods && this.picks.length === this.goods.specs.length;
  }

  async load() {
    this.app.replaceChildren(h("p", { class: "status", role: "status" }, "Loading…"));
    let data;
    try {
      data = await gql(productQuery, { id: this.id, selected: [] });
    } catch (e) {
      this.app.replaceChildren(
        h("p", { class: "status error", role: "alert" }, `Could not load the goods (${e.code}): ${e.message}`),
        h("button", { type: "button", onclick: () => this.load() }, "Try again"),
      );
      return;
    }
    if (!data.goods) {
      document.title = "Not found · Storefront";
      this.app.replaceChildren(
        h("p", { class: "status", "data-testid": "not-found" }, "This goods does not exist or is not on sale."),
        h("a", { href: "/shop/" }, "← All goods"),
      );
      return;
    }
    this.goods = data.goods;
    document.title = `${data.goods.name} · Storefront`;
    this.build();
    this.apply([], data.goods);
    this.watch();
  }

  // watch keeps the page's stock current from goodsStock pushes; the page
  // works without them (stock then moves on the next click, as before).
  watch() {
    this.dimOf = new Map();
    for (const spec of this.goods.specs) for (const v of spec.values) this.dimOf.set(v.id, spec.id);
    this.stopWatch = subscribe(stockSubscription, { id: this.id }, {
      onState: (s) => { this.root.dataset.live = s; },
      onNext: (data) => {
        this.live = data.goodsStock;
        this.overlay();
        this.renderValues();
        this.renderBuy();
      },
      onError: (code) => {
        if (code === "NOT_FOUND") this.showError("This goods is no longer on sale.");
      },
    });
  }

  // overlay puts the pushed stock over the last answer: a push is at most
  // one --live-interval old, an answer may come from a cache up to the stock TTL old.
  overlay() {
    const v = this.view, l = this.live;
    if (!v || !l) return;
    v.totalStock = l.totalStock;
    v.selectable = selectableFrom(l.skus, this.picks, this.dimOf);
    if (v.sku) {
      const s = l.skus.find((k) => k.id === v.sku.id);
      v.sku = { ...v.sku, availableStock: s ? s.availableStock : 0 };
    }
  }

  build() {
    const g = this.goods;
    this.buttons = [];
    const rows = g.specs.map((spec) => {
      const label = h("span", { class: "spec-name", id: `spec-${spec.id}` }, spec.name);
      const values = spec.values.map((v) => {
        const b = h("button", {
          type: "button", class: "value", "aria-pressed": "false",
          dataset: { specValueId: v.id, specId: spec.id },
          onclick: () => this.pick(spec.id, v.id),
        }, v.name);
        this.buttons.push(b);
        return b;
      });
      return h("div", { class: "spec", role: "group", "aria-labelledby": label.id }, label, h("div", { class: "values" }, values));
    });
    this.price = h("span", { class: "price", "data-testid": "price" });
    this.lineation = h("s", { class: "lineation", "data-testid": "lineation-price", hidden: true });
    this.stock = h("p", { class: "stock", "data-testid": "stock" });
    const lockNote = g.stockMode === LOCK_AT_ORDER &&
      h("p", { class: "stock-mode", "data-testid": "stock-mode" }, lockNoteText);
    this.hint = h("p", { class: "hint", "data-testid": "selection-hint" });
    this.orderButton = h("button", {
      type: "button", class: "order", "data-testid": "place-order", disabled: true,
      onclick: () => this.placeOrder(),
    }, "Place order");
    this.addButton = h("button", {
      type: "button", class: "add", "data-testid": "add-to-cart", disabled: true,
      onclick: () => this.cart.add(this.view.sku.id, 1),
    }, "Add to cart");
    this.result = h("p", { class: "order-result", "data-testid": "order-result", role: "status" });
    this.error = h("p", { class: "status error", role: "alert", hidden: true });
    this.coupons = new CouponBox(g.id, this.session, this.cart);
    const [gallery, description] = contentBlock(g);
    this.root = h("article", { class: "product", "data-testid": "product", "aria-busy": "false", dataset: { goodsId: g.id, stockMode: g.stockMode } },
      h("a", { class: "back", href: "/shop/" }, "← All goods"),
      h("h1", {}, g.name),
      gallery,
      h("p", { class: "price-line" }, this.price, " ", this.lineation),
      this.stock,
      lockNote,
      rows,
      this.hint,
      this.orderButton,
      " ",
      this.addButton,
      this.result,
      this.error,
      this.coupons.root,
      description,
    );
    this.app.replaceChildren(this.root);
    this.coupons.load();
  }

  pick(specId, valueId) {
    const i = this.picks.findIndex((p) => p.specId === specId);
    const again = i >= 0 && this.picks[i].valueId === valueId;
    if (i >= 0) this.picks.splice(i, 1);
    if (!again) this.picks.push({ specId, valueId }); // a second click on a chosen value un-chooses it
    this.keySku = null; // a changed selection is a new intent
    this.result.textContent = "";
    delete this.result.dataset.orderSn;
    delete this.result.dataset.code;
    this.orderButton.disabled = true; // until the new selection's SKU is known
    this.renderValues();
    this.refresh();
  }

  async refresh() {
    const seq = ++this.seq;
    const selection = this.selection;
    this.setBusy(true);
    try {
      const data = await gql(selectionQuery, { id: this.id, selected: selection });
      // Clicks can outrun answers: only the newest request may paint.
      if (seq !== this.seq) return;
      if (!data.goods) {
        this.showError("This goods is no longer on sale.");
        return;
      }
      this.apply(selection, data.goods);
    } catch (e) {
      if (seq === this.seq) this.showError(`Could not update the page (${e.code}): ${e.message}`);
    } finally {
      if (seq === this.seq) this.setBusy(false);
    }
  }

  apply(selection, g) {
    this.error.hidden = true;
    this.view = {
      selection: selection.join(","),
      priceRange: g.priceRange,
      totalStock: g.totalStock,
      selectable: new Map(g.selectable.map((s) => [s.specValueId, s.selectable])),
      sku: g.sku,
    };
    this.overlay();
    if (g.sku && this.keySku !== g.sku.id) {
      this.key = newIdempotencyKey();
      this.keySku = g.sku.id;
      this.keyDoneAt = 0;
    }
    this.renderValues();
    this.renderBuy();
  }

  // The answer on screen belongs to the current picks (not to an older click).
  get current() {
    return this.view && this.view.selection === this.selection.join(",");
  }

  renderValues() {
    const chosen = new Set(this.selection);
    for (const b of this.buttons) {
      const id = b.dataset.specValueId;
      const pressed = chosen.has(id);
      // A chosen value stays clickable even when it sold out, so it can be un-chosen.
      const blocked = !pressed && this.view !== null && this.view.selectable.get(id) === false;
      b.setAttribute("aria-pressed", String(pressed));
      b.disabled = blocked;
      if (blocked) b.setAttribute("aria-disabled", "true");
      else b.removeAttribute("aria-disabled");
    }
  }

  renderBuy() {
    if (!this.view) return;
    const v = this.view;
    const sku = this.full && this.current ? v.sku : null;
    if (sku) {
      this.price.textContent = yuan(sku.sellPrice);
      this.price.dataset.amount = sku.sellPrice;
      this.lineation.hidden = sku.lineationPrice === sku.sellPrice;
      this.lineation.textContent = yuan(sku.lineationPrice);
      this.stock.textContent = stockText(sku.availableStock);
      this.stock.dataset.stock = String(sku.availableStock);
      this.root.dataset.skuId = sku.id;
      this.hint.textContent = sku.specValueStr ? `Selected: ${sku.specValueStr}` : "";
    } else {
      this.price.textContent = priceRangeText(v.priceRange);
      delete this.price.dataset.amount;
      this.lineation.hidden = true;
      this.stock.textContent = stockText(v.totalStock) + (this.goods.specs.length ? " in total" : "");
      this.stock.dataset.stock = String(v.totalStock);
      delete this.root.dataset.skuId;
      const missing = this.goods.specs.filter((s) => !this.picks.some((p) => p.specId === s.id)).map((s) => s.name);
      this.hint.textContent = missing.length
        ? `Choose ${missing.join(", ")}`
        : this.current ? "This combination is not sold." : "";
    }
    this.addButton.disabled = !(sku && sku.availableStock > 0);
    const b = this.orderButton;
    if (this.ordering) {
      b.disabled = true;
      b.textContent = "Placing order…";
    } else if (!this.session.token) {
      b.disabled = true;
      b.textContent = "Paste a token to order";
    } else {
      b.disabled = !(sku && sku.availableStock > 0);
      b.textContent = sku && sku.availableStock <= 0 ? "Sold out" : "Place order";
    }
  }

  // markIntent shows on the result element whether a click now would be
  // the same intent ("open") or a new one ("closed"), so that a test (or a
  // style) can wait for the window to close instead of guessing its length.
  markIntent() {
    const result = this.result;
    result.dataset.intent = "open";
    clearTimeout(this.intentTimer);
    this.intentTimer = setTimeout(() => { result.dataset.intent = "closed"; }, INTENT_MS + 1);
  }

  async placeOrder() {
    const sku = this.full && this.current ? this.view.sku : null;
    if (this.ordering || !sku || !this.session.token) return;
    // Disabled before the first await, so the second click of a double
    // click lands on a disabled button; the shared key covers any that slip by.
    this.ordering = true;
    if (this.keyDoneAt && performance.now() - this.keyDoneAt > INTENT_MS) {
      this.key = newIdempotencyKey(); // a new intent: buy again
      this.keyDoneAt = 0;
      delete this.result.dataset.intent;
    }
    this.renderBuy();
    this.result.textContent = "";
    delete this.result.dataset.orderSn;
    delete this.result.dataset.code;
    try {
      const data = await gql(placeOrderMutation,
        { input: { items: [{ itemId: sku.id, quantity: 1 }] } },
        { token: this.session.token, idempotencyKey: this.key });
      const o = data.placeOrder;
      this.result.className = "order-result ok";
      this.result.dataset.orderSn = o.orderSn;
      this.result.textContent = `Order ${o.orderSn} placed: ${yuan(o.amount)}, ${o.status}`;
      if (!this.keyDoneAt) {
        this.keyDoneAt = performance.now();
        this.markIntent();
      }
    } catch (e) {
      this.result.className = "order-result failed";
      this.result.dataset.code = e.code;
      this.result.textContent = `${e.code}: ${e.message}`;
      // Keep the key when the server may still complete the first attempt:
      // clicking again then returns that order instead of making a second.
      if (!e.retryable) {
        this.key = newIdempotencyKey();
        this.keyDoneAt = 0;
      }
    } finally {
      this.ordering = false;
      this.renderBuy();
    }
    await this.refresh(); // stock moved
  }

  setBusy(busy) {
    this.root.setAttribute("aria-busy", String(busy));
  }

  showError(msg) {
    this.error.textContent = msg;
    this.error.hidden = false;
  }
}
