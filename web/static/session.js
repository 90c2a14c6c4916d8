// Who the page places orders as. In demo mode the server renders the demo
// customer's token into the page; otherwise a token can be pasted and is
// kept in localStorage.
import { h } from "./dom.js";

const storageKey = "storefront.token";
// In demo mode the page starts signed in; "Sign out" (kept here) makes it an
// anonymous visitor, so that signing in again can be tried (the cart follows).
const demoOutKey = "storefront.demo-signed-out";

export class Session {
  constructor() {
    this.demo = typeof window.STOREFRONT_DEMO_TOKEN === "string" && window.STOREFRONT_DEMO_TOKEN !== "";
    this.listeners = [];
  }

  // The demo token wins over a stored one: a demo process signs with a fresh
  // secret, so yesterday's pasted token would only fail.
  get token() {
    if (this.demo) return this.demoSignedOut ? "" : window.STOREFRONT_DEMO_TOKEN;
    try {
      return localStorage.getItem(storageKey) || "";
    } catch {
      return "";
    }
  }

  set token(t) {
    try {
      if (t) localStorage.setItem(storageKey, t);
      else localStorage.removeItem(storageKey);
    } catch {
      // Storage can be disabled; the page still works for browsing.
    }
    this.render();
    this.listeners.forEach((f) => f());
  }

  get demoSignedOut() {
    try {
      return localStorage.getItem(demoOutKey) === "1";
    } catch {
      return false;
    }
  }

  setDemoSignedIn(on) {
    try {
      if (on) localStorage.removeItem(demoOutKey);
      else localStorage.setItem(demoOutKey, "1");
    } catch {
      // Without storage the demo stays signed in.
    }
    this.render();
    this.listeners.forEach((f) => f());
  }

  onChange(f) {
    this.listeners.push(f);
  }

  render() {
    const root = document.getElementById("session");
    if (this.demo && this.demoSignedOut) {
      root.dataset.mode = "demo-signed-out";
      root.replaceChildren(h("button", {
        type: "button", class: "link", "data-testid": "demo-sign-in", onclick: () => this.setDemoSignedIn(true),
      }, "Sign in as the demo customer"));
      return;
    }
    if (this.demo) {
      root.dataset.mode = "demo";
      root.replaceChildren(
        h("span", { class: "who" }, "Signed in as the demo customer"),
        h("button", { type: "button", class: "link", "data-testid": "sign-out", onclick: () => this.setDemoSignedIn(false) }, "Sign out"),
      );
      return;
    }
    if (this.token) {
      root.dataset.mode = "token";
      root.replaceChildren(
        h("span", { class: "who" }, "Signed in with a pasted token"),
        h("button", { type: "button", class: "link", onclick: () => (this.token = "") }, "Sign out"),
      );
      return;
    }
    root.dataset.mode = "anonymous";
    const input = h("input", {
      type: "password", autocomplete: "off", placeholder: "Paste a bearer token to order",
      "aria-label": "Bearer token", "data-testid": "token-input",
    });
    root.replaceChildren(
      h("form", {
        class: "token",
        onsubmit: (e) => {
          e.preventDefault();
          this.token = input.value.trim();
        },
      }, input, h("button", { type: "submit" }, "Use token")),
    );
  }
}
