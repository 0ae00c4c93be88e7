// Runs: the store's runs, newest first, polled every 2 s (read-only).
(function () {
  "use strict";
  var PAGE = 25;
  var form = document.getElementById("filters");
  var body = document.getElementById("runs-body");
  var info = document.getElementById("runs-info");
  var error = document.getElementById("error");
  var chosen = SR.filterForm(form, ["name", "model", "status", "mode"]);
  var filters = chosen.values;
  var offset = chosen.offset;
  var total = 0;
  function remember() {
    var state = filters();
    state.offset = offset || "";
    var text = SR.query(state);
    window.history.replaceState(null, "", text ? "?" + text : window.location.pathname);
  }
  function targets(run) {
    return (run.targets || []).map(function (t) {
      return t.id + " (" + (t.kind || "?") + " · " + (t.model || "?") + ")";
    }).join(", ");
  }
  function draw(data) {
    SR.hideError(error);
    total = data.total || 0;
    var rows = document.createDocumentFragment();
    (data.runs || []).forEach(function (run) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-run-id", run.id);
      tr.setAttribute("data-status", run.status);
      var first = SR.cell(tr, null, null, "id");
      first.appendChild(SR.link("/runs/" + encodeURIComponent(run.id), run.id));
      SR.cell(tr, run.name, null, "name");
      SR.cell(tr, null, null, "status").appendChild(SR.badge(run.status));
      SR.cell(tr, run.mode, null, "mode");
      SR.cell(tr, run.profile, null, "profile");
      SR.cell(tr, targets(run), "wrap", "targets");
      var progress = run.progress || {};
      SR.cell(tr, run.planned_cells, "num", "planned");
      SR.cell(tr, progress.completed, "num", "completed");
      SR.cell(tr, progress.failed, "num", "failed");
      SR.cell(tr, progress.running, "num", "running");
      SR.cell(tr, progress.pending, "num", "pending");
      SR.cell(tr, run.source || "—", null, "source");
      SR.cell(tr, SR.time(run.created_at), null, "created");
      SR.cell(tr, SR.time(run.updated_at), null, "updated");
      rows.appendChild(tr);
    });
    SR.clear(body).appendChild(rows);
    if (!data.runs || data.runs.length === 0) {
      var empty = document.createElement("tr");
      var td = SR.el("td", total ? "No run on this page." : "No run matches.", "note");
      td.colSpan = 14;
      empty.appendChild(td);
      body.appendChild(empty);
    }
    var last = Math.min(offset + PAGE, total);
    info.textContent = total ? (offset + 1) + "–" + last + " of " + total : "0 runs";
    document.getElementById("prev").disabled = offset === 0;
    document.getElementById("next").disabled = offset + PAGE >= total;
    SR.ready();
  }
  function load() {
    var state = filters();
    state.limit = PAGE;
    state.offset = offset;
    return SR.api("/api/runs?" + SR.query(state)).then(draw, function (e) {
      if (e.code !== "NETWORK") { SR.showError(error, e); }
      throw e;
    });
  }
  var poller = SR.poll(load, 2000);
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    offset = 0;
    remember();
    poller.now();
  });
  form.addEventListener("change", function () {
    offset = 0;
    remember();
    poller.now();
  });
  document.getElementById("prev").addEventListener("click", function () {
    offset = Math.max(0, offset - PAGE);
    remember();
    poller.now();
  });
  document.getElementById("next").addEventListener("click", function () {
    if (offset + PAGE < total) { offset += PAGE; }
    remember();
    poller.now();
  });
})();
