// The pages' one way to make an element: `text` set as text (never as markup), `attrs` as
// attributes. Shared by the pages' scripts (decide.js keeps its own, richer form).
export function el(tag, text, attrs = {}) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = text;
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}
