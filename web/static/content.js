// A product page's description and pictures. The description is shown as
// text (paragraphs split on blank lines), never as HTML.
import { h } from "./dom.js";

export function contentBlock(g) {
  const images = (g.images || []).map((im, i) =>
    h("img", { src: im.url, alt: im.alt || g.name, loading: i ? "lazy" : null, "data-testid": "image" }));
  const paragraphs = (g.description || "").split(/\n\s*\n/).filter((t) => t.trim()).map((t) => h("p", {}, t.trim()));
  return [
    images.length > 0 && h("div", { class: "gallery", "data-testid": "gallery" }, images),
    paragraphs.length > 0 && h("div", { class: "description", "data-testid": "description" }, paragraphs),
  ];
}
