// Coupons in the shop: what a product page offers to claim (Goods.coupons,
// claimCoupon), and the words for a coupon wherever one is shown. The
// discount itself is always the server's (Cart.cost.discount,
// Order.discount): the page never computes it.
import { h, yuan } from "./dom.js";
import { gql } from "./graphql.js";

export const couponFields = `id name kind amountOff percentOff maxDiscount minSubtotal validDays`;

const goodsCouponsQuery = `query GoodsCoupons($id: ID!) { goods(id: $id) { id coupons { ${couponFields} } } }`;
const claimMutation = `mutation ClaimCoupon($id: ID!) { claimCoupon(couponId: $id) { id status validUntil coupon { id name } } }`;

// "¥10.00 off orders of ¥100.00", "15% off (at most ¥20.00)".
export function couponText(c) {
  const off = c.kind === "AMOUNT_OFF" ? `${yuan(c.amountOff)} off`
    : `${c.percentOff}% off` + (c.maxDiscount ? ` (at most ${yuan(c.maxDiscount)})` : "");
  return c.minSubtotal && c.minSubtotal !== "0.00" ? `${off} orders of ${yuan(c.minSubtotal)} or more` : off;
}

// CouponBox is a product page's coupons: each with a Claim button for a
// signed-in customer. A claim refreshes the cart's list of the customer's
// coupons, so the coupon can be picked at checkout right away.
export class CouponBox {
  constructor(goodsId, session, cart) {
    this.goodsId = goodsId;
    this.session = session;
    this.cart = cart;
    this.coupons = [];
    this.list = h("ul", { class: "coupons" });
    this.result = h("p", { class: "coupon-result", role: "status", "data-testid": "coupon-result" });
    this.root = h("section", { class: "coupon-box", "aria-labelledby": "h-coupons", "data-testid": "coupons", hidden: true },
      h("h2", { id: "h-coupons" }, "Coupons"), this.list, this.result);
    session.onChange(() => this.render());
  }

  async load() {
    try {
      const d = await gql(goodsCouponsQuery, { id: this.goodsId });
      this.coupons = (d.goods && d.goods.coupons) || [];
    } catch {
      this.coupons = []; // the page sells without them
    }
    this.render();
  }

  render() {
    this.root.hidden = this.coupons.length === 0;
    const signedIn = Boolean(this.session.token);
    this.list.replaceChildren(...this.coupons.map((c) => h("li", { "data-testid": "coupon", dataset: { couponId: c.id } },
      h("span", { class: "coupon-name" }, c.name), " · ", couponText(c), ` · usable ${c.validDays} days once claimed `,
      h("button", {
        type: "button", class: "claim", disabled: !signedIn, "aria-label": signedIn ? `Claim ${c.name}` : `Sign in to claim ${c.name}`,
        onclick: (ev) => this.claim(c, ev.target),
      }, signedIn ? "Claim" : "Sign in to claim"))));
  }

  async claim(c, button) {
    button.disabled = true;
    this.root.setAttribute("aria-busy", "true");
    delete this.result.dataset.code;
    try {
      const d = await gql(claimMutation, { id: c.id }, { token: this.session.token });
      const uc = d.claimCoupon;
      this.result.dataset.userCouponId = uc.id;
      this.result.textContent = `Claimed ${uc.coupon.name}: usable until ${new Date(uc.validUntil).toLocaleString()}`;
      await this.cart.loadCoupons();
    } catch (e) {
      this.result.dataset.code = e.code;
      this.result.textContent = `${e.code}: ${e.message}`;
    } finally {
      button.disabled = false;
      this.root.setAttribute("aria-busy", "false");
    }
  }
}
