// Routes by path: /shop/ is the goods list, /shop/goods/{id} a product page,
// /shop/orders the customer's orders.
// Plain links between them keep every page a URL that opens directly.
import { renderListing } from "./listing.js";
import { renderProduct } from "./product.js";
import { Session } from "./session.js";
import { Cart } from "./cart.js";
import { renderOrders } from "./orders.js";
import { h } from "./dom.js";

const session = new Session();
session.render();
const cart = new Cart(session);
cart.mount();
cart.load();

document.querySelector(".bar").append(h("a", { class: "orders-link", href: "/shop/orders", "data-testid": "orders-link" }, "My orders"));

const app = document.getElementById("app");
const m = location.pathname.match(/^\/shop\/goods\/(\d+)\/?$/);
if (m) renderProduct(app, m[1], session, cart);
else if (/^\/shop\/orders\/?$/.test(location.pathname)) {
  renderOrders(app, session);
  session.onChange(() => renderOrders(app, session));
} else renderListing(app);
