// The goods editor: the goods' fields, its dimensions and values, and the
// SKU matrix, saved by one Save. The save never overwrites another writer:
// every catalog mutation carries the version the page loaded (or the one its
// own previous step returned), and a VERSION_CONFLICT stops it with an alert
// that names what changed. Stock only moves by delta (adjustStock) with a
// reason, so a sale in between is never undone.
import { h, field, toMoney, toInt, setBusy } from "./dom.js";
import { gql, APIError, newBizSn } from "./api.js";
import { say, clearAlert, alertWith, showError } from "./ui.js";
import * as Q from "./queries.js";
import { formSpecs, rows, retired, impact, impactText, limitError, newKey } from "./matrix.js";
import { describeChanges } from "./conflict.js";
import { SkuPanel } from "./sku.js";

const statuses = [["ON_SHELF", "On shelf"], ["OFF_SHELF", "Off shelf"], ["RECYCLED", "Recycled"]];
const modes = [["DEDUCT_AT_ORDER", "Deduct at order"], ["LOCK_AT_ORDER", "Lock at order, deduct at payment"]];

function flattenCategories(list, depth = 0, out = []) {
  for (const c of list || []) {
    out.push({ id: c.id, name: "\u00a0\u00a0".repeat(depth) + c.name });
    flattenCategories(c.children, depth + 1, out);
  }
  return out;
}

function options(pairs, selected) {
  return pairs.map(([v, t]) => h("option", { value: v, selected: v === selected }, t));
}

export class Editor {
  constructor(app, token, id) {
    this.app = app;
    this.token = token;
    this.id = id;
    this.saving = false;
  }

  // load reads the goods and resets the form to it. keep carries what a
  // partly failed save still has to do: {stock: Map(skuId -> {text, bizSn}),
  // status, stockMode}.
  async load(keep) {
    const d = await gql(this.token, Q.goodsQuery, { id: this.id });
    if (!d.goods) throw new APIError("NOT_FOUND", `goods ${this.id} does not exist`);
    this.base = d.goods;
    // Two levels fit the complexity limit (100 children a level); a goods
    // filed deeper still shows its own category, by its path.
    this.categories = flattenCategories(d.categories);
    const c = this.base.category;
    if (c && !this.categories.some((x) => x.id === c.id)) {
      this.categories.push({ id: c.id, name: c.path.map((p) => p.name).join(" › ") });
    }
    this.form = {
      name: this.base.name, description: this.base.description,
      purchaseLimit: this.base.purchaseLimit == null ? "" : String(this.base.purchaseLimit),
      categoryId: this.base.category ? this.base.category.id : "",
      status: (keep && keep.status) || this.base.status,
      stockMode: (keep && keep.stockMode) || this.base.stockMode,
      specs: formSpecs(this.base.specs),
    };
    this.edits = new Map(); // combo key -> {sellPrice, lineationPrice, costPrice, skuCode, enabled} as typed
    this.stock = new Map(); // combo key -> {text, bizSn}
    if (keep && keep.stock) {
      for (const r of this.rows()) {
        const s = r.sku && keep.stock.get(r.sku.id);
        if (s) this.stock.set(r.key, s);
      }
    }
    this.render();
  }

  rows() {
    return rows(this.form.specs, this.base.specs, this.base.skus);
  }

  // The value of a row's field as the form has it.
  value(r, f) {
    const e = this.edits.get(r.key);
    if (e && e[f] !== undefined) return e[f];
    if (!r.sku) return f === "enabled" ? true : "";
    if (f === "enabled") return r.returning || r.sku.status === "ENABLED";
    return r.sku[f] ?? "";
  }

  edit(r, f, v) {
    const e = this.edits.get(r.key) || {};
    e[f] = v;
    this.edits.set(r.key, e);
  }

  // A value's name as labels say it; the dimension is added when another
  // dimension has a value of the same name, so every label stays unique.
  vname(spec, v) {
    const n = this.form.specs.filter((s) => s.values.some((x) => x.name === v.name)).length;
    return n > 1 ? `${spec.name} ${v.name}` : v.name;
  }

  render() {
    const g = this.base;
    this.impactEl = h("p", { id: "impact", class: "impact", "aria-live": "polite" });
    this.specsBox = h("div", { class: "specs" });
    this.bulkBox = h("div", { class: "bulk" });
    this.matrixBox = h("div", { class: "matrix-wrap" });
    this.renderedKeys = null;
    this.retiredBox = h("div", { class: "retired" });
    this.panelBox = h("div", { class: "panel-box" });
    this.reason = h("input", { type: "text", autocomplete: "off", placeholder: "e.g. 到货 / restock" });
    this.saveButton = h("button", { type: "button", class: "primary", onclick: () => this.save() }, "Save");

    const name = h("input", { type: "text", value: this.form.name, autocomplete: "off", oninput: (e) => (this.form.name = e.target.value) });
    const desc = h("textarea", { rows: 3, oninput: (e) => (this.form.description = e.target.value) });
    desc.value = this.form.description;
    const cat = h("select", { onchange: (e) => (this.form.categoryId = e.target.value) },
      h("option", { value: "", selected: !this.form.categoryId }, "No category"),
      this.categories.map((c) => h("option", { value: c.id, selected: c.id === this.form.categoryId }, c.name)));
    const status = h("select", { onchange: (e) => (this.form.status = e.target.value) }, options(statuses, this.form.status));
    const mode = h("select", { onchange: (e) => (this.form.stockMode = e.target.value) }, options(modes, this.form.stockMode));
    const limit = h("input", { type: "text", inputmode: "numeric", value: this.form.purchaseLimit, autocomplete: "off",
      oninput: (e) => (this.form.purchaseLimit = e.target.value), onchange: (e) => (this.form.purchaseLimit = e.target.value) });

    // Any edit after a save makes "Saved" untrue: the status says so by
    // saying nothing until the next save.
    const unsaved = () => {
      if (!this.saving && document.getElementById("status").textContent === "Saved") say("");
    };
    this.app.replaceChildren(h("div", { class: "editor", oninput: unsaved, onchange: unsaved },
      h("p", {}, h("a", { href: "#/" }, "All goods")),
      h("h1", {}, g.name, h("span", { class: "muted" }, ` · id ${g.id} · ${g.code} · version ${g.version}`)),
      h("section", { "aria-labelledby": "h-goods", class: "card" }, h("h2", { id: "h-goods" }, "Goods"),
        h("div", { class: "grid" }, field("Goods name", name), field("Category", cat), field("Status", status), field("Stock mode", mode)),
        field("Purchase limit", limit, { hint: "Units one customer may hold in orders that stand (not closed or refunded). Empty: no limit." }),
        field("Description", desc)),
      h("section", { "aria-labelledby": "h-specs", class: "card" }, h("h2", { id: "h-specs" }, "Dimensions and values"),
        h("p", { class: "hint" }, "Removing a value disables its SKUs (they are kept for orders and the ledger); renaming keeps every SKU id."),
        this.specsBox),
      h("section", { "aria-labelledby": "h-matrix", class: "card" }, h("h2", { id: "h-matrix" }, "SKUs"),
        this.impactEl, this.bulkBox, this.matrixBox, this.retiredBox),
      h("div", { class: "save-bar" },
        field("Reason for stock changes", this.reason, { hint: "Written to the ledger with every stock change of this save." }),
        this.saveButton,
        h("button", { type: "button", onclick: () => this.discard() }, "Discard changes")),
      this.panelBox,
    ));
    this.renderSpecs();
    this.renderMatrix();
  }

  async discard() {
    clearAlert();
    say("");
    await this.load();
  }

  renderSpecs(focusLabel) {
    const box = this.specsBox;
    const dims = this.form.specs.map((s) => {
      const dimName = h("input", {
        type: "text", value: s.name, autocomplete: "off", "aria-label": `Name of dimension ${s.name}`,
        oninput: (e) => {
          s.name = e.target.value.trim();
          this.renderMatrix();
        },
      });
      const values = s.values.map((v) => h("li", {},
        h("input", {
          type: "text", value: v.name, autocomplete: "off", "aria-label": `Name of ${this.vname(s, v)}`,
          // On every keystroke, not on change: change fires on the mousedown
          // of the next click, and relabelling the matrix then can move the
          // page under the pointer and lose that click (Save's, typically).
          oninput: (e) => {
            v.name = e.target.value.trim();
            this.renderMatrix();
          },
        }),
        h("button", {
          type: "button", "aria-label": `Remove ${this.vname(s, v)}`,
          onclick: () => {
            s.values = s.values.filter((x) => x !== v);
            this.renderSpecs(`New value for ${s.name}`);
            this.renderMatrix();
          },
        }, "Remove")));
      const add = h("input", {
        type: "text", autocomplete: "off", "aria-label": `New value for ${s.name}`,
        onkeydown: (e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            addValue();
          }
        },
      });
      const addValue = () => {
        const n = add.value.trim();
        if (!n) return;
        if (s.values.some((x) => x.name === n)) {
          alertWith(h("p", {}, `${s.name} already has the value ${n}.`));
          return;
        }
        clearAlert();
        s.values.push({ key: newKey(), id: null, name: n });
        this.renderSpecs(`New value for ${s.name}`);
        this.renderMatrix();
      };
      return h("fieldset", { class: "dim" }, h("legend", {}, s.name || "New dimension"),
        dimName,
        h("ul", { class: "values" }, values),
        h("div", { class: "row" }, add,
          h("button", { type: "button", onclick: addValue }, `Add value to ${s.name}`)),
        h("button", {
          type: "button", class: "danger",
          onclick: () => {
            this.form.specs = this.form.specs.filter((x) => x !== s);
            this.renderSpecs("New dimension");
            this.renderMatrix();
          },
        }, `Remove dimension ${s.name}`));
    });
    const newDim = h("input", {
      type: "text", autocomplete: "off", "aria-label": "New dimension",
      onkeydown: (e) => {
        if (e.key === "Enter") {
          e.preventDefault();
          addDim();
        }
      },
    });
    const addDim = () => {
      const n = newDim.value.trim();
      if (!n) return;
      if (this.form.specs.some((x) => x.name === n)) {
        alertWith(h("p", {}, `The goods already has a dimension ${n}.`));
        return;
      }
      clearAlert();
      this.form.specs.push({ key: newKey(), id: null, name: n, values: [] });
      this.renderSpecs(`New value for ${n}`);
      this.renderMatrix();
    };
    box.replaceChildren(...dims, h("div", { class: "row" }, newDim, h("button", { type: "button", onclick: addDim }, "Add dimension")));
    if (focusLabel) {
      const el = Array.from(box.querySelectorAll("input")).find((i) => i.getAttribute("aria-label") === focusLabel);
      if (el) el.focus();
    }
  }

  // renderMatrix redraws the bulk prices, the SKU rows and the retired SKUs
  // from the form; typed values live in this.edits, so nothing is lost.
  renderMatrix() {
    const limit = limitError(this.form.specs);
    this.saveButton.disabled = !!limit;
    if (limit) {
      this.impactEl.textContent = limit;
      this.impactEl.classList.add("error");
      this.bulkBox.replaceChildren();
      this.matrixBox.replaceChildren();
      this.retiredBox.replaceChildren();
      this.renderedKeys = null;
      return;
    }
    this.impactEl.classList.remove("error");
    const list = this.rows();
    this.currentRows = list;
    this.updateImpact();
    this.labels = new Map(list.map((r) => [r.key, r.label]));
    // A rename keeps every row: relabel them in place. Redrawing would move
    // the page under a pointer that is pressing Save right now (the rename's
    // change event fires on that mousedown), and the click would be lost.
    const keys = list.map((r) => r.key).join(",");
    if (keys === this.renderedKeys) {
      this.relabel(list);
      return;
    }
    this.renderedKeys = keys;

    // Bulk price by value: sets the price field of every row holding it.
    this.bulkBox.replaceChildren(this.form.specs.length === 0 ? "" : h("details", { open: true },
      h("summary", {}, "Price by value"),
      ...this.form.specs.map((s) => h("div", { class: "bulk-dim" }, h("span", { class: "muted" }, s.name),
        ...s.values.map((v) => {
          const name = this.vname(s, v);
          const input = h("input", {
            type: "text", inputmode: "decimal", autocomplete: "off", "aria-label": `Price of all ${name}`, size: 7,
            dataset: { label: "Price of all {}", vkey: v.key },
          });
          const apply = () => {
            const p = toMoney(input.value);
            if (p === null) {
              alertWith(h("p", {}, `Price of all ${name}: "${input.value}" is not an amount like 119.00`));
              return;
            }
            clearAlert();
            for (const r of list) {
              if (!r.values.includes(v)) continue;
              this.edit(r, "sellPrice", p);
              const el = this.inputs.get(r.key + ":sellPrice");
              if (el) el.value = p;
            }
            say(`Price ${p} set on every ${name} SKU (not saved yet)`);
          };
          input.addEventListener("keydown", (e) => {
            if (e.key === "Enter") {
              e.preventDefault();
              apply();
            }
          });
          return h("span", { class: "bulk-value" }, input,
            h("button", { type: "button", onclick: apply, dataset: { label: "Apply price to {}", vkey: v.key } }, `Apply price to ${name}`));
        })))));

    this.inputs = new Map();
    const text = (r, f, label, size) => {
      const el = h("input", {
        type: "text", value: this.value(r, f), autocomplete: "off", "aria-label": `${label} of ${r.label}`, size,
        dataset: { label: `${label} of {}` },
        inputmode: f === "skuCode" ? null : "decimal",
        oninput: (e) => this.edit(r, f, e.target.value),
      });
      this.inputs.set(r.key + ":" + f, el);
      return el;
    };
    const body = list.map((r) => {
      const k = r.sku;
      const st = this.stock.get(r.key) || { text: "" };
      const stockInput = h("input", {
        type: "text", inputmode: "numeric", autocomplete: "off", size: 5, value: st.text,
        "aria-label": k ? `Stock change of ${r.label}` : `Stock of ${r.label}`,
        dataset: { label: k ? "Stock change of {}" : "Stock of {}" },
        placeholder: k ? "+10 / -3" : "0",
        oninput: (e) => {
          // A new number is a new intent: a new bizSn. The same number
          // retried keeps its bizSn, so it applies once.
          this.stock.set(r.key, { text: e.target.value, bizSn: null });
        },
      });
      const enabled = h("input", {
        type: "checkbox", checked: this.value(r, "enabled"), "aria-label": `Enabled ${r.label}`,
        dataset: { label: "Enabled {}" },
        onchange: (e) => {
          this.edit(r, "enabled", e.target.checked);
          this.updateImpact();
        },
      });
      return h("tr", { dataset: { skuId: k ? k.id : "", key: r.key }, class: k ? "" : "new" },
        h("th", { scope: "row" }, h("span", { class: "label" }, r.label), !k ? h("span", { class: "badge" }, "new") : r.returning ? h("span", { class: "badge" }, "back") : ""),
        h("td", { class: "muted" }, k ? k.id : "—"),
        h("td", {}, text(r, "sellPrice", "Price", 7)),
        h("td", {}, text(r, "lineationPrice", "Lineation price", 7)),
        h("td", {}, text(r, "costPrice", "Cost price", 7)),
        h("td", {}, text(r, "skuCode", "Code", 10)),
        h("td", { class: "center" }, enabled),
        h("td", { class: "num" }, k ? String(k.stock) : "0"),
        h("td", { class: "num" }, k ? String(k.availableStock) : "0"),
        h("td", {}, stockInput),
        h("td", {}, k ? h("button", {
          type: "button", "aria-label": `Details of ${r.label}`, dataset: { label: "Details of {}" },
          onclick: () => this.openPanel(k, this.labels.get(r.key)),
        }, "Details") : ""),
      );
    });
    this.matrixBox.replaceChildren(h("table", { class: "matrix" },
      h("caption", { class: "visually-hidden" }, "SKU matrix"),
      h("thead", {}, h("tr", {}, ...["SKU", "ID", "Price", "Lineation price", "Cost price", "Code", "Enabled", "Stock", "Available",
        "Stock (new) / change", ""].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, body)));

    const gone = retired(list, this.base.skus);
    this.retiredBox.replaceChildren(gone.length === 0 ? "" : h("details", {},
      h("summary", {}, `${gone.length} SKUs of removed values (kept for orders and the ledger)`),
      h("ul", {}, gone.map((k) => {
        const label = `retired SKU ${k.id} (${k.specValueStr.split(",").join(" / ") || "default"})`;
        return h("li", {}, `${label}: ${k.sellPrice}, stock ${k.stock}, ${k.status.toLowerCase()} `,
          h("button", { type: "button", onclick: () => this.openPanel(k, label) }, `Details of ${label}`));
      }))));
  }

  relabel(list) {
    for (const r of list) {
      const tr = this.matrixBox.querySelector(`tr[data-key="${CSS.escape(r.key)}"]`);
      if (!tr) continue;
      tr.querySelector("th .label").textContent = r.label;
      for (const el of tr.querySelectorAll("[data-label]")) el.setAttribute("aria-label", el.dataset.label.replace("{}", r.label));
    }
    for (const s of this.form.specs) {
      for (const v of s.values) {
        for (const el of this.bulkBox.querySelectorAll(`[data-vkey="${CSS.escape(v.key)}"]`)) {
          const name = el.dataset.label.replace("{}", this.vname(s, v));
          el.setAttribute("aria-label", name);
          if (el.tagName === "BUTTON") el.textContent = name;
        }
      }
      const dim = Array.from(this.bulkBox.querySelectorAll(".bulk-dim"))[this.form.specs.indexOf(s)];
      if (dim) dim.firstChild.textContent = s.name;
    }
  }

  updateImpact() {
    const i = impact(this.currentRows, this.base.skus, (r) => this.value(r, "enabled"));
    this.impactEl.textContent = impactText(i);
  }

  openPanel(sku, label) {
    this.panel = new SkuPanel(this.panelBox, this.token, sku, label, () => this.refreshStock());
    this.panel.open();
  }

  // After a stock change from the panel: the matrix shows the new stock;
  // the form's edits are kept (the goods version did not move).
  async refreshStock() {
    try {
      const d = await gql(this.token, Q.goodsOnlyQuery, { id: this.id });
      if (!d.goods) return;
      const byId = new Map(d.goods.skus.map((k) => [k.id, k]));
      for (const k of this.base.skus) {
        const n = byId.get(k.id);
        if (n) Object.assign(k, { stock: n.stock, lockedStock: n.lockedStock, availableStock: n.availableStock });
      }
      this.renderMatrix();
    } catch (e) {
      showError("Reading the stock failed", e);
    }
  }

  // plan turns the form into the save's steps, or throws an Error whose
  // message names the field to fix. Nothing is sent before it succeeds.
  plan() {
    const b = this.base, f = this.form;
    const p = { content: null, specs: null, status: null, stockMode: null, stock: [] };
    const limit = limitError(f.specs);
    if (limit) throw new Error(limit);

    const content = {};
    if (f.name.trim() !== b.name) content.name = f.name.trim();
    if (f.description !== b.description) content.description = f.description;
    const cat = b.category ? b.category.id : "";
    if (f.categoryId !== cat) {
      if (f.categoryId) content.categoryId = f.categoryId;
      else content.clearCategory = true;
    }
    const lim = f.purchaseLimit.trim();
    const had = b.purchaseLimit == null ? "" : String(b.purchaseLimit);
    if (lim !== had) {
      if (lim === "") content.clearPurchaseLimit = true;
      else {
        const n = toInt(lim);
        if (n === null || n < 1) throw new Error(`Purchase limit: "${lim}" is not a whole number of 1 or more (empty: no limit)`);
        content.purchaseLimit = n;
      }
    }
    if (Object.keys(content).length) p.content = content;
    if (f.status !== b.status) p.status = f.status;
    if (f.stockMode !== b.stockMode) p.stockMode = f.stockMode;

    const specsInput = f.specs.map((s) => ({
      ...(s.id ? { id: s.id } : {}), name: s.name,
      values: s.values.map((v) => ({ ...(v.id ? { id: v.id } : {}), name: v.name })),
    }));
    const same = JSON.stringify(specsInput) === JSON.stringify(b.specs.map((s) => ({
      id: s.id, name: s.name, values: s.values.map((v) => ({ id: v.id, name: v.name })),
    })));

    const entries = [];
    for (const r of this.currentRows || this.rows()) {
      const names = r.values.map((v) => v.name);
      const money = (fld, label, required) => {
        const raw = String(this.value(r, fld)).trim();
        if (raw === "" && !required) return undefined;
        const m = toMoney(raw);
        if (m === null) {
          throw new Error(raw === "" ? `${label} of ${r.label} is empty: a new SKU needs a price`
            : `${label} of ${r.label}: "${raw}" is not an amount like 119.00`);
        }
        return m;
      };
      const sell = money("sellPrice", "Price", true), lin = money("lineationPrice", "Lineation price"), cost = money("costPrice", "Cost price");
      const code = String(this.value(r, "skuCode")).trim(), on = this.value(r, "enabled");
      const k = r.sku;
      const entry = { values: names, sellPrice: sell };
      if (k) {
        let changed = false;
        if (sell !== k.sellPrice) changed = true;
        if (lin !== undefined && lin !== k.lineationPrice) (entry.lineationPrice = lin), (changed = true);
        if (cost !== undefined && cost !== k.costPrice) (entry.costPrice = cost), (changed = true);
        if (code !== (k.skuCode || "")) (entry.skuCode = code), (changed = true);
        const wasOn = r.returning || k.status === "ENABLED";
        if (on !== wasOn) (entry.enabled = on), (changed = true);
        if (changed) entries.push(entry);
      } else {
        if (lin !== undefined) entry.lineationPrice = lin;
        if (cost !== undefined) entry.costPrice = cost;
        if (code) entry.skuCode = code;
        if (!on) entry.enabled = false;
        entries.push(entry);
      }

      const st = this.stock.get(r.key);
      const raw = st ? st.text.trim() : "";
      if (raw !== "") {
        const n = toInt(raw);
        if (n === null) throw new Error(`${k ? "Stock change" : "Stock"} of ${r.label}: "${raw}" is not a whole number`);
        if (!k && n < 0) throw new Error(`Stock of ${r.label}: a new SKU starts at 0 or more, not ${n}`);
        if (n !== 0) {
          if (!st.bizSn) st.bizSn = newBizSn();
          p.stock.push({ row: r, delta: n, bizSn: st.bizSn });
        }
      }
    }
    if (!same || entries.length) p.specs = { specs: specsInput, skus: entries };
    if (p.stock.length && !this.reason.value.trim()) {
      throw new Error("Reason for stock changes is empty: the ledger keeps a reason with every stock change");
    }
    p.empty = !p.content && !p.specs && !p.status && !p.stockMode && !p.stock.length;
    return p;
  }

  async save() {
    if (this.saving) return;
    clearAlert();
    let p;
    try {
      p = this.plan();
    } catch (e) {
      alertWith(h("p", {}, "Not saved: " + e.message));
      return;
    }
    if (p.empty) {
      say("Nothing to save");
      return;
    }
    this.saving = true;
    this.saveButton.disabled = true;
    setBusy(this.app, true);
    say("Saving…");
    const done = [];
    let step = "";
    let version = this.base.version;
    const reason = this.reason.value.trim();
    const pending = new Map(); // sku id -> {text, bizSn}: stock still to apply after a failure
    try {
      if (p.content) {
        step = "the name, description, category and purchase limit";
        const d = await gql(this.token, Q.updateGoods, { input: { goodsId: this.id, expectedVersion: version, ...p.content } });
        version = d.updateGoods.version;
        done.push(step);
      }
      let saved = null;
      if (p.specs) {
        step = "the dimensions and SKU terms";
        const d = await gql(this.token, Q.updateGoodsSpecs, { input: { goodsId: this.id, expectedVersion: version, ...p.specs } });
        saved = d.updateGoodsSpecs;
        version = saved.version;
        done.push(step);
      }
      if (p.status || p.stockMode) {
        // setGoodsStatus and setGoodsStockMode take no version: check it
        // here when no earlier step did, so another admin's edit is not
        // silently followed by ours.
        if (!done.length) {
          step = "the version check";
          const d = await gql(this.token, Q.goodsOnlyQuery, { id: this.id });
          if (!d.goods || d.goods.version !== version) {
            throw new APIError("VERSION_CONFLICT", "the goods changed since this page loaded it");
          }
        }
        if (p.status) {
          step = "the status";
          await gql(this.token, Q.setGoodsStatus, { id: this.id, status: p.status });
          done.push(step);
        }
        if (p.stockMode) {
          step = "the stock mode";
          await gql(this.token, Q.setGoodsStockMode, { id: this.id, mode: p.stockMode });
          done.push(step);
        }
      }
      // Stock last, by delta through the ledger: new SKUs exist only now.
      const ids = this.skuIds(saved);
      const todo = p.stock.map((s) => ({ ...s, itemId: s.row.sku ? s.row.sku.id : ids(s.row) }));
      for (const s of todo) if (s.itemId) pending.set(s.itemId, { text: String(s.delta), bizSn: s.bizSn });
      for (const s of todo) {
        step = `the stock of ${s.row.label}`;
        if (!s.itemId) throw new APIError("INTERNAL", "the saved goods has no SKU for this row");
        await gql(this.token, Q.adjustStock, { input: { itemId: s.itemId, delta: s.delta, reason, bizSn: s.bizSn } });
        pending.delete(s.itemId);
        done.push(step);
      }
      await this.load();
      this.reason.value = "";
      say("Saved");
    } catch (e) {
      say("");
      if (e.code === "VERSION_CONFLICT") {
        await this.showConflict(e, done);
      } else {
        const already = done.length ? ` Already saved: ${done.join("; ")}.` : " Nothing was saved.";
        alertWith(h("p", {}, `Saving ${step} failed: ${e.message} (${e.code}).${already}`));
        if (done.length) {
          // Our own steps moved the version: read the goods again and keep
          // what is left to do, so the next Save does not refuse itself.
          const keep = { stock: pending };
          if (!done.includes("the status")) keep.status = p.status;
          if (!done.includes("the stock mode")) keep.stockMode = p.stockMode;
          const r = this.reason.value;
          try {
            await this.load(keep);
            this.reason.value = r;
          } catch (e2) {
            showError("Reading the goods again failed", e2);
          }
        }
      }
    } finally {
      this.saving = false;
      this.saveButton.disabled = !!limitError(this.form.specs);
      setBusy(this.app, false);
    }
  }

  // skuIds finds a new row's SKU id in the spec save's answer: its values'
  // ids by name per dimension, then the SKU by spec key.
  skuIds(saved) {
    return (row) => {
      if (!saved) return null;
      const ids = row.values.map((v, i) => {
        if (v.id) return v.id;
        const s = saved.specs[i];
        const m = s && s.values.find((x) => x.name === v.name);
        return m ? m.id : null;
      });
      if (ids.includes(null)) return null;
      const key = ids.map((x) => BigInt(x)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join("_");
      const k = saved.skus.find((x) => x.specKey === key);
      return k ? k.id : null;
    };
  }

  async showConflict(e, done) {
    let changes;
    try {
      const d = await gql(this.token, Q.goodsOnlyQuery, { id: this.id });
      changes = describeChanges(this.base, d.goods);
    } catch (e2) {
      changes = [`(reading the current goods failed: ${e2.message})`];
    }
    const already = done.length ? ` Already saved before the conflict: ${done.join("; ")}.` : " Nothing of this save was written.";
    alertWith(
      h("p", {}, `Not saved: someone else changed this goods since the page loaded it (${e.code}: ${e.message}).${already}`),
      h("p", {}, "What changed:"),
      h("ul", {}, changes.map((c) => h("li", {}, c))),
      h("p", {}, "Your edits are still on the page and were not sent. Reload to edit the current goods (this discards them)."),
      h("button", {
        type: "button",
        onclick: async () => {
          clearAlert();
          try {
            await this.load();
            say("Reloaded");
          } catch (e2) {
            showError("Reloading failed", e2);
          }
        },
      }, "Reload goods"));
  }
}

