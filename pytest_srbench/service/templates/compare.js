// Compare iterations (the results guide): a live single-model baseline with compatible
// results, then any number of comparable candidates (search, Select all across pages),
// "Compare runs", the paired result (paged), charts and exports of the whole selection.
(function () {
  "use strict";
  var PAGE = 25, RESULT_PAGE = 10;
  var select = document.getElementById("baseline");
  var allowMixed = document.getElementById("allow-mixed");
  var box = document.getElementById("candidates");
  var search = document.getElementById("candidate-search");
  var error = document.getElementById("error");
  var section = document.getElementById("result");
  var stale = document.getElementById("stale");
  var button = document.getElementById("compare-runs");
  var runs = [], byId = {}, picked = [], page = 0, rows = [], resultPage = 0, generation = 0;
  var params = new URLSearchParams(window.location.search);
  var wanted = { baseline: params.get("baseline") || "", candidates: params.getAll("candidate") };
  allowMixed.checked = params.get("allow_mixed_sources") === "true";

  function label(run) {
    return run.id + " — " + run.name + " · " + run.profile + " · " + run.targets.join(", ") +
      " · " + SR.time(run.created_at);
  }
  function comparable() {  // the baseline's group, creation order (the options are oldest first)
    var base = byId[select.value];
    if (!base) { return []; }
    return runs.filter(function (run) { return run.group === base.group && run.id !== base.id; });
  }
  function matching() {
    var words = search.value.trim().toLowerCase();
    return comparable().filter(function (run) {
      return !words || (run.id + " " + run.name + " " + run.targets.join(" ")).toLowerCase().indexOf(words) >= 0;
    });
  }
  function selection() {
    var ordered = comparable().map(function (run) { return run.id; })
      .filter(function (id) { return picked.indexOf(id) >= 0; });
    var q = { baseline: select.value, candidate: ordered };
    if (allowMixed.checked) { q.allow_mixed_sources = "true"; }
    return q;
  }
  function remember() {
    var text = SR.query(selection());
    window.history.replaceState(null, "", text ? "?" + text : window.location.pathname);
  }
  function changed() {  // any change hides the old result until "Compare runs" is clicked
    generation += 1;
    remember();
    var shown = !section.hidden;
    section.hidden = true;
    SR.hideError(error);
    stale.hidden = !(shown || stale.getAttribute("data-compared") === "1");
    button.disabled = !select.value || !picked.length;
    drawCandidates();
  }
  function drawCandidates() {
    SR.clear(box);
    var all = matching();
    var pages = Math.max(1, Math.ceil(all.length / PAGE));
    page = Math.min(page, pages - 1);
    all.slice(page * PAGE, page * PAGE + PAGE).forEach(function (run) {
      var node = document.createElement("label");
      var input = document.createElement("input");
      input.type = "checkbox";
      input.name = "candidate";
      input.value = run.id;
      input.checked = picked.indexOf(run.id) >= 0;
      node.appendChild(input);
      node.appendChild(document.createTextNode(" " + label(run)));
      box.appendChild(node);
    });
    if (!select.value) { box.appendChild(SR.el("span", "choose a baseline first", "note")); }
    else if (!all.length) { box.appendChild(SR.el("span", "No comparable run matches.", "note")); }
    document.getElementById("cand-page").textContent = "page " + (page + 1) + " of " + pages;
    document.getElementById("cand-prev").disabled = page === 0;
    document.getElementById("cand-next").disabled = page >= pages - 1;
    document.getElementById("candidate-count").textContent =
      picked.length + " selected · " + all.length + " of " + comparable().length + " shown by the search";
  }
  function pct(value) { return value === null || value === undefined ? "—" : (value >= 0 ? "+" : "") + value.toFixed(1) + "%"; }
  function signed(value) { return value === null || value === undefined ? "—" : (value >= 0 ? "+" : "") + value.toFixed(3); }
  function drawMixed(result) {
    var node = document.getElementById("mixed");
    var warnings = (result.candidates || []).map(function (c) {
      return c.data_sources && c.data_sources.warning ? c.candidate_run_id + ": " + c.data_sources.warning : null;
    }).filter(function (line) { return line; });
    node.textContent = warnings.join("\n");
    node.hidden = !warnings.length;
  }
  function drawRows() {
    var tbody = SR.clear(document.querySelector("#comparison tbody"));
    var pages = Math.max(1, Math.ceil(rows.length / RESULT_PAGE));
    resultPage = Math.min(resultPage, pages - 1);
    rows.slice(resultPage * RESULT_PAGE, resultPage * RESULT_PAGE + RESULT_PAGE).forEach(function (pair) {
      var c = pair[0], row = pair[1], stats = row.paired_statistics || {};
      var tr = document.createElement("tr");
      tr.setAttribute("data-candidate", c.candidate_run_id);
      tr.setAttribute("data-target", row.candidate_target_id);
      SR.cell(tr, null, null, "run").appendChild(SR.link("/runs/" + encodeURIComponent(c.candidate_run_id), c.candidate_run_id));
      SR.cell(tr, row.candidate_target_id, null, "target");
      SR.cell(tr, c.baseline_selected_target_id, null, "baseline-target");
      SR.cell(tr, signed(row.quality_delta), "num", "delta");
      SR.cell(tr, SR.interval(stats.stratified_wald_ci95), null, "wald");
      SR.cell(tr, SR.interval(row.quality_delta_ci95), null, "hoeffding");
      SR.cell(tr, row.wins + " / " + row.losses + " / " + row.ties, "num", "wlt");
      SR.cell(tr, SR.num(stats.mcnemar_exact_p), "num", "mcnemar");
      SR.cell(tr, pct(row.subject_cost_saving_percent), "num", "subject-saving");
      SR.cell(tr, pct(row.total_cost_saving_percent), "num", "total-saving");
      tbody.appendChild(tr);
    });
    document.getElementById("result-page").textContent = "rows " + (rows.length ? resultPage * RESULT_PAGE + 1 : 0) + "–" +
      Math.min(rows.length, (resultPage + 1) * RESULT_PAGE) + " of " + rows.length;
    document.getElementById("result-prev").disabled = resultPage === 0;
    document.getElementById("result-next").disabled = resultPage >= pages - 1;
  }
  function drawResult(result) {
    drawMixed(result);
    var list = SR.clear(document.getElementById("caveat-list"));
    (result.caveats || []).forEach(function (text) { list.appendChild(SR.el("li", text)); });
    rows = [];
    (result.candidates || []).forEach(function (c) {
      (c.comparisons || []).forEach(function (row) { rows.push([c, row]); });
    });
    resultPage = 0;
    drawRows();
  }
  function compare() {
    remember();
    var chosen = selection();
    generation += 1;
    var mine = generation;
    if (!chosen.baseline || !chosen.candidate.length) { return Promise.resolve(); }
    var q = SR.query(chosen);
    button.disabled = true;
    return SR.api("/api/compare?" + q + "&format=json").then(function (result) {
      if (mine !== generation) { return; }
      SR.hideError(error);
      drawResult(result);
      var name = "compare-" + chosen.baseline.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 80);
      var csv = document.getElementById("export-csv");
      var json = document.getElementById("export-json");
      csv.setAttribute("href", "/api/compare?" + q + "&format=csv");
      csv.setAttribute("download", name + ".csv");
      json.setAttribute("href", "/api/compare?" + q + "&format=json");
      json.setAttribute("download", name + ".json");
      document.getElementById("open-report").setAttribute("href", "/compare/report.html?" + q);
      section.hidden = false;
      stale.hidden = true;
      stale.setAttribute("data-compared", "1");
      return SR.frame(document.getElementById("report-frame"), "/compare/report.html?" + q,
        document.getElementById("report-error"));
    }, function (e) {
      if (mine !== generation) { return; }
      section.hidden = true;
      SR.showError(error, e);
    }).then(function () { button.disabled = !select.value || !picked.length; });
  }
  function load() {
    return SR.api("/compare/options.json").then(function (data) {
      runs = data.runs || [];
      runs.forEach(function (run) { byId[run.id] = run; });
      (data.baselines || []).forEach(function (id) {
        var option = SR.el("option", label(byId[id]));
        option.value = id;
        select.appendChild(option);
      });
      if (wanted.baseline) {
        if ((data.baselines || []).indexOf(wanted.baseline) < 0) {
          var option = SR.el("option", wanted.baseline + " (not a baseline with compatible results)");
          option.value = wanted.baseline;
          select.appendChild(option);
        }
        select.value = wanted.baseline;
        picked = wanted.candidates.slice();
      }
      button.disabled = !select.value || !picked.length;
      drawCandidates();
      return compare();  // a bookmarked selection shows its result
    });
  }
  select.addEventListener("change", function () { picked = []; page = 0; changed(); });
  box.addEventListener("change", function (event) {
    var input = event.target;
    var at = picked.indexOf(input.value);
    if (input.checked && at < 0) { picked.push(input.value); }
    if (!input.checked && at >= 0) { picked.splice(at, 1); }
    changed();
  });
  search.addEventListener("input", function () { page = 0; drawCandidates(); });
  document.getElementById("select-all").addEventListener("click", function () {
    matching().forEach(function (run) { if (picked.indexOf(run.id) < 0) { picked.push(run.id); } });
    changed();
  });
  document.getElementById("select-none").addEventListener("click", function () { picked = []; changed(); });
  document.getElementById("cand-prev").addEventListener("click", function () { page -= 1; drawCandidates(); });
  document.getElementById("cand-next").addEventListener("click", function () { page += 1; drawCandidates(); });
  document.getElementById("result-prev").addEventListener("click", function () { resultPage -= 1; drawRows(); });
  document.getElementById("result-next").addEventListener("click", function () { resultPage += 1; drawRows(); });
  allowMixed.addEventListener("change", changed);
  button.addEventListener("click", function () { compare(); });
  SR.download(document.getElementById("export-csv"));
  SR.download(document.getElementById("export-json"));
  load().catch(function (e) { SR.showError(error, e); }).then(SR.ready);
})();
