// The cart: a panel under every page, kept on the server (schema.cart.graphql)
// and named by an id in localStorage. Anonymous visitors get a cart by id
// alone; signing in attaches it to the customer (cartBuyerIdentityUpdate),
// which merges any cart the customer already had. Prices, cost and
// warnings are the server's, re-read on every load: the page never adds
// up money itself.
import { h, yuan } from "./dom.js";
import { gql } from "./graphql.js";
import { AddressBook } from "./shipping.js";
import { couponFields, couponText } from "./coupons.js";

const storageKey = "storefront.cart";

const cartFields = `id status
  lines { id quantity unitPrice subtotal sku { id specValueStr } goods { id name } }
  cost { subtotal discount totalQuantity }
  warnings { code lineId message }
  userCoupon { id status validUntil coupon { ${couponFields} } }`;

const cartQuery = `query Cart($id: ID!) { cart(id: $id) { ${cartFields} } }`;
const createMutation = `mutation CartCreate($lines: [CartLineInput!]) { cartCreate(input: {lines: $lines}) { ${cartFields} } }`;
const addMutation = `mutation CartLinesAdd($id: ID!, $lines: [CartLineInput!]!) { cartLinesAdd(cartId: $id, lines: $lines) { ${cartFields} } }`;
const updateMutation = `mutation CartLinesUpdate($id: ID!, $lines: [CartLineUpdateInput!]!) { cartLinesUpdate(cartId: $id, lines: $lines) { ${cartFields} } }`;
const removeMutation = `mutation CartLinesRemove($id: ID!, $ids: [ID!]!) { cartLinesRemove(cartId: $id, lineIds: $ids) { ${cartFields} } }`;
const couponMutation = `mutation CartCoupon($id: ID!, $coupon: ID) { cartCouponUpdate(cartId: $id, userCouponId: $coupon) { ${cartFields} } }`;
// The customer's coupons that can be picked (AVAILABLE now); the cart's
// own choice is shown even when it is no longer among them.
const myCouponsQuery = `query MyCoupons { myCoupons(status: AVAILABLE, first: 50) { edges { node { id validUntil coupon { ${couponFields} } } } } }`;
const attachMutation = `mutation CartAttach($id: ID!) { cartBuyerIdentityUpdate(cartId: $id) { ${cartFields} } }`;
// No idempotency key: the server keys a cart's checkout by the cart itself,
// so a double click, or a retry, answers the same order. No coupon either:
// the order takes the cart's (cartCouponUpdate).
const checkoutMutation = `mutation CheckoutCart($id: ID!, $address: ID) { checkoutCart(cartId: $id, addressId: $address) { orderSn status subtotal discount amount shippingFee } }`;
// The shipping fee for the chosen address, asked apart from the cart: an
// address no template covers answers SHIPPING_UNAVAILABLE, and the cart
// itself must still show.
const shippingQuery = `query CartShipping($id: ID!, $address: ID) { cart(id: $id) { cost { shipping(addressId: $address) } } }`;

// A stored id the server no longer knows (expired, completed, another
// customer's after signing out) is dropped and a new cart made.
const gone = ["NOT_FOUND", "CART_COMPLETED"];

export class Cart {
  constructor(session) {
    this.session = session;
    this.cart = null;
    this.busy = 0;
    this.signedIn = Boolean(session.token);
    this.coupons = []; // the customer's AVAILABLE coupons (myCoupons)
    this.book = new AddressBook(session, () => this.quote());
    session.onChange(() => {
      this.sessionChanged();
      this.book.load();
      this.loadCoupons();
    });
  }

  get id() {
    try {
      return localStorage.getItem(storageKey) || "";
    } catch {
      return this.memoryId || "";
    }
  }

  set id(v) {
    this.memoryId = v;
    try {
      if (v) localStorage.setItem(storageKey, v);
      else localStorage.removeItem(storageKey);
    } catch {
      // Without storage the cart lasts as long as the page.
    }
  }

  // mount adds the header link and the panel; the panel is on every page.
  mount() {
    this.count = h("span", { "data-testid": "cart-count" }, "0");
    document.querySelector(".bar").append(h("a", { class: "cart-link", href: "#cart" }, "Cart (", this.count, ")"));
    this.result = h("p", { class: "order-result", "data-testid": "cart-result", role: "status" });
    this.shipping = h("p", { class: "cart-shipping", "data-testid": "cart-shipping" });
    this.body = h("div", {});
    this.root = h("aside", { class: "cart", id: "cart", "data-testid": "cart", "aria-busy": "false" },
      h("h2", {}, "Cart"), this.body, this.result);
    document.body.append(this.root);
    this.render();
    this.book.load();
    this.loadCoupons();
  }

  // loadCoupons reads the customer's coupons that can be picked.
  async loadCoupons() {
    if (!this.session.token) {
      this.coupons = [];
      this.render();
      return;
    }
    try {
      const d = await this.call(myCouponsQuery, {});
      this.coupons = d.myCoupons.edges.map((e) => e.node);
    } catch {
      this.coupons = []; // the cart works without them
    }
    this.render();
  }

  // setCoupon picks one of the customer's coupons for the cart's order ("" clears it).
  setCoupon(userCouponId) {
    return this.change(couponMutation, { coupon: userCouponId || null }, "cartCouponUpdate");
  }

  // quote shows the shipping fee of the cart's lines to the chosen address
  // (Cart.cost.shipping): free, a fee, "choose an address", or why not.
  async quote() {
    const s = this.shipping;
    delete s.dataset.code;
    delete s.dataset.amount;
    if (!this.cart || this.cart.lines.length === 0 || !this.session.token) {
      s.textContent = "";
      return;
    }
    try {
      const d = await this.call(shippingQuery, { id: this.cart.id, address: this.book.selected || null });
      const fee = d.cart && d.cart.cost.shipping;
      if (fee === null || fee === undefined) {
        s.textContent = "Shipping: choose an address";
      } else {
        s.dataset.amount = fee;
        s.textContent = fee === "0.00" ? "Shipping: free" : `Shipping ${yuan(fee)}`;
      }
    } catch (e) {
      s.dataset.code = e.code;
      s.textContent = `Shipping: ${e.message}`;
    }
  }

  // call runs one request with the cart marked busy, so that a test (or a
  // style) can wait for the panel to settle.
  async call(query, variables) {
    this.setBusy(+1);
    try {
      return await gql(query, variables, { token: this.session.token });
    } finally {
      this.setBusy(-1);
    }
  }

  setBusy(d) {
    this.busy += d;
    if (this.root) this.root.setAttribute("aria-busy", String(this.busy > 0));
  }

  async load() {
    if (!this.id) {
      this.show(null);
      return;
    }
    try {
      const d = await this.call(cartQuery, { id: this.id });
      if (!d.cart || d.cart.status !== "OPEN") this.id = "";
      this.show(d.cart && d.cart.status === "OPEN" ? d.cart : null);
    } catch (e) {
      this.fail(e);
    }
  }

  async add(itemId, quantity = 1) {
    const lines = [{ itemId, quantity }];
    this.clearResult();
    try {
      if (this.id) {
        try {
          this.show((await this.call(addMutation, { id: this.id, lines })).cartLinesAdd);
          return;
        } catch (e) {
          if (!gone.includes(e.code)) throw e;
          this.id = "";
        }
      }
      const c = (await this.call(createMutation, { lines })).cartCreate;
      this.id = c.id;
      this.show(c);
    } catch (e) {
      this.fail(e);
    }
  }

  async change(query, variables, field) {
    this.clearResult();
    try {
      this.show((await this.call(query, { id: this.id, ...variables }))[field]);
    } catch (e) {
      if (gone.includes(e.code)) await this.load();
      this.fail(e);
    }
  }

  setQuantity(lineId, quantity) {
    return this.change(updateMutation, { lines: [{ lineId, quantity }] }, "cartLinesUpdate");
  }

  remove(lineId) {
    return this.change(removeMutation, { ids: [lineId] }, "cartLinesRemove");
  }

  // Signing in takes the visitor's cart along; signing out leaves it with
  // the customer (an anonymous read of it is null, so the page starts anew).
  async sessionChanged() {
    const now = Boolean(this.session.token);
    const signedIn = now && !this.signedIn;
    this.signedIn = now;
    if (signedIn && this.id) {
      try {
        this.show((await this.call(attachMutation, { id: this.id })).cartBuyerIdentityUpdate);
        return;
      } catch (e) {
        if (!gone.includes(e.code)) {
          this.fail(e);
          return;
        }
        this.id = "";
      }
    }
    await this.load();
  }

  async checkout() {
    if (!this.cart || !this.session.token || this.ordering) return;
    this.ordering = true; // before the first await: a double click's second click finds it set
    this.render();
    this.clearResult();
    try {
      const o = (await this.call(checkoutMutation, { id: this.cart.id, address: this.book.selected || null })).checkoutCart;
      this.result.className = "order-result ok";
      this.result.dataset.orderSn = o.orderSn;
      Object.assign(this.result.dataset, { subtotal: o.subtotal, discount: o.discount, amount: o.amount });
      const off = o.discount !== "0.00" ? `, discount −${yuan(o.discount)}` : "";
      this.result.textContent = `Order ${o.orderSn} placed: ${yuan(o.amount)} (subtotal ${yuan(o.subtotal)}${off}, shipping ${yuan(o.shippingFee)}), ${o.status}`;
      this.id = "";
      this.cart = null;
    } catch (e) {
      this.fail(e);
    } finally {
      this.ordering = false;
    }
    await Promise.all([this.load(), this.loadCoupons()]); // the order holds its coupon now
  }

  clearResult() {
    this.result.textContent = "";
    this.result.className = "order-result";
    for (const k of ["orderSn", "code", "subtotal", "discount", "amount"]) delete this.result.dataset[k];
  }

  fail(e) {
    this.result.className = "order-result failed";
    this.result.dataset.code = e.code;
    this.result.textContent = `${e.code}: ${e.message}`;
  }

  show(c) {
    this.cart = c;
    this.render();
    this.quote();
  }

  render() {
    if (!this.root) return;
    const c = this.cart;
    const qty = c ? c.cost.totalQuantity : 0;
    this.count.textContent = String(qty);
    this.root.dataset.totalQuantity = String(qty);
    if (!c || c.lines.length === 0) {
      this.body.replaceChildren(h("p", { class: "status" }, "Your cart is empty."));
      return;
    }
    const warningsOf = (lineId) => c.warnings.filter((w) => w.lineId === lineId);
    const lines = c.lines.map((l) => h("li", { class: "cart-line", "data-testid": "cart-line", dataset: { lineId: l.id, skuId: l.sku.id } },
      h("span", { class: "name" }, `${l.goods.name} ${l.sku.specValueStr}`),
      h("span", { class: "unit" }, yuan(l.unitPrice)),
      h("input", {
        type: "number", min: "0", value: String(l.quantity), "aria-label": "Quantity", "data-testid": "cart-qty",
        onchange: (e) => {
          // An emptied box is not "remove": only a whole number is sent (0 removes).
          const q = e.target.value.trim() === "" ? NaN : Number(e.target.value);
          if (!Number.isInteger(q) || q < 0) e.target.value = String(l.quantity);
          else this.setQuantity(l.id, q);
        },
      }),
      h("span", { class: "subtotal", "data-testid": "cart-line-subtotal" }, yuan(l.subtotal)),
      h("button", { type: "button", class: "link", "data-testid": "cart-remove", onclick: () => this.remove(l.id) }, "Remove"),
      warningsOf(l.id).map((w) => h("p", { class: "warning", "data-testid": "cart-warning", dataset: { code: w.code } }, w.message)),
    ));
    // Warnings of lines the cart cannot show (their goods is gone).
    const orphans = c.warnings.filter((w) => !c.lines.some((l) => l.id === w.lineId))
      .map((w) => h("p", { class: "warning", "data-testid": "cart-warning", dataset: { code: w.code } }, w.message));
    const button = h("button", {
      type: "button", class: "order", "data-testid": "cart-checkout", onclick: () => this.checkout(),
      disabled: this.ordering || !this.session.token,
    }, this.ordering ? "Placing order…" : this.session.token ? "Check out" : "Sign in to check out");
    // replaceChildren takes nodes only: the warnings spread, absent parts dropped.
    this.body.replaceChildren(...[
      h("ul", { class: "cart-lines" }, lines),
      ...orphans,
      h("p", { class: "cart-total" }, "Total ", h("span", { "data-testid": "cart-subtotal", dataset: { amount: c.cost.subtotal } }, yuan(c.cost.subtotal)),
        ` for ${qty} item${qty === 1 ? "" : "s"}`),
      this.couponPicker(c),
      c.cost.discount !== "0.00" ? h("p", { class: "cart-discount" }, "Discount −",
        h("span", { "data-testid": "cart-discount", dataset: { amount: c.cost.discount } }, yuan(c.cost.discount))) : null,
      this.book.root,
      this.shipping,
      button,
    ].filter(Boolean));
  }

  // couponPicker offers the customer's AVAILABLE coupons for the order;
  // the server says what the chosen one takes off (cost.discount) or why it
  // does not apply (a COUPON_NOT_APPLICABLE warning, shown with the others).
  couponPicker(c) {
    if (!this.session.token) return null;
    const chosen = c.userCoupon;
    const options = this.coupons.map((uc) => [uc.id, `${uc.coupon.name}: ${couponText(uc.coupon)}`]);
    if (chosen && !options.some(([id]) => id === chosen.id)) {
      options.push([chosen.id, `${chosen.coupon.name}: ${couponText(chosen.coupon)} (${chosen.status.toLowerCase()})`]);
    }
    if (options.length === 0) return null;
    const select = h("select", {
      "data-testid": "cart-coupon", id: "cart-coupon",
      onchange: (e) => this.setCoupon(e.target.value),
    }, h("option", { value: "", selected: !chosen }, "No coupon"),
    options.map(([id, text]) => h("option", { value: id, selected: chosen && chosen.id === id }, text)));
    return h("p", { class: "cart-coupon" }, h("label", { for: "cart-coupon" }, "Coupon "), select);
  }
}
