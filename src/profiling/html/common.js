// Shared helpers of the HTML profile pages: the page's data, number formats, DOM building with
// names as text only, the tooltip and colours. The page's scripts are concatenated into one
// <script> element (html_report.cpp); each adds its part to `pp`.
const pp = (function () {
  function readJson(id) {
    return JSON.parse(document.getElementById(id).textContent);
  }

  // Three significant digits in the unit that fits, as the text summary prints them.
  function dur(s) {
    if (s === null || s === undefined || isNaN(s)) return "-";
    if (s < 0) return "-" + dur(-s);
    if (s >= 1) return s.toFixed(s < 10 ? 2 : s < 100 ? 1 : 0) + "s";
    if (s >= 1e-3) return (s * 1e3).toPrecision(3) + "ms";
    if (s >= 1e-6) return (s * 1e6).toPrecision(3) + "\u00b5s";
    return (s * 1e9).toFixed(0) + "ns";
  }
  function bytes(b) {
    const units = ["B", "KB", "MB", "GB"];
    let v = Math.abs(b), u = 0;
    while (v >= 999.5 && u < units.length - 1) { v /= 1024; u++; }
    return (b < 0 ? "-" : "") + (u ? v.toPrecision(3) : String(v)) + units[u];
  }
  function percent(part, whole) {
    return whole > 0 ? (100 * part / whole).toFixed(1) + "%" : "";
  }

  // An element whose text (never markup) is `text`.
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // A stable colour per name, so that repeated stages and tasks of one kernel look alike.
  function hue(name) {
    let h = 0;
    for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) % 360;
    return h;
  }
  function stageColour(name) { return "hsl(" + hue(name) + ",55%,76%)"; }
  function taskColour(name) { return "hsl(" + hue(name) + ",62%,64%)"; }

  // d3 5 hands listeners (datum, index, nodes) and the event in d3.event; d3 6 and later hand
  // them (event, datum). Listeners written as fn(event, datum) work with both.
  function on(fn) {
    return function (a, b) {
      return d3.event ? fn.call(this, d3.event, a) : fn.call(this, a, b);
    };
  }

  const tipBox = document.getElementById("tip");
  // Shows `lines` (the first in bold) next to the pointer; lines are text.
  function tip(event, lines) {
    tipBox.textContent = "";
    lines.forEach(function (line, i) {
      tipBox.appendChild(el("div", i === 0 ? "tip-name" : "", line));
    });
    tipBox.style.display = "block";
    const x = Math.min(event.clientX + 14, window.innerWidth - tipBox.offsetWidth - 8);
    const y = event.clientY + 16 + tipBox.offsetHeight > window.innerHeight
      ? event.clientY - tipBox.offsetHeight - 10 : event.clientY + 16;
    tipBox.style.left = Math.max(4, x) + "px";
    tipBox.style.top = Math.max(4, y) + "px";
  }
  function hideTip() { tipBox.style.display = "none"; }

  // Case-insensitive substring test; an empty query matches nothing (no search).
  function matcher(query) {
    const q = query.trim().toLowerCase();
    if (!q) return null;
    return function (name) { return name.toLowerCase().indexOf(q) >= 0; };
  }

  // The search field of a toolbar: calls onChange(query) as the user types (debounced a little,
  // so that a large profile is not redrawn for every key) and on Escape clears it.
  function searchBox(toolbar, placeholder, onChange) {
    const input = el("input");
    input.type = "search";
    input.id = "search";
    input.placeholder = placeholder;
    input.setAttribute("aria-label", placeholder);
    let timer = 0;
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { onChange(input.value); }, 60);
    });
    input.addEventListener("keydown", function (e) {
      if (e.key === "Escape") { input.value = ""; onChange(""); }
    });
    toolbar.appendChild(input);
    const count = el("span", "count");
    count.id = "match-count";
    toolbar.appendChild(count);
    return { input: input, count: count };
  }

  function heading(parent, text) {
    const h = el("h2", "", text);
    parent.appendChild(h);
    return h;
  }

  function summaryItem(label, value) {
    const span = el("span", "", label + " ");
    span.appendChild(el("b", "", value));
    document.getElementById("summary").appendChild(span);
  }

  const meta = readJson("meta");
  document.title = meta.title;
  document.getElementById("title").textContent = meta.title;

  return {
    meta: meta, data: readJson("profile"), dur: dur, bytes: bytes, percent: percent, el: el,
    stageColour: stageColour, taskColour: taskColour, on: on, tip: tip, hideTip: hideTip,
    matcher: matcher, searchBox: searchBox, heading: heading, summaryItem: summaryItem,
    app: document.getElementById("app")
  };
})();
