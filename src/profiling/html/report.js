// The report page (`pypto profile html`): summary, a toolbar with the search and the zoom
// controls, the timeline (timeline.js), the device cores' utilisation, the stage tree and the
// list view (tree.js). The search marks matching stages in the timeline, the tree and the list.
(function () {
  if (pp.meta.kind !== "report") return;
  const profile = pp.data, app = pp.app;

  let stageCount = 0;
  (function count(list) {
    list.forEach(function (st) { stageCount++; count(st.children || []); });
  })(profile.stages || []);
  pp.summaryItem("total", pp.dur(profile.total_seconds));
  if (profile.untracked_seconds) pp.summaryItem("untracked", pp.dur(profile.untracked_seconds));
  pp.summaryItem("stages", String(stageCount));
  Object.keys(profile.metadata || {}).forEach(function (key) {
    pp.summaryItem(key, profile.metadata[key]);
  });

  const toolbar = app.appendChild(pp.el("div", "toolbar"));
  const search = pp.searchBox(toolbar, "search stages and tasks by name", find);
  const reset = toolbar.appendChild(pp.el("button", "", "reset zoom"));
  reset.type = "button";
  reset.id = "reset-zoom";
  let edgesBox = null;
  const range = pp.el("span", "range");
  range.id = "view-range";

  pp.heading(app, "Timeline");
  app.appendChild(pp.el("div", "hint",
                        "Wheel: zoom \u00b7 drag: pan \u00b7 drag on the overview: zoom to a " +
                        "range \u00b7 click a stage or task: zoom to it \u00b7 hover: details"));
  const timeline = pp.timeline(app, profile, function (start, end, span) {
    range.textContent = "showing " + pp.dur(start) + " \u2013 " + pp.dur(end) + " of " +
                        pp.dur(span) + (end - start < span * 0.999
                                        ? " (\u00d7" + (span / (end - start)).toFixed(1) + ")" : "");
  });
  reset.addEventListener("click", timeline.reset);
  if (timeline.hasEdges) {
    const label = toolbar.appendChild(pp.el("label", "", " dependencies"));
    edgesBox = pp.el("input");
    edgesBox.type = "checkbox";
    edgesBox.checked = true;
    edgesBox.id = "show-edges";
    label.insertBefore(edgesBox, label.firstChild);
    edgesBox.addEventListener("change", function () { timeline.setEdges(edgesBox.checked); });
  }
  toolbar.appendChild(range);

  if (timeline.timelines.length) deviceTable(timeline.timelines);

  pp.heading(app, "Stages (repeated siblings merged)");
  const tree = pp.tree(app, profile, function (node) {
    timeline.zoomTo(node.start, node.end);
    window.scrollTo({ top: 0, behavior: "smooth" });
  });

  pp.heading(app, "By name (sorted by self time)");
  const list = pp.byName(app, profile);

  function find(query) {
    const test = pp.matcher(query);
    const found = timeline.search(test), rows = tree.search(test);
    list.search(test);
    search.count.classList.toggle("some", !!test);
    search.count.textContent = !test ? "" :
      found.stages + " stage" + (found.stages === 1 ? "" : "s") +
      (timeline.timelines.length ? ", " + found.tasks + " device task" +
                                   (found.tasks === 1 ? "" : "s") : "") +
      " match (" + rows + " tree row" + (rows === 1 ? "" : "s") + ")";
  }

  // Per run and core: tasks, busy time (their summed durations) and its share of the run, as the
  // text summary prints under `execute`.
  function deviceTable(timelines) {
    pp.heading(app, "Device cores");
    const table = app.appendChild(pp.el("table", "device-table"));
    table.id = "device";
    const head = pp.el("tr");
    ["run", "core", "tasks", "busy", "of the run"].forEach(function (h) {
      head.appendChild(pp.el("th", "", h));
    });
    table.appendChild(pp.el("thead")).appendChild(head);
    const body = table.appendChild(pp.el("tbody"));
    timelines.forEach(function (tl, run) {
      const f = {};
      (tl.task_fields || []).forEach(function (name, i) { f[name] = i; });
      const busy = [], count = [];
      for (let c = 0; c < tl.cores; c++) { busy.push(0); count.push(0); }
      (tl.tasks || []).forEach(function (t) {
        const c = t[f.core];
        if (c < 0 || c >= tl.cores) return;
        busy[c] += t[f.end] - t[f.start];
        count[c]++;
      });
      const length = tl.end - tl.begin;
      busy.forEach(function (b, c) {
        const tr = body.appendChild(pp.el("tr"));
        [c === 0 ? "run " + (run + 1) + " (" + pp.dur(length) + ")" : "", "core " + c,
         String(count[c]), pp.dur(b), pp.percent(b, length)].forEach(function (text) {
          tr.appendChild(pp.el("td", "", text));
        });
      });
    });
  }

  document.body.setAttribute("data-ready", "report");
})();
