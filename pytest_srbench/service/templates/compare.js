// Compare iterations: a baseline, candidates, the paired result, charts and exports.
(function () {
  "use strict";
  var select = document.getElementById("baseline");
  var allowMixed = document.getElementById("allow-mixed");
  var box = document.getElementById("candidates");
  var error = document.getElementById("error");
  var runs = [];
  var params = new URLSearchParams(window.location.search);
  var wanted = { baseline: params.get("baseline") || "", candidates: params.getAll("candidate") };
  allowMixed.checked = params.get("allow_mixed_sources") === "true";
  var generation = 0;

  function label(run) {
    return run.id + " — " + run.name + " · " + run.profile + " · " + SR.time(run.created_at);
  }
  function chosen() {
    return Array.prototype.slice.call(box.querySelectorAll("input[name='candidate']:checked"))
      .map(function (input) { return input.value; });
  }
  function selection() {
    var params = { baseline: select.value, candidate: chosen() };
    if (allowMixed.checked) { params.allow_mixed_sources = "true"; }
    return params;
  }
  function remember() {
    var text = SR.query(selection());
    window.history.replaceState(null, "", text ? "?" + text : window.location.pathname);
  }
  function drawCandidates() {
    var keep = chosen().length ? chosen() : wanted.candidates;
    SR.clear(box);
    runs.forEach(function (run) {
      if (run.id === select.value) { return; }
      var labelNode = document.createElement("label");
      var input = document.createElement("input");
      input.type = "checkbox";
      input.name = "candidate";
      input.value = run.id;
      input.checked = keep.indexOf(run.id) >= 0;
      labelNode.appendChild(input);
      labelNode.appendChild(document.createTextNode(" " + label(run)));
      box.appendChild(labelNode);
    });
    if (!box.firstChild) { box.appendChild(SR.el("span", "No other completed run.", "note")); }
  }
  function pct(value) { return value === null || value === undefined ? "—" : (value >= 0 ? "+" : "") + value.toFixed(1) + "%"; }
  function signed(value) { return value === null || value === undefined ? "—" : (value >= 0 ? "+" : "") + value.toFixed(3); }
  // A comparison across different data is allowed only on request, and then said loudly.
  function drawMixed(result) {
    var node = document.getElementById("mixed");
    var warnings = (result.candidates || []).map(function (c) {
      return c.data_sources && c.data_sources.warning ? c.candidate_run_id + ": " + c.data_sources.warning : null;
    }).filter(function (line) { return line; });
    node.textContent = warnings.join("\n");
    node.hidden = !warnings.length;
  }
  function drawResult(result) {
    drawMixed(result);
    var tbody = SR.clear(document.querySelector("#comparison tbody"));
    (result.candidates || []).forEach(function (c) {
      (c.comparisons || []).forEach(function (row) {
        var stats = row.paired_statistics || {};
        var tr = document.createElement("tr");
        tr.setAttribute("data-candidate", c.candidate_run_id);
        tr.setAttribute("data-target", row.candidate_target_id);
        SR.cell(tr, null, null, "run").appendChild(SR.link("/runs/" + encodeURIComponent(c.candidate_run_id), c.candidate_run_id));
        SR.cell(tr, row.candidate_target_id, null, "target");
        SR.cell(tr, c.baseline_selected_target_id, null, "baseline-target");
        SR.cell(tr, signed(row.quality_delta), "num", "delta");
        SR.cell(tr, SR.interval(stats.stratified_newcombe_ci95), null, "newcombe");
        SR.cell(tr, SR.interval(row.quality_delta_ci95), null, "hoeffding");
        SR.cell(tr, row.wins + " / " + row.losses + " / " + row.ties, "num", "wlt");
        SR.cell(tr, SR.num(stats.mcnemar_exact_p), "num", "mcnemar");
        SR.cell(tr, pct(row.subject_cost_saving_percent), "num", "subject-saving");
        SR.cell(tr, pct(row.total_cost_saving_percent), "num", "total-saving");
        tbody.appendChild(tr);
      });
    });
  }
  function compare() {
    remember();
    var baseline = select.value;
    var candidates = chosen();
    var section = document.getElementById("result");
    generation += 1;
    var mine = generation;
    if (!baseline || !candidates.length) {
      section.hidden = true;
      SR.hideError(error);
      return Promise.resolve();
    }
    var q = SR.query(selection());
    return SR.api("/api/compare?" + q + "&format=json").then(function (result) {
      if (mine !== generation) { return; }
      SR.hideError(error);
      drawResult(result);
      var name = "compare-" + baseline.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 80);
      var csv = document.getElementById("export-csv");
      var json = document.getElementById("export-json");
      csv.setAttribute("href", "/api/compare?" + q + "&format=csv");
      csv.setAttribute("download", name + ".csv");
      json.setAttribute("href", "/api/compare?" + q + "&format=json");
      json.setAttribute("download", name + ".json");
      document.getElementById("open-report").setAttribute("href", "/compare/report.html?" + q);
      section.hidden = false;
      return SR.frame(document.getElementById("report-frame"), "/compare/report.html?" + q,
        document.getElementById("report-error"));
    }, function (e) {
      if (mine !== generation) { return; }
      section.hidden = true;
      SR.showError(error, e);
    });
  }
  function load() {
    return SR.api("/api/runs?" + SR.query({ status: "completed", limit: 500 })).then(function (data) {
      runs = data.runs || [];
      runs.forEach(function (run) {
        var option = SR.el("option", label(run));
        option.value = run.id;
        select.appendChild(option);
      });
      if (wanted.baseline) {
        if (!runs.some(function (r) { return r.id === wanted.baseline; })) {
          var option = SR.el("option", wanted.baseline + " (not a completed run)");
          option.value = wanted.baseline;
          select.appendChild(option);
        }
        select.value = wanted.baseline;
      }
      drawCandidates();
      wanted.candidates = [];
      return compare();
    });
  }
  select.addEventListener("change", function () { drawCandidates(); compare(); });
  box.addEventListener("change", compare);
  allowMixed.addEventListener("change", compare);
  SR.download(document.getElementById("export-csv"));
  SR.download(document.getElementById("export-json"));
  load().catch(function (e) { SR.showError(error, e); }).then(SR.ready);
})();
