// What another writer changed between the editor's load and a refused save
// (VERSION_CONFLICT): the alert names it, so the admin knows what reloading
// will show instead of losing an edit silently. Stock is not listed: it
// moves at checkout speed and never refuses a terms edit.

const skuText = (k) => (k.specValueStr ? k.specValueStr.split(",").join(" / ") : "default SKU");

export function describeChanges(base, cur) {
  if (!cur) return ["the goods is gone (deleted or no longer visible)"];
  const out = [];
  const field = (what, a, b) => {
    if ((a ?? "") !== (b ?? "")) out.push(`${what}: ${a || "—"} → ${b || "—"}`);
  };
  field("name", base.name, cur.name);
  if (base.description !== cur.description) out.push("the description");
  field("status", base.status, cur.status);
  field("stock mode", base.stockMode, cur.stockMode);
  field("category", base.category && base.category.name, cur.category && cur.category.name);

  const values = (specs) => new Map(specs.flatMap((s) => s.values.map((v) => [v.id, { spec: s.name, name: v.name }])));
  const bv = values(base.specs), cv = values(cur.specs);
  for (const [id, v] of cv) {
    const was = bv.get(id);
    if (!was) out.push(`value ${v.name} added to ${v.spec}`);
    else if (was.name !== v.name) out.push(`value ${was.name} renamed to ${v.name}`);
  }
  for (const [id, v] of bv) if (!cv.has(id)) out.push(`value ${v.name} removed from ${v.spec}`);
  const bs = new Map(base.specs.map((s) => [s.id, s.name]));
  for (const s of cur.specs) {
    if (!bs.has(s.id)) out.push(`dimension ${s.name} added`);
    else if (bs.get(s.id) !== s.name) out.push(`dimension ${bs.get(s.id)} renamed to ${s.name}`);
  }
  const cs = new Set(cur.specs.map((s) => s.id));
  for (const [id, name] of bs) if (!cs.has(id)) out.push(`dimension ${name} removed`);

  const bk = new Map(base.skus.map((k) => [k.id, k]));
  for (const k of cur.skus) {
    const was = bk.get(k.id);
    const t = skuText(k);
    if (!was) {
      out.push(`SKU ${t} added`);
      continue;
    }
    if (was.sellPrice !== k.sellPrice) out.push(`${t}: price ${was.sellPrice} → ${k.sellPrice}`);
    if (was.lineationPrice !== k.lineationPrice) out.push(`${t}: lineation price ${was.lineationPrice} → ${k.lineationPrice}`);
    if (was.costPrice !== k.costPrice) out.push(`${t}: cost price ${was.costPrice} → ${k.costPrice}`);
    if ((was.skuCode || "") !== (k.skuCode || "")) out.push(`${t}: code ${was.skuCode || "—"} → ${k.skuCode || "—"}`);
    if (was.status !== k.status) out.push(`${t}: ${was.status.toLowerCase()} → ${k.status.toLowerCase()}`);
  }
  if (!out.length && base.version !== cur.version) {
    out.push(`the goods' version moved from ${base.version} to ${cur.version} (pictures, slug or another field the console does not show)`);
  }
  return out;
}
