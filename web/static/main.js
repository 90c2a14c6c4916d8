// Routes by path: /shop/ is the goods list, /shop/goods/{id} a product page.
// Plain links between them keep every page a URL that opens directly.
import { renderListing } from "./listing.js";
import { renderProduct } from "./product.js";
import { Session } from "./session.js";
import { Cart } from "./cart.js";

const session = new Session();
session.render();
const cart = new Cart(session);
cart.mount();
cart.load();

const app = document.getElementById("app");
const m = location.pathname.match(/^\/shop\/goods\/(\d+)\/?$/);
if (m) renderProduct(app, m[1], session, cart);
else renderListing(app);
