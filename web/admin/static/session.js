// The admin token lives in sessionStorage: this tab only, gone when the tab
// closes, never in local storage (shared by every tab and kept forever), a
// cookie (sent on every request) or the URL (history, logs, referrers).
const key = "storefront.admin.token";

export const session = {
  get token() {
    try {
      return sessionStorage.getItem(key) || "";
    } catch {
      return memory;
    }
  },
  set token(t) {
    memory = t;
    try {
      if (t) sessionStorage.setItem(key, t);
      else sessionStorage.removeItem(key);
    } catch {
      // Storage disabled: the token lives in this page only.
    }
  },
};
let memory = "";
