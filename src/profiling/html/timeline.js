// The timeline of the report page, drawn as SVG with d3: one row per nesting level of each
// thread's stages, then one row per simulated device core with the tasks it ran and, as arrows,
// the dependency that released each task (the device timeline's "waited_on"). An overview strip
// above it holds a brush; the wheel zooms, a drag pans, a click on a stage or task zooms to it.
//
// Only what is in view and at least half a pixel wide is drawn (search matches always are), so
// a profile of 100,000 stages stays responsive; zoom in to see the rest.
pp.timeline = function (parent, profile, onZoomed) {
  const ROW = 18, GUTTER = 132, AXIS = 24, LANE_GAP = 8, OVERVIEW = 30;

  // --- Model: stages and tasks as items on rows, times in seconds from the earliest start. ---
  const threadName = {};
  (profile.threads || []).forEach(function (t) { threadName[t.id] = t.name; });
  const mainThread = profile.threads && profile.threads.length ? profile.threads[0].id : 0;
  const stages = [], timelines = [];
  let origin = Infinity, last = -Infinity;
  (function walk(list, thread, depthOf) {
    list.forEach(function (st) {
      const t = st.thread !== undefined ? st.thread : thread;
      const depth = depthOf[t] || 0;
      stages.push({ st: st, thread: t, depth: depth });
      origin = Math.min(origin, st.start);
      last = Math.max(last, st.start + st.seconds);
      if (st.device) timelines.push(st.device);
      const next = Object.assign({}, depthOf);
      next[t] = depth + 1;
      walk(st.children || [], t, next);
    });
  })(profile.stages || [], mainThread, {});

  // Tasks are rows of values named by "task_fields" (device_timeline.h).
  const tasks = [];
  let cores = 0;
  timelines.forEach(function (tl, run) {
    const f = {};
    (tl.task_fields || []).forEach(function (name, i) { f[name] = i; });
    cores = Math.max(cores, tl.cores || 0);
    origin = Math.min(origin, tl.begin);
    last = Math.max(last, tl.end);
    const first = tasks.length;
    (tl.tasks || []).forEach(function (row, index) {
      tasks.push({ kernel: String(row[f.kernel]), core: row[f.core], start: row[f.start],
                   end: row[f.end], waited: row[f.waited_on], index: index, run: run,
                   base: first });
      cores = Math.max(cores, row[f.core] + 1);
    });
  });
  if (!isFinite(origin)) { origin = 0; last = 0; }
  const span = Math.max(last - origin, 1e-9);

  // Rows: each thread's lane (main thread first), then the device cores.
  const lanes = [], laneOf = {};
  stages.forEach(function (s) {
    if (!(s.thread in laneOf)) {
      laneOf[s.thread] = lanes.length;
      lanes.push({ title: threadName[s.thread] || (s.thread === mainThread ? "main"
                                                                             : "thread " + s.thread),
                   depth: 0 });
    }
    const lane = lanes[laneOf[s.thread]];
    lane.depth = Math.max(lane.depth, s.depth + 1);
  });
  if (cores > 0) lanes.push({ title: "device", depth: cores, device: true });
  const rows = [];  // {y, label, lane}
  let y = AXIS;
  lanes.forEach(function (lane, li) {
    lane.first = rows.length;
    for (let r = 0; r < lane.depth; r++) {
      rows.push({ y: y, lane: li, label: lane.device ? "core " + r : r === 0 ? lane.title
                                                                               : "level " + r });
      y += ROW;
    }
    y += LANE_GAP;
  });
  const height = y;

  const items = [];
  stages.forEach(function (s) {
    const st = s.st;
    // A stage the profiler merged (the exit report's repeated calls) spans their summed time.
    items.push({ id: items.length, kind: "stage", name: st.name, st: st, thread: s.thread,
                 label: st.count > 1 ? st.name + " (" + st.count + "\u00d7)" : st.name,
                 start: st.start - origin, end: st.start + st.seconds - origin,
                 row: lanes[laneOf[s.thread]].first + s.depth, match: false });
  });
  const taskItems = [];
  const deviceFirst = cores > 0 ? lanes[lanes.length - 1].first : 0;
  tasks.forEach(function (t) {
    const item = t.core >= 0 ? { id: items.length, kind: "task", name: t.kernel, label: t.kernel,
                                 task: t,
                                 start: t.start - origin, end: t.end - origin,
                                 row: deviceFirst + t.core, match: false } : null;
    if (item) items.push(item);
    taskItems.push(item);
  });
  const edges = [];
  taskItems.forEach(function (item) {
    if (!item || item.task.waited < 0) return;
    const from = taskItems[item.task.base + item.task.waited];
    if (from) edges.push({ from: from, to: item });
  });

  // --- Drawing. ---
  const box = d3.select(parent).append("div").attr("class", "timeline");
  // The right margin leaves room for the last tick's label.
  const width = Math.max(box.node().clientWidth, 600), plotW = width - GUTTER - 24;
  const x0 = d3.scaleLinear().domain([0, span]).range([GUTTER, GUTTER + plotW]);
  let x = x0;

  // Label text that fits a width, measured with the page's font.
  const measure = document.createElement("canvas").getContext("2d");
  measure.font = "10.5px system-ui, -apple-system, 'Segoe UI', sans-serif";
  const charWidth = {};
  function fit(name, room) {
    if (room < 14) return "";
    if (!(name in charWidth)) charWidth[name] = measure.measureText(name).width / name.length;
    const w = charWidth[name] || 6;
    if (w * name.length <= room) return name;
    const n = Math.floor(room / w) - 1;
    return n >= 2 ? name.slice(0, n) + "\u2026" : "";
  }

  const over = box.append("svg").attr("class", "overview").attr("width", width)
    .attr("height", OVERVIEW);
  over.append("text").attr("class", "row-label").attr("x", 4).attr("y", OVERVIEW / 2 + 3)
    .text("overview: drag to zoom");
  over.append("g").selectAll("rect")
    .data(items.filter(function (d) { return d.kind === "task" || d.st && stages[d.id].depth === 0; })
      .slice(0, 20000))
    .enter().append("rect")
    .attr("x", function (d) { return x0(d.start); })
    .attr("width", function (d) { return Math.max(1, x0(d.end) - x0(d.start)); })
    .attr("y", function (d) { return d.kind === "task" ? OVERVIEW / 2 + 1 : 2; })
    .attr("height", OVERVIEW / 2 - 3)
    .attr("fill", function (d) {
      return d.kind === "task" ? pp.taskColour(d.name) : pp.stageColour(d.name);
    });

  const svg = box.append("svg").attr("class", "frame").attr("width", width)
    .attr("height", height);
  const defs = svg.append("defs");
  defs.append("clipPath").attr("id", "plot-clip").append("rect").attr("x", GUTTER)
    .attr("y", 0).attr("width", plotW).attr("height", height);
  defs.append("marker").attr("id", "arrow").attr("viewBox", "0 0 8 8").attr("refX", 8)
    .attr("refY", 4).attr("markerWidth", 6).attr("markerHeight", 6).attr("orient", "auto")
    .append("path").attr("d", "M0,0L8,4L0,8z").attr("fill", "#5d6b7a");
  svg.append("g").selectAll("rect").data(rows).enter().append("rect")
    .attr("class", function (r, i) { return "row-band" + (i % 2 ? " odd" : ""); })
    .attr("x", 0).attr("y", function (r) { return r.y; }).attr("width", width)
    .attr("height", ROW);
  svg.append("g").selectAll("line").data(lanes.slice(1)).enter().append("line")
    .attr("class", "lane-rule").attr("x1", 0).attr("x2", width)
    .attr("y1", function (l) { return rows[l.first].y - LANE_GAP / 2; })
    .attr("y2", function (l) { return rows[l.first].y - LANE_GAP / 2; });
  svg.append("g").selectAll("text").data(rows).enter().append("text")
    .attr("class", function (r, i) {
      return i === lanes[r.lane].first || lanes[r.lane].device ? "lane-label" : "row-label";
    })
    .attr("x", 6).attr("y", function (r) { return r.y + ROW / 2 + 4; })
    .text(function (r, i) {
      const lane = lanes[r.lane];
      return fit(lane.device && i === lane.first ? "device \u00b7 core 0" : r.label, GUTTER - 10);
    });
  const axisG = svg.append("g").attr("class", "axis")
    .attr("transform", "translate(0," + (AXIS - 2) + ")");
  const plot = svg.append("g").attr("clip-path", "url(#plot-clip)");
  const itemsG = plot.append("g");
  const edgesG = plot.append("g");

  function describe(d) {
    const total = profile.total_seconds;
    if (d.kind === "task") {
      const t = d.task, lines = [t.kernel, "task " + t.index + " on core " + t.core +
                                 (timelines.length > 1 ? " (run " + (t.run + 1) + ")" : ""),
                                 "time " + pp.dur(t.end - t.start) + ", started " +
                                 pp.dur(t.start - timelines[t.run].begin) + " into the run"];
      const dep = t.waited >= 0 ? taskItems[t.base + t.waited] : null;
      if (dep) {
        lines.push("released by task " + t.waited + " (" + dep.name + ", core " + dep.task.core +
                   "), " + pp.dur(Math.max(0, t.start - dep.task.end)) + " after it ended");
      } else {
        lines.push("no dependency");
      }
      return lines;
    }
    const st = d.st, lines = [st.name];
    lines.push("time " + pp.dur(st.seconds) + (total > 0 ? " (" + pp.percent(st.seconds, total) +
                                                           " of the total)" : ""));
    lines.push("self " + pp.dur(st.self_seconds !== undefined ? st.self_seconds : st.seconds));
    if (st.count > 1) {
      lines.push(st.count + " stages merged: min " + pp.dur(st.min_seconds) + ", median " +
                 pp.dur(st.median_seconds) + ", max " + pp.dur(st.max_seconds));
    }
    if (st.rss_bytes !== undefined) {
      lines.push("memory " + pp.bytes(st.rss_bytes) + " (" + (st.rss_growth_bytes >= 0 ? "+" : "") +
                 pp.bytes(st.rss_growth_bytes) + ")");
    }
    if (st.pass) {
      lines.push("IR size " + st.pass.ir_size_before + " \u2192 " + st.pass.ir_size_after +
                 (st.pass.changed ? "" : " (unchanged)"));
    }
    if (d.thread !== mainThread) lines.push("thread: " + (threadName[d.thread] || d.thread));
    if (st.parallel) lines.push("ran in parallel with its siblings");
    if (st.error) lines.push("error: " + st.error);
    else if (st.failed) lines.push("failed");
    lines.push("click: zoom to it");
    return lines;
  }

  let hovered = null;
  function render() {
    const dom = x.domain(), minSpan = 0.5 * (dom[1] - dom[0]) / plotW;
    const visible = items.filter(function (d) {
      return d.end >= dom[0] && d.start <= dom[1] && (d.end - d.start >= minSpan || d.match);
    });
    const groups = itemsG.selectAll("g.item").data(visible, function (d) { return d.id; });
    groups.exit().remove();
    const entered = groups.enter().append("g")
      .attr("class", function (d) { return "item " + d.kind + (d.st && d.st.failed ? " failed" : ""); })
      .attr("data-name", function (d) { return d.name; })
      .on("mousemove", pp.on(function (e, d) { pp.tip(e, describe(d)); }))
      .on("mouseenter", pp.on(function (e, d) { hovered = d; drawEdges(); }))
      .on("mouseleave", pp.on(function () { hovered = null; pp.hideTip(); drawEdges(); }))
      .on("click", pp.on(function (e, d) { zoomTo(d.start + origin, d.end + origin); }));
    entered.append("rect").attr("height", ROW - 2)
      .attr("fill", function (d) {
        return d.kind === "task" ? pp.taskColour(d.name) : pp.stageColour(d.name);
      });
    entered.append("text").attr("x", 3).attr("y", (ROW - 2) / 2);
    const all = entered.merge(groups);
    all.each(function (d) {
      const left = Math.max(x(d.start), GUTTER - 1), right = Math.min(x(d.end), GUTTER + plotW + 1);
      const w = Math.max(d.match ? 2 : 1, right - left), g = d3.select(this);
      g.attr("transform", "translate(" + left + "," + (rows[d.row].y + 1) + ")")
        .classed("match", d.match);
      g.select("rect").attr("width", w);
      g.select("text").text(fit(d.label, w - 6));
    });
    box.classed("searching", searching);
    drawEdges();
    axisG.call(d3.axisTop(x).ticks(Math.max(2, Math.floor(plotW / 110)))
      .tickFormat(tickFormat(x.ticks(Math.max(2, Math.floor(plotW / 110)))))
      .tickSizeInner(-(height - AXIS)).tickSizeOuter(0));
    axisG.selectAll(".tick line").attr("stroke", "#e3e7eb");
    svg.attr("data-view-start", dom[0]).attr("data-view-end", dom[1])
      .attr("data-drawn", visible.length);
    if (onZoomed) onZoomed(dom[0], dom[1], span);
  }

  // Ticks in the unit of their spacing, with the digits that tell them apart.
  function tickFormat(ticks) {
    // (Nudged up: ticks 10µs apart may be 9.99999e-6 apart in floating point.)
    const step = (ticks.length > 1 ? ticks[1] - ticks[0] : span) * 1.001;
    // A unit a hundred times finer than the spacing keeps the numbers short: ticks 10µs apart
    // read 24.46ms, not 24460µs.
    const unit = step >= 1 ? [1, "s"] : step >= 1e-5 ? [1e-3, "ms"] : step >= 1e-8 ? [1e-6, "\u00b5s"]
                                                                                   : [1e-9, "ns"];
    const digits = Math.max(0, Math.min(6, Math.ceil(-Math.log10(step / unit[0]) - 1e-9)));
    return function (v) { return (v / unit[0]).toFixed(digits) + unit[1]; };
  }

  let showEdges = true;
  function drawEdges() {
    const dom = x.domain();
    let shown = !showEdges ? [] : edges.filter(function (e) {
      return e.to.start >= dom[0] && e.from.end <= dom[1];
    });
    if (shown.length > 3000) {
      shown = shown.filter(function (e) { return e.from === hovered || e.to === hovered; });
    }
    const paths = edgesG.selectAll("path").data(shown);
    paths.exit().remove();
    paths.enter().append("path").merge(paths)
      .attr("class", function (e) { return "edge" + (e.from === hovered || e.to === hovered ? " hot" : ""); })
      .attr("d", function (e) {
        const x1 = x(e.from.end), y1 = rows[e.from.row].y + ROW / 2;
        const x2 = x(e.to.start), y2 = rows[e.to.row].y + ROW / 2;
        if (e.from.row === e.to.row) {  // same core: an arc above the row
          return "M" + x1 + "," + (y1 - 4) + "Q" + (x1 + x2) / 2 + "," + (y1 - ROW) + " " + x2 +
                 "," + (y2 - 4);
        }
        const mid = (x1 + x2) / 2;
        return "M" + x1 + "," + y1 + "C" + mid + "," + y1 + " " + mid + "," + y2 + " " + x2 + "," + y2;
      });
  }

  // --- Zoom, pan and the overview's brush, kept in step. ---
  let syncing = false;
  const zoom = d3.zoom().scaleExtent([1, Math.max(1, span / 2e-8)])
    .extent([[GUTTER, 0], [GUTTER + plotW, height]])
    .translateExtent([[GUTTER, 0], [GUTTER + plotW, height]])
    .on("zoom", pp.on(function (e) {
      x = e.transform.rescaleX(x0);
      if (!syncing) {
        syncing = true;
        brushG.call(brush.move, e.transform.k > 1.0001 ? x.domain().map(x0) : null);
        syncing = false;
      }
      render();
    }));
  const brush = d3.brushX().extent([[GUTTER, 1], [GUTTER + plotW, OVERVIEW - 1]])
    .on("brush end", pp.on(function (e) {
      if (syncing) return;
      const sel = e.selection;
      if (!sel && e.type !== "end") return;
      syncing = true;
      svg.call(zoom.transform, sel ? transformFor(x0.invert(sel[0]), x0.invert(sel[1]))
                                   : d3.zoomIdentity);
      syncing = false;
    }));
  const brushG = over.append("g").attr("class", "brush").call(brush);
  svg.call(zoom).on("dblclick.zoom", null);

  function transformFor(start, end) {
    // zoom.transform() does not apply the translate extent: keep the view inside the profile.
    start = Math.max(0, start);
    end = Math.min(span, end);
    const k = Math.min(zoom.scaleExtent()[1], Math.max(1, span / Math.max(end - start, 1e-12)));
    // The transform maps x0(start) to the plot's left edge: k * x0(start) + tx = GUTTER.
    return d3.zoomIdentity.translate(GUTTER - k * x0(start), 0).scale(k);
  }
  // Shows [start, end] (seconds on the profile's clock) with a margin of 5% each side.
  function zoomTo(start, end) {
    const pad = Math.max((end - start) * 0.05, 1e-9);
    svg.transition().duration(350)
      .call(zoom.transform, transformFor(start - origin - pad, end - origin + pad));
  }
  function reset() { svg.transition().duration(350).call(zoom.transform, d3.zoomIdentity); }

  let searching = false;
  // Marks the items whose name `test` accepts (null: no search); returns the counts.
  function search(test) {
    searching = !!test;
    const found = { stages: 0, tasks: 0 };
    items.forEach(function (d) {
      d.match = !!test && test(d.name);
      if (d.match) found[d.kind === "task" ? "tasks" : "stages"]++;
    });
    render();
    return found;
  }

  render();
  return {
    zoomTo: zoomTo, reset: reset, search: search, timelines: timelines,
    setEdges: function (on) { showEdges = on; drawEdges(); }, hasEdges: edges.length > 0
  };
};
