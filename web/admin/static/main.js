// The console's entry: sign-in, then a hash router (#/, #/new, #/goods/ID,
// #/orders, #/orders/SN, #/coupons, #/after-sales).
// Only ids go into the hash; the token never does.
import { h, field } from "./dom.js";
import { gql } from "./api.js";
import { session } from "./session.js";
import { say, clearAlert, alertWith, showError } from "./ui.js";
import { renderList } from "./list.js";
import { renderCreate } from "./create.js";
import { Editor } from "./editor.js";
import { renderOrders, renderOrder } from "./orders.js";
import { renderCoupons } from "./coupons.js";
import { renderAfterSales } from "./aftersales.js";

const app = document.getElementById("app");
let editor = null;

// An admin-only read that names no real SKU: an admin gets rows or
// NOT_FOUND, a customer FORBIDDEN, a bad token UNAUTHENTICATED.
const whoAmI = `query SignInCheck { stockLedger(itemId: "1", first: 1) { edges { cursor } } }`;

async function checkToken(token) {
  try {
    await gql(token, whoAmI);
  } catch (e) {
    if (e.code !== "NOT_FOUND") throw e;
  }
}

function renderSession() {
  const root = document.getElementById("session");
  if (!session.token) {
    root.replaceChildren();
    return;
  }
  root.replaceChildren(
    h("nav", { "aria-label": "Console" }, h("a", { href: "#/" }, "Goods"), " · ", h("a", { href: "#/orders" }, "Orders"), " · ", h("a", { href: "#/coupons" }, "Coupons"),
      " · ", h("a", { href: "#/after-sales" }, "After-sales")),
    h("span", { class: "who" }, "Signed in as an admin"),
    h("button", { type: "button", class: "link", onclick: signOut }, "Sign out"),
  );
}

function signOut() {
  session.token = "";
  editor = null;
  renderSession();
  route();
}

function renderSignIn() {
  const input = h("input", { type: "password", autocomplete: "off", spellcheck: "false", required: true });
  const button = h("button", { type: "submit" }, "Sign in");
  const form = h("form", {
    class: "sign-in",
    onsubmit: async (ev) => {
      ev.preventDefault();
      clearAlert();
      const token = input.value.trim();
      if (!token) {
        alertWith(h("p", {}, "Paste an admin token first (storefront token --role admin)."));
        return;
      }
      button.disabled = true;
      say("Checking the token…");
      try {
        await checkToken(token);
      } catch (e) {
        say("");
        button.disabled = false;
        if (e.code === "FORBIDDEN") {
          alertWith(h("p", {}, `This token is not an admin's: the API answered FORBIDDEN (${e.message}). Sign in with a token of role admin.`));
        } else {
          showError("Signing in failed", e);
        }
        input.focus();
        return;
      }
      input.value = "";
      session.token = token;
      say("Signed in");
      renderSession();
      route();
    },
  }, h("h1", {}, "Sign in"),
  h("p", {}, "The console needs a token of role admin: ",
    h("code", {}, "storefront token --sub NAME --role admin"), ", or the demo admin token that ",
    h("code", {}, "serve --demo"), " prints. It is kept for this tab only."),
  field("Admin token", input), button);
  app.replaceChildren(form);
  input.focus();
}

async function route() {
  app.setAttribute("aria-busy", "true");
  if (!session.token) {
    renderSignIn();
    app.setAttribute("aria-busy", "false");
    return;
  }
  const hash = location.hash || "#/";
  const m = /^#\/goods\/(\d+)$/.exec(hash);
  const order = /^#\/orders\/([^/]+)$/.exec(hash);
  try {
    if (order) {
      editor = null;
      await renderOrder(app, session.token, decodeURIComponent(order[1]));
    } else if (hash === "#/coupons") {
      editor = null;
      await renderCoupons(app, session.token);
    } else if (hash === "#/after-sales") {
      editor = null;
      await renderAfterSales(app, session.token);
    } else if (hash === "#/orders") {
      editor = null;
      await renderOrders(app, session.token);
    } else if (m) {
      editor = new Editor(app, session.token, m[1]);
      await editor.load();
    } else if (hash === "#/new") {
      editor = null;
      renderCreate(app, session.token);
    } else {
      editor = null;
      await renderList(app, session.token);
    }
  } catch (e) {
    if (e.code === "UNAUTHENTICATED") {
      // Expired while the tab was open: sign in again.
      session.token = "";
      renderSession();
      renderSignIn();
      showError("The token is no longer valid", e);
    } else {
      showError("Loading failed", e);
    }
  } finally {
    app.setAttribute("aria-busy", "false");
  }
}

window.addEventListener("hashchange", () => {
  clearAlert();
  say("");
  route();
});
renderSession();
route();
