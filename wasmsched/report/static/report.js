/* The page of `wasmsched simulate --report` and `wasmsched compare --report`: it reads the JSON document
   inlined in #report-data (wasmsched/report/data.py, compare.py) and draws it with ECharts and Tabulator.
   Views are drawn when first shown: a chart needs its container's size. */
"use strict";
(function () {
  const DOC = JSON.parse(document.getElementById("report-data").textContent);
  const COMPARE = DOC.format === "wasmsched.compare/v1";
  const RUNS = COMPARE ? DOC.runs.map((r) => r.report) : [DOC];
  const LABELS = COMPARE ? DOC.runs.map((r) => r.label) : [""];
  const PHASE_COLORS = { Scheduled: "#1a7f37", Unschedulable: "#c62828", Error: "#8e0000", Preempted: "#e69500",
                         Running: "#2f6fdf", Ignored: "#9e9e9e" };
  // More nodes than this: utilization as heatmaps (one cell per node) instead of bars.
  const BAR_NODES = 60;
  const charts = [];

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }
  // `size`: a class (small, tall) or, for a bar chart of n categories, the height in pixels.
  function chart(container, option, size) {
    const div = el("div", { class: "chart" + (typeof size === "string" ? " " + size : "") });
    if (typeof size === "number") div.style.height = size + "px";
    container.append(div);
    const c = echarts.init(div, null, { renderer: "canvas" });
    c.setOption(Object.assign({ animation: false }, option));
    charts.push(c);
    return c;
  }
  window.addEventListener("resize", () => charts.forEach((c) => c.resize()));
  const fmt = (x, d) => Number(x).toLocaleString("en-US", { maximumFractionDigits: d === undefined ? 1 : d });
  function fmtRes(res, v) {
    if (res === "cpu") return fmt(v / 1000, 2) + " cores";
    if (res === "memory" || res === "ephemeral-storage") return fmt(v / 2 ** 30, 1) + " GiB";
    return fmt(v, 0);
  }
  function table(headers, rows, numeric) {
    const t = el("table", { class: "plain" });
    t.append(el("tr", {}, ...headers.map((h, i) => el("th", { class: numeric && numeric[i] ? "num" : "", text: h }))));
    for (const r of rows) {
      t.append(el("tr", {}, ...r.map((c, i) => {
        const td = el("td", { class: numeric && numeric[i] ? "num" : "" });
        td.append(c instanceof Node ? c : document.createTextNode(String(c)));
        return td;
      })));
    }
    return t;
  }
  const S = (doc, i) => doc.strings[i];
  function utilization(doc, res) {
    const a = doc.nodes.allocatable[res], q = doc.nodes.requested[res];
    return a.map((x, i) => (x > 0 ? (100 * q[i]) / x : 0));
  }
  function columnsFor(runs, render) {
    const cols = el("div", { class: runs.length > 1 ? "cols" : "" });
    runs.forEach((doc, i) => {
      const col = el("div", {});
      if (runs.length > 1) col.append(el("h2", { text: LABELS[i] }));
      render(doc, col, i);
      cols.append(col);
    });
    return cols;
  }

  // ----- Summary ------------------------------------------------------------------------------------------
  function summaryView(doc, c, run) {
    const s = doc.summary;
    const phases = Object.keys(PHASE_COLORS).filter((p) => s[p] !== undefined);
    const cards = el("div", { class: "cards" });
    cards.append(card(s.pods, "pods", "pods"), card(s.nodes, "nodes", "nodes"));
    for (const p of phases) cards.append(card(s[p], p, p, "phase-" + p));
    cards.append(card(fmt(s.seconds, 2) + " s", "run time", "seconds"));
    c.append(cards);
    if (s.pods > 0) {
      chart(c, {
        tooltip: { trigger: "item" },
        series: [{ type: "pie", radius: ["40%", "70%"], label: { formatter: "{b}: {c}" },
                   data: phases.map((p) => ({ name: p, value: s[p], itemStyle: { color: PHASE_COLORS[p] } })) }],
      }, "small");
    }
    for (const prof of doc.profiles) {
      const panel = el("div", { class: "panel" }, el("h3", { text: `Profile ${prof.schedulerName}` }));
      panel.append(table(["Extension point", "Plugins (score weight)"], Object.entries(prof.extensionPoints).map(
        ([point, names]) => [point, names.map((n) => (point === "score" ? `${n} (${prof.weights[n] ?? 1})` : n)
          + (prof.wasm.includes(n) ? " [wasm]" : "")).join(", ")])));
      c.append(panel);
    }
    const wasm = Object.entries(doc.wasm || {});
    if (wasm.length) {
      const keys = [...new Set(wasm.flatMap(([, v]) => Object.keys(v)))];
      c.append(el("div", { class: "panel" }, el("h3", { text: "wasm plugins: instance pools" }),
        table(["Plugin", ...keys], wasm.map(([n, v]) => [n, ...keys.map((k) => fmt(v[k] ?? 0, 0))]),
              [false, ...keys.map(() => true)])));
    }
    if (doc.config) c.append(el("p", { class: "note", text: `Configuration: ${doc.config}` }));
    else c.append(el("p", { class: "note", text: "Configuration: kube-scheduler's default profile" }));
    for (const n of doc.notes) c.append(el("p", { class: "note", text: n }));
    function card(n, label, key, cls) {
      return el("div", { class: "card" }, el("div", { class: "n " + (cls || ""), "data-count": key, "data-run": run,
                                                        text: String(n) }), el("div", { class: "l", text: label }));
    }
  }

  // ----- Cluster ------------------------------------------------------------------------------------------
  function clusterView(doc, c) {
    const names = doc.nodes.names, resources = doc.nodes.resources;
    if (!names.length) { c.append(el("p", { class: "muted", text: "No nodes." })); return; }
    c.append(el("p", { class: "note", text: "Requested resources as a share of each node's allocatable, after "
      + "the run (the scheduler's view: running and bound pods' requests)." }));
    if (names.length <= BAR_NODES) {
      chart(c, {
        tooltip: { trigger: "axis", valueFormatter: (v) => fmt(v) + " %" },
        legend: {}, grid: { left: 50, right: 20, bottom: 90 },
        xAxis: { type: "category", data: names, axisLabel: { rotate: 45 } },
        yAxis: { type: "value", max: 100, name: "% requested" },
        series: resources.map((r) => ({ type: "bar", name: r, data: utilization(doc, r) })),
      }, "tall");
    } else {
      const grid = el("div", { class: "cols" });
      c.append(grid);
      for (const r of resources) heatmap(doc, grid, r);
    }
    const hist = el("div", { class: "panel" }, el("h3", { text: "Nodes by utilization" }));
    c.append(hist);
    const bins = 20;
    chart(hist, {
      tooltip: { trigger: "axis" }, legend: {}, grid: { left: 50, right: 20 },
      xAxis: { type: "category", name: "% requested", data: [...Array(bins).keys()].map((i) => `${i * 5}–${i * 5 + 5}`) },
      yAxis: { type: "value", name: "nodes" },
      series: resources.map((r) => {
        const counts = new Array(bins).fill(0);
        for (const u of utilization(doc, r)) counts[Math.min(bins - 1, Math.floor(u / (100 / bins)))]++;
        return { type: "bar", name: r, data: counts };
      }),
    });
    const zones = [...new Set(doc.nodes.zones)].filter((z) => z);
    if (zones.length) {
      const rows = zones.map((z) => {
        const idx = doc.nodes.zones.map((zz, i) => (zz === z ? i : -1)).filter((i) => i >= 0);
        return [z, idx.length, ...resources.map((r) => {
          let a = 0, q = 0;
          for (const i of idx) { a += doc.nodes.allocatable[r][i]; q += doc.nodes.requested[r][i]; }
          return a ? fmt((100 * q) / a) + " %" : "-";
        })];
      });
      c.append(el("div", { class: "panel" }, el("h3", { text: "Zones" }),
        table(["Zone", "Nodes", ...resources.map((r) => r + " requested")], rows, [false, true, ...resources.map(() => true)])));
    }
  }
  function heatmap(doc, container, res) {
    const names = doc.nodes.names, u = utilization(doc, res);
    const width = Math.ceil(Math.sqrt(names.length * 2));
    const data = u.map((v, i) => [i % width, Math.floor(i / width), Math.round(v * 10) / 10]);
    const panel = el("div", { class: "panel" }, el("h3", { text: `${res}: % requested per node (${names.length} nodes)` }));
    container.append(panel);
    chart(panel, {
      tooltip: { formatter: (p) => {
        const i = p.data[1] * width + p.data[0];
        return `${names[i]}${doc.nodes.zones[i] ? " (" + doc.nodes.zones[i] + ")" : ""}<br>${res}: `
          + `${fmtRes(res, doc.nodes.requested[res][i])} of ${fmtRes(res, doc.nodes.allocatable[res][i])} (${fmt(p.data[2])} %)`;
      } },
      grid: { left: 10, right: 10, top: 10, bottom: 40 },
      xAxis: { type: "category", show: false, data: [...Array(width).keys()] },
      yAxis: { type: "category", show: false, inverse: true, data: [...Array(Math.ceil(names.length / width)).keys()] },
      visualMap: { min: 0, max: 100, orient: "horizontal", left: "center", bottom: 0, calculable: true,
                   inRange: { color: ["#e8f1fb", "#6aa2e8", "#f2b134", "#c62828"] } },
      series: [{ type: "heatmap", data, progressive: 0 }],
    });
  }

  // ----- Pods ---------------------------------------------------------------------------------------------
  function podRows(doc) {
    const p = doc.pods, rows = new Array(p.name.length);
    for (let i = 0; i < rows.length; i++) {
      rows[i] = { i, namespace: S(doc, p.namespace[i]), name: p.name[i], phase: S(doc, p.phase[i]),
                  node: p.node[i] >= 0 ? doc.nodes.names[p.node[i]] : "", attempts: p.attempts[i],
                  message: S(doc, p.message[i]).split("\n")[0] };
    }
    return rows;
  }
  function podsView(doc, c, run) {
    const search = el("input", { type: "search", placeholder: "Search pods by name", class: "pod-search",
                                 id: run ? `pod-search-${run}` : "pod-search", "aria-label": "Search pods by name" });
    const count = el("span", { class: "muted" });
    c.append(el("div", { class: "toolbar" }, search, count));
    const holder = el("div", {});
    const detail = el("div", { class: "pod-detail panel", id: run ? `pod-detail-${run}` : "pod-detail" });
    c.append(holder, detail);
    const rows = podRows(doc);
    const t = new Tabulator(holder, {
      data: rows, index: "i", maxHeight: "55vh", layout: "fitColumns", selectableRows: 1,
      columns: [
        { title: "Namespace", field: "namespace", width: 130, headerFilter: "list",
          headerFilterParams: { valuesLookup: true, clearable: true } },
        { title: "Name", field: "name", minWidth: 180 },
        { title: "Phase", field: "phase", width: 130, headerFilter: "list",
          headerFilterParams: { valuesLookup: true, clearable: true },
          formatter: (cell) => `<span class="phase-${cell.getValue()}">${cell.getValue()}</span>` },
        { title: "Node", field: "node", width: 150, headerFilter: "input" },
        { title: "Attempts", field: "attempts", width: 90, hozAlign: "right" },
        { title: "Message", field: "message", minWidth: 200, formatter: "plaintext", tooltip: true },
      ],
    });
    const show = (i) => podDetail(doc, detail, i);
    t.on("rowClick", (e, row) => show(row.getData().i));
    t.on("dataFiltered", (filters, shown) => {
      count.textContent = `${shown.length} of ${rows.length} pods`;
      if (shown.length === 1) show(shown[0].getData().i);
    });
    t.on("tableBuilt", () => { count.textContent = `${rows.length} pods`; });
    search.addEventListener("input", () => {
      const q = search.value.trim().toLowerCase();
      if (!q) t.clearFilter(); else t.setFilter((d) => d.name.toLowerCase().includes(q) || `${d.namespace}/${d.name}`.toLowerCase() === q);
    });
    const first = rows.findIndex((r) => r.phase === "Unschedulable" || r.phase === "Error");
    if (first >= 0) show(first);
  }
  function podDetail(doc, c, i) {
    const p = doc.pods, ex = p.explain[i];
    const phase = S(doc, p.phase[i]);
    c.replaceChildren();
    c.append(el("h2", { text: `${S(doc, p.namespace[i])}/${p.name[i]}` }));
    const node = p.node[i] >= 0 ? doc.nodes.names[p.node[i]] : null;
    const nominated = p.nominated[i] >= 0 ? doc.nodes.names[p.nominated[i]] : null;
    c.append(el("p", {}, el("span", { class: "phase-" + phase, text: phase }),
      node ? ` on ${node}` : "", nominated ? ` (nominated ${nominated})` : "", ` after ${p.attempts[i]} attempt(s)`));
    const msg = S(doc, p.message[i]);
    if (msg) c.append(el("pre", { class: "message", text: msg }));
    if (ex) {
      if (ex.preFilter) {
        c.append(el("p", { text: `PreFilter: ${S(doc, ex.preFilter[0]) || "-"} ${S(doc, ex.preFilter[1])}: ${S(doc, ex.preFilter[2])}` }));
      }
      const total = ex.passed + ex.notEvaluated + ex.filter.reduce((a, g) => a + g[0], 0);
      c.append(el("h3", { text: "Filter" }), el("p", { class: "muted", text: ex.nominatedFastPath
        ? "The nominated node passed and was taken without evaluating the others."
        : `${ex.passed} of ${total} nodes passed` + (ex.notEvaluated ? `, ${ex.notEvaluated} not evaluated `
          + "(enough feasible nodes were found first: percentageOfNodesToScore)" : "") }));
      if (ex.filter.length) {
        const ft = table(["Nodes", "Plugin", "Code", "Reason", "Examples"], ex.filter.map((g) => [
          g[0], S(doc, g[1]) || "-", S(doc, g[2]), S(doc, g[3]),
          g[4].map((n) => doc.nodes.names[n] ?? "?").join(", ") + (g[0] > g[4].length ? `, and ${g[0] - g[4].length} more` : "")]),
          [true, false, false, false, false]);
        ft.classList.add("filter-table");
        c.append(ft);
      }
      const sc = ex.scores;
      if (sc.nodes.length) {
        c.append(el("h3", { text: `Score: the ${sc.nodes.length} best nodes (weighted)` }));
        const nodeNames = sc.nodes.map((n) => doc.nodes.names[n]);
        chart(c, {
          tooltip: { trigger: "axis", axisPointer: { type: "shadow" } }, legend: { type: "scroll" },
          grid: { left: 120, right: 30, top: 40 },
          yAxis: { type: "category", data: nodeNames, inverse: true },
          xAxis: { type: "value", name: "score" },
          series: sc.plugins.map((pl, j) => ({ type: "bar", stack: "total", name: S(doc, pl),
                                               data: sc.values.map((v) => v[j]) })),
        }, "small");
        const st = table(["Plugin", ...nodeNames], [
          ...sc.plugins.map((pl, j) => [S(doc, pl), ...sc.values.map((v) => v[j])]),
          ["TOTAL", ...sc.totals]], [false, ...nodeNames.map(() => true)]);
        st.classList.add("score-table");
        c.append(st);
      } else if (ex.passed === 1) {
        c.append(el("p", { class: "muted", text: "One feasible node: not scored." }));
      }
    }
    const victims = p.victims[i];
    if (victims.length) c.append(el("h3", { text: "Preemption victims" }), el("p", { text: victims.join(", ") }));
    const events = p.events[i];
    if (events.length) {
      c.append(el("h3", { text: "Events" }), table(["Type", "Reason", "Message"],
        events.map((e) => [S(doc, e[0]), S(doc, e[1]), S(doc, e[2])])));
    }
  }

  // ----- Plugins ------------------------------------------------------------------------------------------
  function pluginsView(doc, c) {
    const pl = doc.plugins;
    if (pl.extensionPoints.length) {
      const p1 = el("div", { class: "panel" }, el("h3", { text: "Time per extension point (all plugins)" }));
      c.append(p1);
      chart(p1, {
        tooltip: { trigger: "axis", valueFormatter: (v) => fmt(v * 1000, 2) + " ms" },
        grid: { left: 100, right: 30 },
        yAxis: { type: "category", inverse: true, data: pl.extensionPoints.map((r) => r.extension_point) },
        xAxis: { type: "value", name: "seconds" },
        series: [{ type: "bar", data: pl.extensionPoints.map((r) => r.seconds) }],
      }, barsHeight(pl.extensionPoints.length));
    }
    if (pl.time.length) {
      const plugins = [...new Set(pl.time.map((r) => r.plugin))];
      const points = [...new Set(pl.time.map((r) => r.extension_point))];
      const p2 = el("div", { class: "panel" }, el("h3", { text: "Time per plugin and extension point" }));
      c.append(p2);
      chart(p2, {
        tooltip: { trigger: "axis", axisPointer: { type: "shadow" }, valueFormatter: (v) => fmt(v * 1000, 2) + " ms" },
        legend: { type: "scroll" }, grid: { left: 190, right: 30, top: 40 },
        yAxis: { type: "category", inverse: true, data: plugins },
        xAxis: { type: "value", name: "seconds" },
        series: points.map((pt) => ({ type: "bar", stack: "t", name: pt, data: plugins.map((n) =>
          (pl.time.find((r) => r.plugin === n && r.extension_point === pt) || { seconds: 0 }).seconds) })),
      }, barsHeight(plugins.length) + 40);
      const tt = table(["Plugin", "Extension point", "Calls", "Total ms", "µs per call"], pl.time.map((r) => [
        r.plugin, r.extension_point, fmt(r.count, 0), fmt(r.seconds * 1000, 2),
        r.count ? fmt((r.seconds * 1e6) / r.count, 1) : "-"]), [false, false, true, true, true]);
      tt.classList.add("plugin-time-table");
      p2.append(tt);
    } else {
      c.append(el("p", { class: "muted", text: "No plugin times: metrics were off." }));
    }
    const rej = Object.entries(pl.rejected);
    const p3 = el("div", { class: "panel" }, el("h3", { text: "Nodes rejected by each Filter plugin (pods' last attempts)" }));
    c.append(p3);
    if (rej.length) {
      chart(p3, {
        tooltip: { trigger: "axis" }, grid: { left: 190, right: 30 },
        yAxis: { type: "category", inverse: true, data: rej.map((r) => r[0]) },
        xAxis: { type: "value", name: "nodes" },
        series: [{ type: "bar", data: rej.map((r) => r[1]), itemStyle: { color: "#c62828" } }],
      }, barsHeight(rej.length));
    } else {
      p3.append(el("p", { class: "muted", text: "No node was rejected." }));
    }
    const scores = Object.entries(pl.scores);
    if (scores.length) {
      const p4 = el("div", { class: "panel" }, el("h3", { text: "Score distributions (weighted, the best nodes of each pod)" }));
      const grid = el("div", { class: "cols" });
      p4.append(grid);
      c.append(p4);
      for (const [name, hist] of scores) {
        const box = el("div", {}, el("h3", { text: name }));
        grid.append(box);
        chart(box, {
          tooltip: { trigger: "axis" }, grid: { left: 50, right: 10, top: 10, bottom: 30 },
          xAxis: { type: "value", name: "score" }, yAxis: { type: "value" },
          series: [{ type: "bar", data: hist, barMaxWidth: 12 }],
        }, "small");
      }
    }
  }

  // ----- Compare ------------------------------------------------------------------------------------------
  function changesView(c) {
    const d = DOC.diff;
    const [a, b] = LABELS;
    c.append(el("p", {}, `${a}: ${DOC.runs[0].config || "default profile"}; ${b}: ${DOC.runs[1].config || "default profile"}.`));
    c.append(el("div", { class: "panel" }, el("h3", { text: "Pods by phase" }),
      table(["Phase", a, b, "Change"], Object.entries(d.phases).map(([ph, [x, y]]) => [ph, x, y, signed(y - x)]),
            [false, true, true, true])));
    const moved = el("div", { class: "panel" }, el("h3", { text: `Pods that moved: ${d.moved.length}` }));
    c.append(moved);
    if (d.moved.length) {
      const holder = el("div", { id: "moved-table" });
      moved.append(holder);
      new Tabulator(holder, {
        data: d.moved.map((m) => ({ pod: m[0], from: m[1], to: m[2] })), height: d.moved.length > 12 ? "40vh" : false,
        layout: "fitColumns",
        columns: [{ title: "Pod", field: "pod", headerFilter: "input" }, { title: `Node (${a})`, field: "from" },
                  { title: `Node (${b})`, field: "to" }],
      });
    }
    for (const [key, title, cols] of [["newlyUnschedulable", "Newly not scheduled", ["Pod", `Node (${a})`, `Phase (${b})`, `Message (${b})`]],
                                      ["newlyPlaced", "Newly scheduled", ["Pod", `Phase (${a})`, `Node (${b})`]]]) {
      const rows = d[key];
      const p = el("div", { class: "panel" }, el("h3", { text: `${title}: ${rows.length}` }));
      if (rows.length) p.append(table(cols, rows.slice(0, 500)));
      if (rows.length > 500) p.append(el("p", { class: "note", text: `The first 500 of ${rows.length}; all are in -o json.` }));
      c.append(p);
    }
    const bal = el("div", { class: "panel" }, el("h3", { text: "Balance: spread of utilization across nodes" }));
    bal.append(table(["Resource", "Mean " + a, "Mean " + b, "Std dev " + a, "Std dev " + b, "Max " + a, "Max " + b],
      Object.entries(d.balance.nodes).map(([r, v]) => [r, pct(v[0].mean), pct(v[1].mean), pct(v[0].stddev),
        pct(v[1].stddev), pct(v[0].max), pct(v[1].max)]), [false, true, true, true, true, true, true]));
    const zones = Object.entries(d.balance.zones);
    if (zones.length) {
      bal.append(el("h3", { text: "Per zone (% requested)" }), table(["Zone", "Resource", a, b, "Change"],
        zones.flatMap(([z, res]) => Object.entries(res).map(([r, [x, y]]) => [z, r, pct(x), pct(y), signed(y - x, " pt")])),
        [false, false, true, true, true]));
    }
    c.append(bal);
    const util = el("div", { class: "panel" }, el("h3", { text: "Per-node utilization change (percentage points)" }));
    c.append(util);
    const changed = d.nodes.names.map((n, i) => [n, ...d.nodes.resources.map((r) => d.nodes.change[r][i])])
      .filter((row) => row.slice(1).some((v) => Math.abs(v) >= 0.05));
    if (changed.length) {
      chart(util, {
        tooltip: { trigger: "axis" }, legend: {}, grid: { left: 50, right: 20, bottom: 90 },
        dataZoom: changed.length > BAR_NODES ? [{ type: "slider" }] : undefined,
        xAxis: { type: "category", data: changed.map((r) => r[0]), axisLabel: { rotate: 45 } },
        yAxis: { type: "value", name: "pt" },
        series: d.nodes.resources.map((r, j) => ({ type: "bar", name: r, data: changed.map((row) => row[j + 1]) })),
      }, "tall");
    } else {
      util.append(el("p", { class: "muted", text: "No node's utilization changed." }));
    }
    const pt = el("div", { class: "panel" }, el("h3", { text: "Plugin time change" }));
    pt.append(table(["Plugin", "Extension point", `ms (${a})`, `ms (${b})`, "Change"], d.pluginTime.map((r) => [
      r.plugin, r.extension_point, fmt(r.seconds[0] * 1000, 2), fmt(r.seconds[1] * 1000, 2),
      signed((r.seconds[1] - r.seconds[0]) * 1000, " ms")]), [false, false, true, true, true]));
    c.append(pt);
  }
  const pct = (v) => fmt(v, 1) + " %";
  const barsHeight = (n) => Math.max(160, 26 * n + 80);
  function signed(v, unit) {
    const s = (v > 0 ? "+" : "") + fmt(v, 2) + (unit || "");
    return el("span", { class: v > 0 ? "up" : v < 0 ? "down" : "", text: s });
  }

  // ----- Tabs ---------------------------------------------------------------------------------------------
  const views = [];
  if (COMPARE) views.push(["changes", "Changes", (c) => changesView(c)]);
  views.push(["summary", "Summary", (c) => c.append(columnsFor(RUNS, summaryView))],
             ["cluster", "Cluster", (c) => c.append(columnsFor(RUNS, clusterView))],
             ["pods", "Pods", (c) => c.append(columnsFor(RUNS, podsView))],
             ["plugins", "Plugins", (c) => c.append(columnsFor(RUNS, pluginsView))]);
  const main = document.getElementById("main"), nav = document.getElementById("tabs");
  main.replaceChildren();
  const sections = {}, drawn = {};
  function showView(id) {
    for (const [vid] of views) {
      sections[vid].classList.toggle("active", vid === id);
      nav.querySelector(`[data-view=${vid}]`).classList.toggle("active", vid === id);
    }
    if (!drawn[id]) { drawn[id] = true; views.find((v) => v[0] === id)[2](sections[id]); }
    charts.forEach((c) => c.resize());
    document.body.dataset.view = id;
  }
  for (const [id, title] of views) {
    sections[id] = el("section", { class: "view", id: "view-" + id });
    main.append(sections[id]);
    nav.append(el("button", { "data-view": id, text: title, onclick: () => { location.hash = id; showView(id); } }));
  }
  const start = location.hash.slice(1);
  showView(views.some((v) => v[0] === start) ? start : views[0][0]);
  document.body.dataset.ready = "1";
  window.wasmschedReport = { showView };
})();
