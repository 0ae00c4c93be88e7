// One dataset: identity, coverage, groups, and its cases 25 per page, filtered by a search,
// a benchmark and a subject (group); a case shows its prompt. Questions are text only.
(function () {
  "use strict";
  var id = document.getElementById("main").getAttribute("data-dataset-id");
  var base = "/api/datasets/" + encodeURIComponent(id);
  var error = document.getElementById("error");
  var search = document.getElementById("case-search");
  var page = 1;
  var pages = 1;
  var generation = 0;

  function pair(dl, label, value) {
    var div = document.createElement("div");
    div.appendChild(SR.el("dt", label));
    div.appendChild(SR.el("dd", value === null || value === undefined || value === "" ? "—" : value));
    dl.appendChild(div);
  }
  function coverage(tbody, map) {
    SR.clear(tbody);
    Object.keys(map || {}).forEach(function (profile) {
      var c = map[profile] || {};
      var tr = document.createElement("tr");
      tr.setAttribute("data-profile", profile);
      SR.cell(tr, profile);
      SR.cell(tr, typeof c === "number" ? c : c.needed, "num", "needed");
      SR.cell(tr, typeof c === "number" ? c : c.available, "num", "available");
      tbody.appendChild(tr);
    });
  }
  function groups(tbody, rows) {
    SR.clear(tbody);
    (rows || []).forEach(function (row) {
      var tr = document.createElement("tr");
      SR.cell(tr, row.group);
      SR.cell(tr, row.cases, "num");
      tbody.appendChild(tr);
    });
    if (!rows || !rows.length) {
      var tr = document.createElement("tr");
      SR.cell(tr, "no groups", "note");
      SR.cell(tr, "");
      tbody.appendChild(tr);
    }
  }
  // the filter's choices: the dataset's own benchmarks and groups, with their case counts
  function choices(select, rows, key) {
    (rows || []).forEach(function (row) {
      var option = SR.el("option", row[key] + " (" + row.cases + ")");
      option.value = row[key];
      select.appendChild(option);
    });
    select.disabled = !rows || !rows.length;
  }
  function loadDetail() {
    return SR.api(base).then(function (d) {
      var dl = document.getElementById("identity");
      pair(dl, "kind", d.kind);
      pair(dl, "benchmark", d.benchmark);
      pair(dl, "version", d.version);
      pair(dl, "data", d.data);
      pair(dl, "source", d.source);
      pair(dl, "cases", d.cases);
      pair(dl, "location", d.location);
      coverage(document.querySelector("#coverage tbody"), d.coverage || d.profiles);
      // Create evaluation with this benchmark chosen, under the first profile that has cases
      var profile = ["smoke", "quick", "standard"].filter(function (p) { return (d.profiles || {})[p] > 0; })[0];
      var evaluate = document.getElementById("evaluate");
      if (profile) { evaluate.setAttribute("href", "/new?" + SR.query({ profile: profile, benchmark: d.benchmark })); }
      evaluate.hidden = !profile;
      document.getElementById("evaluate-note").hidden = !!profile;
      groups(document.querySelector("#groups tbody"), d.groups);
      choices(document.getElementById("case-benchmark"), d.benchmarks, "benchmark");
      choices(document.getElementById("case-group"), d.groups, "group");
    });
  }
  function open(row) {
    document.getElementById("case-id").textContent = row.id;
    document.getElementById("case-prompt").textContent = row.prompt === null || row.prompt === undefined ? "(no prompt)" : String(row.prompt);
    document.getElementById("case").hidden = false;
  }
  function loadCases() {
    var q = search.elements.namedItem("q").value.trim();
    var params = { page: page, q: q };
    ["benchmark", "group"].forEach(function (name) {
      var value = search.elements.namedItem(name).value;
      if (value) { params[name] = value; }
    });
    generation += 1;
    var mine = generation;
    return SR.api(base + "/cases?" + SR.query(params)).then(function (data) {
      if (mine !== generation) { return; }
      SR.hideError(error);
      pages = data.pages || 1;
      var tbody = SR.clear(document.querySelector("#cases tbody"));
      (data.cases || []).forEach(function (row) {
        var tr = document.createElement("tr");
        tr.setAttribute("data-case", row.id);
        var first = SR.cell(tr, null, null, "id");
        var button = SR.el("button", row.id, "link");
        button.type = "button";
        button.addEventListener("click", function () { open(row); });
        first.appendChild(button);
        SR.cell(tr, row.benchmark, null, "benchmark");
        SR.cell(tr, row.group, null, "group");
        SR.cell(tr, (row.tags || []).join(", "), null, "tags");
        SR.cell(tr, SR.short(row.prompt || "", 90), "clip", "prompt");
        tbody.appendChild(tr);
      });
      document.getElementById("cases-info").textContent = (data.total || 0) + " cases · page " + (data.page || page) + " of " + pages;
      document.getElementById("prev").disabled = page <= 1;
      document.getElementById("next").disabled = page >= pages;
    });
  }
  function first() { page = 1; loadCases().catch(function (e) { SR.showError(error, e); }); }
  search.addEventListener("submit", function (event) { event.preventDefault(); first(); });
  document.getElementById("case-benchmark").addEventListener("change", first);
  document.getElementById("case-group").addEventListener("change", first);
  document.getElementById("prev").addEventListener("click", function () { page = Math.max(1, page - 1); loadCases().catch(function (e) { SR.showError(error, e); }); });
  document.getElementById("next").addEventListener("click", function () { page = Math.min(pages, page + 1); loadCases().catch(function (e) { SR.showError(error, e); }); });
  document.getElementById("case-close").addEventListener("click", function () { document.getElementById("case").hidden = true; });
  Promise.all([loadDetail(), loadCases()]).catch(function (e) { SR.showError(error, e); }).then(SR.ready);
})();
