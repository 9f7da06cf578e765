// The diff page (`pypto profile diff A B --html`): per stage path the time in A and in B, the
// change and the ratio, largest changes first, with a chart of the largest changes (d3) and a
// search that filters the rows. Stages are matched by path as the text diff matches them
// (report_diff.h): stages sharing a path are summed.
(function () {
  if (pp.meta.kind !== "diff") return;
  const data = pp.data, app = pp.app;
  const a = data.base, b = data.new;

  function signed(s) { return (s > 0 ? "+" : s < 0 ? "\u2212" : "\u00b10") + pp.dur(Math.abs(s)); }
  function ratioText(r) {
    return r.base === null ? "only in B" : r.now === null ? "only in A"
      : r.base > 0 ? "\u00d7" + (r.now / r.base).toFixed(r.now / r.base < 10 ? 2 : 1) : "";
  }

  const rows = data.stages.map(function (s) {
    const base = s.base, now = s.new;
    return { path: s.path, base: base, now: now, regressed: s.regressed,
             delta: (now === null ? 0 : now) - (base === null ? 0 : base),
             ratio: base > 0 && now !== null ? now / base : null };
  });
  const regressed = rows.filter(function (r) { return r.regressed; }).length;

  pp.summaryItem("A", a.name + " (" + pp.dur(a.total_seconds) + ")");
  pp.summaryItem("B", b.name + " (" + pp.dur(b.total_seconds) + ")");
  pp.summaryItem("total change", signed(b.total_seconds - a.total_seconds) +
                 (a.total_seconds > 0 ? " (\u00d7" + (b.total_seconds / a.total_seconds)
                   .toFixed(2) + ")" : ""));
  pp.summaryItem("regressed", regressed + " stage" + (regressed === 1 ? "" : "s") +
                 " (slower by more than " + data.threshold_percent + "% and by at least " +
                 pp.dur(data.min_seconds) + ")");

  const toolbar = app.appendChild(pp.el("div", "toolbar"));
  const search = pp.searchBox(toolbar, "filter stages by name", draw);

  pp.heading(app, "Largest changes");
  const chartBox = app.appendChild(pp.el("div", "chart"));
  pp.heading(app, "All stages (sorted by the size of the change)");

  // Table with sortable columns; the default order is by absolute change.
  const columns = [
    { title: "stage", key: function (r) { return r.path; }, text: null },
    { title: "A", key: function (r) { return r.base; }, text: function (r) { return pp.dur(r.base); } },
    { title: "B", key: function (r) { return r.now; }, text: function (r) { return pp.dur(r.now); } },
    { title: "change", key: function (r) { return Math.abs(r.delta); },
      text: function (r) { return signed(r.delta); } },
    { title: "ratio", key: function (r) { return r.ratio === null ? -1 : r.ratio; },
      text: ratioText },
    { title: "", key: function (r) { return r.regressed ? 1 : 0; },
      text: function (r) { return r.regressed ? "REGRESSED" : ""; } }
  ];
  let sortBy = 3;
  const table = app.appendChild(pp.el("table"));
  table.id = "diff";
  const head = pp.el("tr");
  columns.forEach(function (c, i) {
    const th = head.appendChild(pp.el("th", "sortable", c.title));
    th.addEventListener("click", function () { sortBy = i; draw(search.input.value); });
    c.th = th;
  });
  table.appendChild(pp.el("thead")).appendChild(head);
  const body = table.appendChild(pp.el("tbody"));

  function pathCell(path) {
    const td = pp.el("td");
    const cut = path.lastIndexOf(";") + 1;
    if (cut > 0) td.appendChild(pp.el("span", "path-prefix", path.slice(0, cut)));
    td.appendChild(pp.el("span", "name", path.slice(cut)));
    return td;
  }

  function draw(query) {
    const test = pp.matcher(query || "");
    const shown = rows.filter(function (r) { return !test || test(r.path); });
    const key = columns[sortBy].key;
    shown.sort(function (x, y) {
      const kx = key(x), ky = key(y);
      if (sortBy === 0) return kx < ky ? -1 : kx > ky ? 1 : 0;
      return (ky === null ? -Infinity : ky) - (kx === null ? -Infinity : kx);
    });
    columns.forEach(function (c, i) { c.th.classList.toggle("sorted", i === sortBy); });
    body.textContent = "";
    shown.forEach(function (r) {
      const tr = body.appendChild(pp.el("tr", r.regressed ? "regressed" : ""));
      tr.setAttribute("data-path", r.path);
      tr.appendChild(pathCell(r.path));
      columns.slice(1).forEach(function (c, i) {
        const cls = i === 2 && r.delta !== 0 ? (r.delta > 0 ? "slower" : "faster") : "";
        tr.appendChild(pp.el("td", cls, c.text(r)));
      });
    });
    search.count.classList.toggle("some", !!test);
    search.count.textContent = test ? shown.length + " of " + rows.length + " stages" : "";
    chart(shown.slice().sort(function (x, y) { return Math.abs(y.delta) - Math.abs(x.delta); })
      .filter(function (r) { return r.delta !== 0; }).slice(0, 20));
  }

  // A diverging bar per stage: slower to the right in red, faster to the left in green.
  function chart(top) {
    chartBox.textContent = "";
    if (!top.length) { chartBox.appendChild(pp.el("div", "hint", "No stage changed.")); return; }
    const LABEL = 300, BAR = 18, width = Math.max(700, Math.min(app.clientWidth, 1200));
    const most = d3.max(top, function (r) { return Math.abs(r.delta); });
    const x = d3.scaleLinear().domain([-most, most]).range([LABEL, width - 40]).nice();
    const svg = d3.select(chartBox).append("svg").attr("width", width)
      .attr("height", top.length * BAR + 30);
    const g = svg.selectAll("g.change").data(top).enter().append("g").attr("class", "change")
      .attr("transform", function (r, i) { return "translate(0," + (i * BAR + 4) + ")"; })
      .on("mousemove", pp.on(function (e, r) {
        pp.tip(e, [r.path, "A " + pp.dur(r.base) + ", B " + pp.dur(r.now), "change " +
                   signed(r.delta) + (r.ratio !== null ? " (" + ratioText(r) + ")" : "")]);
      }))
      .on("mouseleave", pp.hideTip);
    g.append("text").attr("class", "chart-label").attr("x", LABEL - 8).attr("y", BAR / 2 + 2)
      .attr("text-anchor", "end")
      .text(function (r) {
        const leaf = r.path.slice(r.path.lastIndexOf(";") + 1);
        return leaf.length > 45 ? leaf.slice(0, 44) + "\u2026" : leaf;
      });
    g.append("rect")
      .attr("class", function (r) { return "delta-bar " + (r.delta > 0 ? "slower" : "faster"); })
      .attr("x", function (r) { return Math.min(x(0), x(r.delta)); })
      .attr("width", function (r) { return Math.max(1, Math.abs(x(r.delta) - x(0))); })
      .attr("y", 1).attr("height", BAR - 4);
    svg.append("g").attr("class", "axis")
      .attr("transform", "translate(0," + (top.length * BAR + 8) + ")")
      .call(d3.axisBottom(x).ticks(7).tickFormat(signed));
    svg.append("line").attr("x1", x(0)).attr("x2", x(0)).attr("y1", 0)
      .attr("y2", top.length * BAR + 8).attr("stroke", "#888");
  }

  draw("");
  document.body.setAttribute("data-ready", "diff");
})();
