// dom.js: building elements without HTML strings. Text always goes in as
// text nodes (never innerHTML), so nothing a player typed can become markup,
// and nothing here needs an inline style or handler (the page's CSP forbids
// them): looks come from classes in style.css.

/**
 * h("button", {class: "move", dataset: {testid: "move"}, onclick: f}, "Play")
 * An element with attributes, dataset entries, event listeners (on...) and
 * children (strings become text nodes; null and false are skipped).
 */
export function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "dataset") {
      for (const [name, data] of Object.entries(value)) node.dataset[name] = String(data);
    } else if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      node.className = String(value);
    } else if (value === true) {
      node.setAttribute(key, "");
    } else {
      node.setAttribute(key, String(value));
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else if (child instanceof Node) node.appendChild(child);
    else node.appendChild(document.createTextNode(String(child)));
  }
}

/** Replaces a node's children. */
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

/** The `data-testid` attribute, the tests' (and copiers') stable hook. */
export function tid(name, more = {}) {
  return { testid: name, ...more };
}
