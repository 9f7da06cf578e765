// The stage tree and the list view of the report page.
//
// Tree: sibling stages of the same shape (same name, same tree of child names below) are merged
// into one row, as the text summary folds "verify (12×)": the count, the summed time and self
// time, and the spread (min, median, max) of their times; their children are merged the same way.
// Failed and still-open stages stay single, so that their errors stay visible. Rows with children
// collapse and expand; a click on a name zooms the timeline to the stages the row stands for.
pp.mergeStages = function (roots) {
  const shapes = new Map();  // shape text -> small id, so that a shape is O(children) to build
  let unique = 0;
  function shapeOf(st) {
    if (st._shape === undefined) {
      const text = st.name + "\u0000" + (st.children || []).map(shapeOf).join(",");
      if (!shapes.has(text)) shapes.set(text, shapes.size);
      st._shape = shapes.get(text);
    }
    return st._shape;
  }
  function mergeList(list, depth) {
    const groups = new Map(), order = [];
    list.forEach(function (st) {
      const key = st.failed || st.open ? "single " + unique++ : "shape " + shapeOf(st);
      let group = groups.get(key);
      if (!group) { group = []; groups.set(key, group); order.push(group); }
      group.push(st);
    });
    return order.map(function (members) { return node(members, depth); });
  }
  function node(members, depth) {
    const samples = [];
    const n = { name: members[0].name, members: members, depth: depth, count: 0, seconds: 0,
                self: 0, start: Infinity, end: -Infinity, first: members[0], match: false };
    members.forEach(function (m) {
      const count = m.count || 1;
      n.count += count;
      n.seconds += m.seconds;
      n.self += m.self_seconds !== undefined ? m.self_seconds : m.seconds;
      n.start = Math.min(n.start, m.start);
      n.end = Math.max(n.end, m.start + m.seconds);
      // A stage merged by the profiler itself brings its own spread.
      if (count > 1) samples.push(m.min_seconds, m.median_seconds, m.max_seconds);
      else samples.push(m.seconds);
      if (m.parallel) n.parallel = true;
    });
    if (n.count > 1) {
      samples.sort(function (a, b) { return a - b; });
      n.min = samples[0];
      n.max = samples[samples.length - 1];
      const mid = samples.length >> 1;
      n.median = samples.length % 2 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
    }
    const children = [];
    members.forEach(function (m) { (m.children || []).forEach(function (c) { children.push(c); }); });
    n.children = mergeList(children, depth + 1);
    return n;
  }
  return mergeList(roots, 0);
};

// A tree that fits a screen or two opens whole; a larger one opens its first two levels.
pp.openTree = function (roots) {
  let rows = 0;
  (function count(nodes) { nodes.forEach(function (n) { rows++; count(n.children); }); })(roots);
  (function open(nodes) {
    nodes.forEach(function (n) { n.expanded = rows <= 200 || n.depth < 2; open(n.children); });
  })(roots);
};

pp.tree = function (parent, profile, onSelect) {
  const total = profile.total_seconds;
  const roots = pp.mergeStages(profile.stages || []);
  pp.openTree(roots);
  const buttons = pp.el("div", "tree-buttons");
  const table = pp.el("table", "tree");
  table.id = "tree";
  const head = pp.el("tr");
  ["stage", "count", "time", "self", "% of total", "min \u00b7 median \u00b7 max", "memory",
   "notes"].forEach(function (h, i) { head.appendChild(pp.el("th", i === 7 ? "notes" : "", h)); });
  table.appendChild(pp.el("thead")).appendChild(head);
  const body = table.appendChild(pp.el("tbody"));
  parent.appendChild(buttons);
  parent.appendChild(table);

  function each(nodes, fn) {
    nodes.forEach(function (n) { fn(n); each(n.children, fn); });
  }
  function button(text, fn) {
    const b = buttons.appendChild(pp.el("button", "", text));
    b.type = "button";
    b.addEventListener("click", fn);
  }
  button("expand all", function () { each(roots, function (n) { n.expanded = true; }); draw(); });
  button("collapse all", function () { each(roots, function (n) { n.expanded = false; }); draw(); });

  function notes(n) {
    const out = [], st = n.first;
    if (n.parallel) out.push("[parallel]");
    if (st.failed) out.push(st.error ? "[failed: " + st.error.split("\n")[0] + "]" : "[failed]");
    if (st.open) out.push("[open]");
    if (st.pass && n.members.length === 1) {
      out.push("ir " + st.pass.ir_size_before +
               (st.pass.changed ? "\u2192" + st.pass.ir_size_after : " ="));
    }
    if (st.device) {
      const cores = st.device.cores, tasks = st.device.tasks.length;
      out.push("device: " + cores + (cores === 1 ? " core, " : " cores, ") + tasks +
               (tasks === 1 ? " task" : " tasks"));
    }
    return out.join("  ");
  }
  function memory(n) {
    const st = n.first;
    if (st.rss_bytes === undefined || n.members.length > 1) return "";
    return pp.bytes(st.rss_bytes) + " (" + (st.rss_growth_bytes >= 0 ? "+" : "") +
           pp.bytes(st.rss_growth_bytes) + ")";
  }

  function row(n) {
    const tr = pp.el("tr", n.first.failed ? "failed" : "");
    tr.setAttribute("data-depth", n.depth);
    tr.setAttribute("data-name", n.name);
    if (n.match) tr.classList.add("match");
    const cell = pp.el("td");
    cell.style.paddingLeft = (n.depth * 16) + "px";
    if (n.children.length) {
      const t = pp.el("button", "toggle", n.expanded ? "\u25be" : "\u25b8");
      t.type = "button";
      t.setAttribute("aria-expanded", String(n.expanded));
      t.setAttribute("aria-label", (n.expanded ? "collapse " : "expand ") + n.name);
      t.addEventListener("click", function () { n.expanded = !n.expanded; draw(); });
      cell.appendChild(t);
    } else {
      cell.appendChild(pp.el("span", "leaf-pad"));
    }
    const name = cell.appendChild(pp.el("span", "name", n.name));
    name.title = "zoom the timeline to " + (n.count > 1 ? "these stages" : "this stage");
    name.addEventListener("click", function () { onSelect(n); });
    tr.appendChild(cell);
    tr.appendChild(pp.el("td", "", n.count > 1 ? n.count + "\u00d7" : ""));
    tr.appendChild(pp.el("td", "", pp.dur(n.seconds)));
    tr.appendChild(pp.el("td", "", pp.dur(n.self)));
    const pct = pp.el("td", "pct", pp.percent(n.seconds, total));
    const bar = pct.appendChild(pp.el("span", "bar"));
    bar.style.width = Math.min(100, total > 0 ? 100 * n.seconds / total : 0) + "%";
    tr.appendChild(pct);
    tr.appendChild(pp.el("td", "times", n.count > 1 ? pp.dur(n.min) + " \u00b7 " + pp.dur(n.median) +
                                                     " \u00b7 " + pp.dur(n.max) : ""));
    tr.appendChild(pp.el("td", "", memory(n)));
    tr.appendChild(pp.el("td", "notes", notes(n)));
    return tr;
  }

  function draw() {
    const rows = document.createDocumentFragment();
    (function add(nodes) {
      nodes.forEach(function (n) {
        rows.appendChild(row(n));
        if (n.expanded) add(n.children);
      });
    })(roots);
    body.textContent = "";
    body.appendChild(rows);
  }

  // Marks the rows whose name `test` accepts and opens their ancestors; returns how many.
  function search(test) {
    let found = 0;
    (function mark(nodes) {
      let below = false;
      nodes.forEach(function (n) {
        n.match = !!test && test(n.name);
        if (n.match) found++;
        const inside = mark(n.children);
        if (inside) n.expanded = true;
        below = below || n.match || inside;
      });
      return below;
    })(roots);
    draw();
    return found;
  }

  draw();
  return { search: search, roots: roots };
};

// The list view: one row per stage name over the whole tree, sorted by self time, as
// `pypto profile show --list` prints it.
pp.byName = function (parent, profile) {
  const total = profile.total_seconds, byName = new Map();
  (function walk(list) {
    list.forEach(function (st) {
      let r = byName.get(st.name);
      if (!r) { r = { name: st.name, count: 0, total: 0, self: 0 }; byName.set(st.name, r); }
      r.count += st.count || 1;
      r.total += st.seconds;
      r.self += st.self_seconds !== undefined ? st.self_seconds : st.seconds;
      if (st.parallel) r.parallel = true;
      walk(st.children || []);
    });
  })(profile.stages || []);
  const order = Array.from(byName.values()).sort(function (a, b) { return b.self - a.self; });
  const table = pp.el("table");
  table.id = "list";
  const head = pp.el("tr");
  ["name", "count", "total", "self", "self %"].forEach(function (h) {
    head.appendChild(pp.el("th", "", h));
  });
  table.appendChild(pp.el("thead")).appendChild(head);
  const body = table.appendChild(pp.el("tbody"));
  const rows = order.map(function (r) {
    const tr = body.appendChild(pp.el("tr"));
    const name = tr.appendChild(pp.el("td"));
    name.appendChild(pp.el("span", "name", r.name + (r.parallel ? "  [parallel]" : "")));
    [String(r.count), pp.dur(r.total), pp.dur(r.self), pp.percent(r.self, total)]
      .forEach(function (c) { tr.appendChild(pp.el("td", "", c)); });
    return { tr: tr, name: r.name };
  });
  parent.appendChild(table);
  return {
    search: function (test) {
      rows.forEach(function (r) { r.tr.classList.toggle("match", !!test && test(r.name)); });
    }
  };
};
