// pytest-srbench report: the case table (filter, sort, pages) and the case drill-down.
// Model output is untrusted: every text goes in through textContent, never innerHTML.
(function () {
  "use strict";
  var blob = document.getElementById("srbench-data");
  if (!blob) { return; }
  // the case table's targets, benchmarks and columns; its rows and drill-down texts come in
  // pages (one JSON block per page of cells, written while the report was read)
  var data = JSON.parse(blob.textContent);
  data.rows = [];
  data.cases = {};
  data.cells = {};
  document.querySelectorAll("script.srbench-page").forEach(function (node) {
    var page = JSON.parse(node.textContent);
    for (var i = 0; i < page.rows.length; i += 1) { data.rows.push(page.rows[i]); }
    Object.assign(data.cases, page.cases);
    Object.assign(data.cells, page.cells);
  });
  var PAGE = 100;
  var state = { sort: -1, dir: 1, page: 0, rows: data.rows };
  var body = document.getElementById("cases-body");
  var info = document.getElementById("cases-info");
  var drill = document.getElementById("drill");
  var lastOpener = null;

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    return node;
  }
  function fmt(value, kind) {
    if (value === null || value === undefined) { return "—"; }
    if (kind === "s") { return value.toFixed(2) + "s"; }
    if (kind === "$") { return "$" + (Math.abs(value) >= 0.01 ? value.toFixed(4) : value.toFixed(6)); }
    return String(value);
  }
  function cellValue(row, column) {
    if (column === 1) { return data.targets[row[1]]; }
    if (column === 2) { return data.benchmarks[row[2]]; }
    return row[column];
  }
  function applyFilters() {
    var text = document.getElementById("f-text").value.toLowerCase();
    var target = document.getElementById("f-target").value;
    var bench = document.getElementById("f-benchmark").value;
    var outcome = document.getElementById("f-outcome").value;
    state.rows = data.rows.filter(function (row) {
      if (target !== "" && String(row[1]) !== target) { return false; }
      if (bench !== "" && String(row[2]) !== bench) { return false; }
      if (outcome !== "" && row[3] !== outcome) { return false; }
      if (text !== "") {
        var hay = (row[0] + " " + (row[4] || "") + " " + (row[7] || "")).toLowerCase();
        if (hay.indexOf(text) < 0) { return false; }
      }
      return true;
    });
    sortRows();
    state.page = 0;
    draw();
  }
  function sortRows() {
    var c = state.sort, d = state.dir;
    if (c < 0) { return; }
    state.rows.sort(function (a, b) {
      var x = cellValue(a, c), y = cellValue(b, c);
      if (x === y) { return 0; }
      if (x === null || x === undefined) { return 1; }
      if (y === null || y === undefined) { return -1; }
      return (x < y ? -1 : 1) * d;
    });
  }
  function draw() {
    var pages = Math.max(1, Math.ceil(state.rows.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    var start = state.page * PAGE;
    var frag = document.createDocumentFragment();
    state.rows.slice(start, start + PAGE).forEach(function (row) {
      var tr = el("tr");
      var first = el("td");
      var open = el("button", row[0], "open");
      open.type = "button";
      open.setAttribute("data-case", row[0]);
      open.setAttribute("aria-controls", "drill");
      first.appendChild(open);
      tr.appendChild(first);
      tr.appendChild(el("td", data.targets[row[1]]));
      tr.appendChild(el("td", data.benchmarks[row[2]]));
      tr.appendChild(el("td", row[3], "outcome-" + row[3]));
      tr.appendChild(el("td", row[4] || "—"));
      tr.appendChild(el("td", fmt(row[5], "s"), "num"));
      tr.appendChild(el("td", fmt(row[6], "$"), "num"));
      tr.appendChild(el("td", row[7] || ""));
      frag.appendChild(tr);
    });
    body.replaceChildren(frag);
    info.textContent = state.rows.length + " of " + data.rows.length + " cells · page " +
      (state.page + 1) + " of " + pages;
    document.getElementById("prev").disabled = state.page === 0;
    document.getElementById("next").disabled = state.page >= pages - 1;
    document.querySelectorAll("th[aria-sort]").forEach(function (th) {
      var index = Number(th.getAttribute("data-col"));
      th.setAttribute("aria-sort", index === state.sort ? (state.dir > 0 ? "ascending" : "descending") : "none");
    });
  }
  function receiptsTable(receipts) {
    var table = el("table");
    var head = el("tr");
    ["role", "status", "model", "input", "cached", "cache write", "output", "cost", "latency", "ttft", "finish", "error"]
      .forEach(function (h) { head.appendChild(el("th", h)); });
    table.appendChild(head);
    receipts.forEach(function (r) {
      var u = r.usage || {};
      var tr = el("tr");
      [r.role, r.status, r.selected_model || r.model, u.input_tokens, u.cached_input_tokens,
       u.cache_write_tokens, u.output_tokens, fmt(r.cost_usd, "$"), fmt(r.latency_s, "s"),
       fmt(r.ttft_s, "s"), r.finish_reason, r.error || ""].forEach(function (v) {
        tr.appendChild(el("td", v === undefined || v === null ? "—" : v));
      });
      table.appendChild(tr);
    });
    var wrap = el("div", null, "scroll");
    wrap.appendChild(table);
    return wrap;
  }
  function openCase(caseId, opener) {
    lastOpener = opener || null;
    var c = data.cases[caseId] || {};
    var parts = [];
    var title = el("h3", caseId);
    title.id = "drill-title";
    title.tabIndex = -1;
    parts.push(title);
    parts.push(el("p", "benchmark " + (c.benchmark || "—"), "note"));
    parts.push(el("h4", "Prompt"));
    parts.push(el("pre", c.prompt || "(not included in this report)"));
    parts.push(el("h4", "Reference answer"));
    parts.push(el("pre", c.reference_hidden ? "hidden: the suite does not allow showing reference answers" :
      (c.reference === null || c.reference === undefined ? "—" : c.reference)));
    data.rows.forEach(function (row) {
      if (row[0] !== caseId) { return; }
      var target = data.targets[row[1]];
      var cell = data.cells[caseId + "|" + target] || {};
      var h = el("h4", target + " — " + row[3] + (row[4] ? " (" + row[4] + ")" : ""));
      parts.push(h);
      if (row[7]) { parts.push(el("p", "error: " + row[7])); }
      parts.push(el("p", "parsed answer: " + (cell.answer === null || cell.answer === undefined ? "—" : cell.answer)));
      parts.push(el("pre", cell.final === null || cell.final === undefined ? "(no final answer)" : cell.final));
      if (cell.receipts && cell.receipts.length) { parts.push(receiptsTable(cell.receipts)); }
    });
    var close = el("button", "Close (Esc)");
    close.type = "button";
    close.addEventListener("click", closeCase);
    parts.push(close);
    drill.replaceChildren.apply(drill, parts);
    drill.hidden = false;
    title.focus();
  }
  function closeCase() {
    drill.hidden = true;
    if (lastOpener && document.body.contains(lastOpener)) { lastOpener.focus(); }
  }
  body.addEventListener("click", function (event) {
    var button = event.target.closest("button.open");
    if (button) { openCase(button.getAttribute("data-case"), button); }
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !drill.hidden) { closeCase(); }
  });
  document.querySelectorAll("th button.sort").forEach(function (button) {
    button.addEventListener("click", function () {
      var col = Number(button.parentElement.getAttribute("data-col"));
      state.dir = state.sort === col ? -state.dir : 1;
      state.sort = col;
      sortRows();
      draw();
    });
  });
  ["f-text", "f-target", "f-benchmark", "f-outcome"].forEach(function (id) {
    document.getElementById(id).addEventListener("input", applyFilters);
  });
  document.getElementById("prev").addEventListener("click", function () { state.page -= 1; draw(); });
  document.getElementById("next").addEventListener("click", function () { state.page += 1; draw(); });
  window.srbenchOpenCase = openCase;
  applyFilters();
  document.documentElement.setAttribute("data-ready", "1");
})();
