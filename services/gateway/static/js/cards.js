// @ts-check
// Card elements. A card's colour and the position of its number follow its value,
// as on the printed Rack-O cards: a rack in order shows a clean diagonal.

/**
 * An element: `attrs` are its attributes (`class`, `text`, `style`, `on…` listeners;
 * null, undefined and false are left out), `children` its nodes and texts (nested arrays flattened).
 * @param {string} tag
 * @param {Record<string, any>} [attrs]
 * @param {...any} children
 * @returns {HTMLElement}
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "style") node.setAttribute("style", value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** 0..1 for a card in a deck of `size` cards. @param {number} card @param {number} size */
export function fraction(card, size) {
  return size > 1 ? (card - 1) / (size - 1) : 0.5;
}

/** Marks of slot index i: 5, 10, … 50. @param {number} i */
export const mark = (i) => (i + 1) * 5;

/** An upright card (piles, the held card): `card` null means face down. @param {number | null | undefined} card @param {number} size */
export function upright(card, size, extra = "") {
  if (card === null || card === undefined) return el("div", { class: `card back upright ${extra}` });
  return el(
    "div",
    // The corner number is drawn by CSS (`data-corner`): the card's text is its number once.
    {
      class: `card upright ${extra}`,
      style: `--t:${fraction(card, size).toFixed(3)}`,
      "data-corner": card,
    },
    el("span", { class: "num" }, card),
  );
}

/** A small face-up number chip (history, reveals). @param {number} card @param {number} size */
export function chip(card, size, extra = "") {
  return el("span", { class: `chip ${extra}`, style: `--t:${fraction(card, size).toFixed(3)}` }, card);
}

/** Set a horizontal rack card's face: number and colour, or face down (null, undefined or 0). @param {HTMLElement} node @param {number | null | undefined} card @param {number} size */
export function setRackCard(node, card, size) {
  if (card === null || card === undefined || card === 0) {
    node.classList.add("back");
    node.style.removeProperty("--t");
    node.replaceChildren();
    return;
  }
  node.classList.remove("back");
  node.style.setProperty("--t", fraction(card, size).toFixed(3));
  node.replaceChildren(el("span", { class: "num" }, card));
}
