// markdown.js: a small, safe Markdown renderer for the player's guide
// (/app/guide.md): headings, paragraphs, lists, tables, fenced code, inline
// code, bold, italic and links. It builds DOM nodes, every piece of text a
// text node, so the guide cannot inject markup; links go only to http(s),
// to a relative path or to an #anchor. Anything else stays text.

import { h } from "./dom.js";

const INLINE = [
  { kind: "code", re: /`([^`]+)`/ },
  { kind: "strong", re: /\*\*(.+?)\*\*/ },
  { kind: "strong", re: /__(.+?)__/ },
  { kind: "em", re: /\*([^*\s][^*]*?)\*/ },
  { kind: "em", re: /(?<![A-Za-z0-9])_([^_\s][^_]*?)_(?![A-Za-z0-9])/ },
  { kind: "link", re: /\[([^\]]+)\]\(([^)\s]+)\)/ },
];

function safeHref(href) {
  if (/^https?:\/\//i.test(href)) return href;
  if (/^#[\w-]*$/.test(href)) return href;
  if (/^[\w./-]+(#[\w-]*)?$/.test(href) && !href.startsWith("//")) return href;
  return null;
}

/** Inline Markdown as an array of nodes. */
export function inline(text) {
  const out = [];
  let rest = text;
  while (rest) {
    let best = null;
    for (const rule of INLINE) {
      const match = rule.re.exec(rest);
      if (match && (best === null || match.index < best.match.index)) best = { rule, match };
    }
    if (!best) {
      out.push(document.createTextNode(rest));
      break;
    }
    const { rule, match } = best;
    if (match.index) out.push(document.createTextNode(rest.slice(0, match.index)));
    if (rule.kind === "code") out.push(h("code", {}, match[1]));
    else if (rule.kind === "strong") out.push(h("strong", {}, ...inline(match[1])));
    else if (rule.kind === "em") out.push(h("em", {}, ...inline(match[1])));
    else {
      const href = safeHref(match[2]);
      if (href) {
        const external = /^https?:/i.test(href);
        out.push(h("a", { href: resolveHref(href), rel: external ? "noopener noreferrer" : null }, ...inline(match[1])));
      } else out.push(document.createTextNode(match[0]));
    }
    rest = rest.slice(match.index + match[0].length);
  }
  return out;
}

/** Anchors inside the guide stay on the Guide page (#guide/anchor). */
function resolveHref(href) {
  if (href.startsWith("#")) return `#guide/${href.slice(1)}`;
  return href;
}

/** "Calls and answers" -> "calls-and-answers" (heading ids, for anchors). */
export function slug(text) {
  return text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\w\s-]/g, "")
    .trim()
    .replace(/\s+/g, "-");
}

function cells(line) {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replaceAll("\\|", "|"));
}

/** The whole document as a DocumentFragment. */
export function render(markdown) {
  const fragment = document.createDocumentFragment();
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  let paragraph = [];
  const flush = () => {
    if (paragraph.length) fragment.appendChild(h("p", {}, ...inline(paragraph.join(" "))));
    paragraph = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = /^\s*```/.exec(line);
    if (fence) {
      flush();
      const code = [];
      i += 1;
      while (i < lines.length && !/^\s*```/.test(lines[i])) code.push(lines[i++]);
      i += 1;
      fragment.appendChild(h("pre", {}, h("code", {}, code.join("\n"))));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      const level = heading[1].length;
      fragment.appendChild(h(`h${level}`, { id: slug(heading[2]) }, ...inline(heading[2])));
      i += 1;
      continue;
    }
    if (/^\s*\|/.test(line) && i + 1 < lines.length && /^\s*\|?\s*:?-{2,}/.test(lines[i + 1])) {
      flush();
      const head = cells(line);
      i += 2;
      const body = [];
      while (i < lines.length && /^\s*\|/.test(lines[i])) body.push(cells(lines[i++]));
      fragment.appendChild(
        h(
          "div",
          { class: "table-scroll" },
          h(
            "table",
            {},
            h("thead", {}, h("tr", {}, ...head.map((cell) => h("th", {}, ...inline(cell))))),
            h("tbody", {}, ...body.map((row) => h("tr", {}, ...row.map((cell) => h("td", {}, ...inline(cell)))))),
          ),
        ),
      );
      continue;
    }
    const item = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (item) {
      flush();
      const ordered = /\d/.test(item[2]);
      const list = h(ordered ? "ol" : "ul");
      while (i < lines.length) {
        const next = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]);
        if (next) {
          list.appendChild(h("li", {}, ...inline(next[3])));
          i += 1;
        } else if (/^\s{2,}\S/.test(lines[i]) && list.lastChild) {
          list.lastChild.append(" ", ...inline(lines[i].trim()));
          i += 1;
        } else break;
      }
      fragment.appendChild(list);
      continue;
    }
    if (/^\s*>/.test(line)) {
      flush();
      const quote = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quote.push(lines[i++].replace(/^\s*>\s?/, ""));
      fragment.appendChild(h("blockquote", {}, ...inline(quote.join(" "))));
      continue;
    }
    if (/^\s*(-{3,}|\*{3,})\s*$/.test(line)) {
      flush();
      fragment.appendChild(h("hr"));
      i += 1;
      continue;
    }
    if (!line.trim()) flush();
    else paragraph.push(line.trim());
    i += 1;
  }
  flush();
  return fragment;
}
