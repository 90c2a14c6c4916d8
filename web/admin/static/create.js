// Creating a goods: name, dimensions with their values, stock mode and the
// terms every SKU starts with. The backend builds the SKU matrix (and
// refuses more than 6 dimensions or 500 SKUs); the editor refines it.
import { h, field, toMoney, toInt } from "./dom.js";
import { gql } from "./api.js";
import { say, clearAlert, alertWith, showError } from "./ui.js";

const createMutation = `mutation ConsoleCreateGoods($input: CreateGoodsInput!) { createGoods(input: $input) { id } }`;

// "颜色: 黑色, 白色" per line. A value name may not contain "," (the API
// refuses it: it would make SKU texts ambiguous), so "," can separate them.
export function parseDimensions(text) {
  const specs = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const i = line.search(/[:：]/);
    if (i < 0) throw new Error(`"${line}" has no ":" between the dimension and its values`);
    const name = line.slice(0, i).trim();
    const values = line.slice(i + 1).split(",").map((v) => v.trim()).filter(Boolean);
    specs.push({ name, values });
  }
  return specs;
}

export function renderCreate(app, token) {
  const name = h("input", { type: "text", required: true, autocomplete: "off" });
  const code = h("input", { type: "text", autocomplete: "off" });
  const dims = h("textarea", { rows: 4, placeholder: "颜色: 黑色, 白色\n尺码: S, M, L" });
  const mode = h("select", {}, h("option", { value: "DEDUCT_AT_ORDER" }, "Deduct at order"),
    h("option", { value: "LOCK_AT_ORDER" }, "Lock at order, deduct at payment"));
  const status = h("select", {}, h("option", { value: "OFF_SHELF" }, "Off shelf"), h("option", { value: "ON_SHELF" }, "On shelf"));
  const price = h("input", { type: "text", inputmode: "decimal", required: true, autocomplete: "off" });
  const stock = h("input", { type: "text", inputmode: "numeric", value: "0", autocomplete: "off" });
  const limit = h("input", { type: "text", inputmode: "numeric", autocomplete: "off" });
  const submit = h("button", { type: "submit" }, "Create goods");

  app.replaceChildren(h("form", {
    class: "create",
    onsubmit: async (ev) => {
      ev.preventDefault();
      clearAlert();
      let specs;
      try {
        specs = parseDimensions(dims.value);
      } catch (e) {
        alertWith(h("p", {}, "Dimensions: " + e.message));
        return;
      }
      const p = toMoney(price.value), n = toInt(stock.value);
      if (p === null) return alertWith(h("p", {}, `Price of every SKU: "${price.value}" is not an amount like 99.00`));
      if (n === null || n < 0) return alertWith(h("p", {}, `Opening stock of every SKU: "${stock.value}" is not a whole number of 0 or more`));
      const input = {
        name: name.value.trim(), status: status.value, stockMode: mode.value,
        specs, defaultSku: { sellPrice: p, stock: n },
      };
      if (code.value.trim()) input.code = code.value.trim();
      if (limit.value.trim()) {
        const l = toInt(limit.value);
        if (l === null || l < 1) return alertWith(h("p", {}, `Purchase limit: "${limit.value}" is not a whole number of 1 or more (empty: no limit)`));
        input.purchaseLimit = l;
      }
      submit.disabled = true;
      say("Creating…");
      try {
        const d = await gql(token, createMutation, { input });
        say("Created");
        location.hash = `#/goods/${d.createGoods.id}`;
      } catch (e) {
        say("");
        showError("Creating the goods failed", e);
      } finally {
        submit.disabled = false;
      }
    },
  },
  h("h1", {}, "New goods"),
  field("Goods name", name), field("Goods code", code, { hint: "Optional; unique." }),
  field("Dimensions", dims, { hint: "One per line: the dimension, a colon, its values separated by commas. Empty: one SKU. At most 6 dimensions and 500 SKUs." }),
  field("Stock mode", mode), field("Status", status),
  field("Purchase limit", limit, { hint: "Optional: units one customer may hold in orders that stand." }),
  field("Price of every SKU", price), field("Opening stock of every SKU", stock, { hint: "Booked as each SKU's opening ledger row." }),
  submit,
  h("p", {}, h("a", { href: "#/" }, "Back to the goods"))));
  name.focus();
}
