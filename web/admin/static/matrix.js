// The editor's model of a spec edit, mirroring what updateGoodsSpecs does
// (docs/admin.md, "The spec diff") so the admin sees before saving how many
// SKUs the edit creates, disables or brings back. The server decides; this
// only predicts, and the server's answer is what the page shows after a save.

// skumatrix.DefaultLimits, and the API's words for them.
export const MAX_DIMENSIONS = 6;
export const MAX_SKUS = 500;
export const tooManyDimensions = "too many spec dimensions, please split the goods into several goods (规格维度过多，请拆分商品)";
export const tooManySkus = "too many SKUs, please split the goods into several goods (SKU 数量过多，请拆分商品)";

// A form spec is {key, id, name, values: [{key, id, name}]}; id is null for
// what the edit adds. Keys are stable across renames: "v<id>" or "n<seq>".
let seq = 0;
export function newKey() {
  return "n" + ++seq;
}

export function formSpecs(specs) {
  return specs.map((s) => ({
    key: "s" + s.id, id: s.id, name: s.name,
    values: s.values.map((v) => ({ key: "v" + v.id, id: v.id, name: v.name })),
  }));
}

// The product, first dimension outermost (skumatrix.Cartesian's order).
// No dimensions: one empty combination, the goods' default SKU.
export function combinations(specs) {
  let out = [[]];
  for (const s of specs) {
    const next = [];
    for (const c of out) for (const v of s.values) next.push([...c, v]);
    out = next;
  }
  return out;
}

// The number of combinations without building them (a typo must not build
// a million rows before the limit message).
export function productSize(specs) {
  return specs.reduce((n, s) => n * s.values.length, 1);
}

// skumatrix.SpecKey: value ids sorted ascending, joined with "_"; null when
// a value is new (no SKU can have it yet).
export function specKeyOf(values) {
  if (values.some((v) => !v.id)) return null;
  return values.map((v) => BigInt(v.id)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join("_");
}

// The editor's key of a combination: order-free like the spec key, but also
// for values that have no id yet.
export function comboKey(values) {
  return values.map((v) => v.key).sort().join("|");
}

export function comboLabel(values) {
  return values.length ? values.map((v) => v.name).join(" / ") : "default SKU";
}

// limitError is the API's message for a form over the limits, or "".
export function limitError(specs) {
  if (specs.length > MAX_DIMENSIONS) {
    return `${tooManyDimensions}: ${specs.length} dimensions, at most ${MAX_DIMENSIONS} allowed`;
  }
  const empty = specs.find((s) => s.values.length === 0);
  if (empty) return `${empty.name || "A new dimension"} has no values yet: add one, or remove the dimension`;
  const n = productSize(specs);
  if (n > MAX_SKUS) {
    const sizes = specs.map((s) => s.values.length);
    return `${tooManySkus}: dimension sizes [${sizes.join(" ")}] give ${n} combinations, at most ${MAX_SKUS} allowed`;
  }
  return "";
}

// rows joins the form's combinations with the stored SKUs (by spec key):
// {key, values, label, sku (or null: created by the save), returning (a
// SKU whose combination comes back: the save enables it)}.
export function rows(specs, baseSpecs, skus) {
  const byKey = new Map(skus.map((k) => [k.specKey, k]));
  const before = new Set(combinations(formSpecs(baseSpecs)).map(specKeyOf));
  return combinations(specs).map((values) => {
    const sk = specKeyOf(values);
    const sku = sk === null ? null : byKey.get(sk) || null;
    return { key: comboKey(values), values, label: comboLabel(values), sku, returning: !!sku && !before.has(sk) };
  });
}

// retired are the stored SKUs outside the form's product: disabled by the
// save if they are not already, and kept forever for orders and the ledger.
export function retired(rowList, skus) {
  const kept = new Set(rowList.filter((r) => r.sku).map((r) => r.sku.id));
  return skus.filter((k) => !kept.has(k.id));
}

// impact counts what a save does to the SKUs; enabledOf(row) is the
// enabled flag the row will have (the form's checkbox).
export function impact(rowList, skus, enabledOf) {
  let creates = 0, disables = 0, enables = 0, enabledAfter = 0;
  for (const r of rowList) {
    const on = enabledOf(r);
    if (on) enabledAfter++;
    if (!r.sku) {
      creates++;
      continue;
    }
    const was = r.sku.status === "ENABLED";
    if (on && !was) enables++;
    if (!on && was) disables++;
  }
  for (const k of retired(rowList, skus)) if (k.status === "ENABLED") disables++;
  return { creates, disables, enables, enabledAfter };
}

export function impactText(i) {
  const n = (x, one, many) => `${x} ${x === 1 ? one : many}`;
  return `Saving creates ${n(i.creates, "SKU", "SKUs")}, disables ${i.disables} and enables ${i.enables}: ` +
    `${n(i.enabledAfter, "enabled SKU", "enabled SKUs")} after the save.`;
}
