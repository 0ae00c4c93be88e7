// Datasets: search, kind / profile filters, 25 per page.
(function () {
  "use strict";
  var PAGE = 25;
  var form = document.getElementById("filters");
  var body = document.getElementById("datasets-body");
  var info = document.getElementById("datasets-info");
  var error = document.getElementById("error");
  var chosen = SR.filterForm(form, ["q", "kind", "profile"]);
  var filters = chosen.values;
  var offset = chosen.offset;
  var total = 0;
  var generation = 0;
  function profiles(map) {
    return Object.keys(map || {}).map(function (p) { return p + " " + map[p]; }).join(" · ") || "—";
  }
  function load() {
    var state = filters();
    var text = SR.query(Object.assign({}, state, { offset: offset || "" }));
    window.history.replaceState(null, "", text ? "?" + text : window.location.pathname);
    state.limit = PAGE;
    state.offset = offset;
    generation += 1;
    var mine = generation;
    return SR.api("/api/datasets?" + SR.query(state)).then(function (data) {
      if (mine !== generation) { return; }  // a newer search answered first
      SR.hideError(error);
      total = data.total || 0;
      SR.clear(body);
      (data.datasets || []).forEach(function (d) {
        var tr = document.createElement("tr");
        tr.setAttribute("data-dataset", d.id);
        SR.cell(tr, null, null, "id").appendChild(SR.link("/datasets/" + encodeURIComponent(d.id), d.id));
        SR.cell(tr, d.kind, null, "kind");
        SR.cell(tr, d.benchmark, null, "benchmark");
        SR.cell(tr, d.version, null, "version");
        SR.cell(tr, null, null, "data").appendChild(SR.el("span", d.data, "badge " + (d.data === "released" ? "ok" : "warn")));
        SR.cell(tr, d.source, "clip", "source");
        SR.cell(tr, d.cases, "num", "cases");
        SR.cell(tr, profiles(d.profiles), null, "profiles");
        body.appendChild(tr);
      });
      info.textContent = total ? (offset + 1) + "–" + Math.min(offset + PAGE, total) + " of " + total : "No dataset matches.";
      document.getElementById("prev").disabled = offset === 0;
      document.getElementById("next").disabled = offset + PAGE >= total;
      SR.ready();
    }, function (e) { SR.showError(error, e); SR.ready(); });
  }
  form.addEventListener("submit", function (event) { event.preventDefault(); offset = 0; load(); });
  form.addEventListener("change", function () { offset = 0; load(); });
  document.getElementById("prev").addEventListener("click", function () { offset = Math.max(0, offset - PAGE); load(); });
  document.getElementById("next").addEventListener("click", function () { offset += PAGE; load(); });
  load();
})();
