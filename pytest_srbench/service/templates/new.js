// Create evaluation: choose, review the frozen plan (POST /api/plans), start (POST /api/runs).
(function () {
  "use strict";
  var form = document.getElementById("create");
  var error = document.getElementById("error");
  var startButton = document.getElementById("start");
  var state = document.getElementById("state");
  var profile = document.getElementById("profile");
  var all = document.getElementById("all-benchmarks");
  var reviewed = null;
  var key = null;
  var kinds = {};  // benchmark -> suite | rag | agent
  // /new?profile=…&benchmark=… (the dataset page's "Evaluate"): chosen once the list loads
  var params = new URLSearchParams(window.location.search);
  var preset = params.getAll("benchmark");
  if (["smoke", "quick", "standard"].indexOf(params.get("profile")) >= 0) { profile.value = params.get("profile"); }

  function newKey() {
    if (window.crypto && window.crypto.randomUUID) { return "dashboard-" + window.crypto.randomUUID(); }
    return "dashboard-" + Date.now().toString(36) + Math.random().toString(36).slice(2);
  }
  function checkbox(name, value, text, checked, kind) {
    var label = document.createElement("label");
    var input = document.createElement("input");
    input.type = "checkbox";
    input.name = name;
    input.value = value;
    input.checked = !!checked;
    if (kind) { input.setAttribute("data-kind", kind); }
    label.appendChild(input);
    label.appendChild(document.createTextNode(" " + text));
    return label;
  }
  function checked(name) {
    return Array.prototype.slice.call(form.querySelectorAll("input[name='" + name + "']:checked"))
      .map(function (input) { return input.value; });
  }
  function loadBenchmarks() {
    var box = document.getElementById("benchmarks");
    var before = checked("benchmark").concat(preset);
    return SR.api("/api/datasets?" + SR.query({ profile: profile.value, limit: 500 })).then(function (data) {
      var counts = {};
      (data.datasets || []).forEach(function (d) {
        var n = d.profiles ? d.profiles[profile.value] : null;
        if (counts[d.benchmark] === undefined) { counts[d.benchmark] = { n: 0, kind: d.kind }; }
        counts[d.benchmark].n += n || 0;
      });
      SR.clear(box);
      Object.keys(counts).sort().forEach(function (name) {
        var c = counts[name];
        kinds[name] = c.kind;
        box.appendChild(checkbox("benchmark", name, name + " (" + c.kind + ", " + c.n + " cases)",
          before.indexOf(name) >= 0, c.kind));
      });
      if (!box.firstChild) { box.appendChild(SR.el("span", "No dataset has this profile.", "note")); }
      var missing = preset.filter(function (name) { return counts[name] === undefined; });
      preset = [];
      SR.hideError(error);  // an earlier list's message no longer describes this form
      if (missing.length) {
        SR.showError(error, { code: "NOT_OFFERED", message: missing.join(", ") + ": no case under the " + profile.value + " profile" });
      }
      syncAll();
      syncKinds();
    }, function (e) { SR.showError(error, e); });
  }
  function loadTargets() {
    var box = document.getElementById("targets");
    return SR.api("/api/targets").then(function (data) {
      SR.clear(box);
      (data.targets || []).forEach(function (t) {
        var text = t.id + " — " + t.kind + " · " + t.model + (t.simulated ? " (simulated)" : "")
          + (t.priced === false ? " (unpriced)" : "");
        box.appendChild(checkbox("target", t.id, text, false));
      });
    }, function (e) { SR.showError(error, e); });
  }
  // RAG controls for a chosen RAG benchmark, the offline hint for a chosen agent benchmark
  function chosenKind(kind) {
    return checked("benchmark").some(function (name) { return kinds[name] === kind; });
  }
  function syncKinds() {
    document.getElementById("rag-set").hidden = !chosenKind("rag");
    document.getElementById("agent-hint").hidden = !chosenKind("agent");
  }
  function Invalid(message) { this.code = "INVALID_FIELD"; this.message = message; }
  // {mode, top_k, rrf_k, reranker}: only the keys set, null when none (or no RAG benchmark)
  function retrieval() {
    if (document.getElementById("rag-set").hidden) { return null; }
    var out = {};
    var mode = document.getElementById("retrieval-mode").value;
    if (mode) { out.mode = mode; }
    var topK = number("top_k", true);
    if (form.elements.namedItem("top_k").value.trim() !== "") {
      if (topK === null || topK < 1 || topK > 50 || String(topK) !== form.elements.namedItem("top_k").value.trim()) {
        throw new Invalid("top_k must be a whole number from 1 to 50");
      }
      out.top_k = topK;
    }
    var rrfK = number("rrf_k", true);
    if (form.elements.namedItem("rrf_k").value.trim() !== "") {
      if (rrfK === null || rrfK < 0 || String(rrfK) !== form.elements.namedItem("rrf_k").value.trim()) {
        throw new Invalid("rrf_k must be a whole number ≥ 0");
      }
      out.rrf_k = rrfK;
    }
    var reranker = document.getElementById("reranker").value;
    if (reranker) { out.reranker = reranker; }
    return Object.keys(out).length ? out : null;
  }
  function syncAll() {
    var boxes = form.querySelectorAll("input[name='benchmark']");
    var on = form.querySelectorAll("input[name='benchmark']:checked");
    all.checked = boxes.length > 0 && on.length === boxes.length;
    all.indeterminate = on.length > 0 && on.length < boxes.length;
  }
  function number(name, integer) {
    var text = form.elements.namedItem(name).value.trim();
    if (text === "") { return null; }
    var value = integer ? parseInt(text, 10) : parseFloat(text);
    return isNaN(value) ? null : value;
  }
  function request() {
    var body = {
      name: form.elements.namedItem("name").value.trim() || "sr-bench",
      profile: profile.value,
      benchmarks: checked("benchmark"),
      targets: checked("target"),
      limit: number("limit", true),
      seed: number("seed", true),
      repeats: number("repeats", true) || 1,
      limits: {},
      sampling: {},
      mode: form.querySelector("input[name='mode']:checked").value,
      preview_context: null,
      concurrency: number("concurrency", true),
      offline: document.getElementById("offline").checked
    };
    if (!body.benchmarks.length) { body.benchmarks = null; }
    if (!body.targets.length) { body.targets = null; }
    var budget = number("max_cost_usd", false);
    if (budget !== null) { body.limits.max_cost_usd = budget; }
    var temperature = number("temperature", false);
    if (temperature !== null) { body.sampling.temperature = temperature; }
    var maxTokens = number("max_tokens", true);
    if (maxTokens !== null) { body.sampling.max_tokens = maxTokens; }
    var chosen = retrieval();
    if (chosen !== null) { body.retrieval = chosen; }
    if (body.mode === "preview") {
      var context = {};
      ["session_id", "conversation_id"].forEach(function (name) {
        var value = form.elements.namedItem(name).value.trim();
        if (value) { context[name] = value; }
      });
      if (Object.keys(context).length) { body.preview_context = context; }
    }
    return body;
  }
  function pair(dl, label, value, id) {
    var div = document.createElement("div");
    div.appendChild(SR.el("dt", label));
    var dd = SR.el("dd", value === null || value === undefined ? "—" : value);
    if (id) { dd.id = id; }
    div.appendChild(dd);
    dl.appendChild(div);
  }
  function showPlan(plan) {
    var identity = SR.clear(document.getElementById("plan-identity"));
    pair(identity, "plan sha256", plan.plan_sha256, "plan-hash");
    pair(identity, "cases sha256", plan.case_sha256);
    pair(identity, "planned cells", plan.cells, "plan-cells");
    pair(identity, "profile · mode", plan.profile + " · " + plan.mode);
    pair(identity, "seed", plan.seed);
    pair(identity, "budget (max_cost_usd)", plan.max_cost_usd === null || plan.max_cost_usd === undefined ? null : SR.usd(plan.max_cost_usd));
    pair(identity, "sampling", JSON.stringify(plan.sampling || {}));
    var bench = SR.clear(document.querySelector("#plan-benchmarks tbody"));
    (plan.benchmarks || []).forEach(function (b) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-benchmark", b.benchmark);
      SR.cell(tr, b.benchmark);
      SR.cell(tr, b.cases, "num", "cases");
      bench.appendChild(tr);
    });
    var targets = SR.clear(document.querySelector("#plan-targets tbody"));
    (plan.targets || []).forEach(function (t) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-target", t.id);
      SR.cell(tr, t.id);
      SR.cell(tr, t.kind);
      SR.cell(tr, t.model);
      SR.cell(tr, t.simulated ? "yes" : "no");
      SR.cell(tr, JSON.stringify(t.request_params || {}), "clip");
      targets.appendChild(tr);
    });
    var limits = SR.clear(document.getElementById("plan-limits"));
    Object.keys(plan.limits || {}).sort().forEach(function (name) { pair(limits, name, plan.limits[name]); });
    document.getElementById("plan").hidden = false;
  }
  function stale() {
    if (reviewed !== null) {
      reviewed = null;
      startButton.disabled = true;
      state.textContent = "The form changed: review the plan again to enable Start.";
      document.getElementById("plan").classList.add("stale");
    }
  }
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var body;
    try {
      body = request();
    } catch (e) {
      SR.showError(error, e);
      state.textContent = "The request cannot be frozen.";
      return;
    }
    document.getElementById("review").disabled = true;
    state.textContent = "Freezing the plan…";
    SR.api("/api/plans", { method: "POST", body: body }).then(function (plan) {
      SR.hideError(error);
      reviewed = body;
      key = newKey();
      showPlan(plan);
      document.getElementById("plan").classList.remove("stale");
      startButton.disabled = false;
      state.textContent = "Plan " + String(plan.plan_sha256).slice(0, 16) + " · " + plan.cells + " cells — nothing has started.";
    }, function (e) {
      SR.showError(error, e);
      state.textContent = "The request cannot be frozen.";
    }).then(function () { document.getElementById("review").disabled = false; });
  });
  startButton.addEventListener("click", function () {
    if (reviewed === null) { return; }
    var body = JSON.parse(JSON.stringify(reviewed));
    body.idempotency_key = key;
    startButton.disabled = true;
    state.textContent = "Starting…";
    SR.api("/api/runs", { method: "POST", body: body }).then(function (data) {
      window.location.assign("/runs/" + encodeURIComponent(data.run.id));
    }, function (e) {
      SR.showError(error, e);
      startButton.disabled = false;
      state.textContent = "Not started.";
    });
  });
  form.addEventListener("change", function (event) {
    var target = event.target;
    if (target === all) {
      form.querySelectorAll("input[name='benchmark']").forEach(function (input) { input.checked = all.checked; });
    } else if (target.name === "benchmark") {
      syncAll();
    }
    syncKinds();
    if (target === profile) { loadBenchmarks(); }
    if (target.name === "mode") {
      document.getElementById("preview-fields").hidden = target.value !== "preview";
    }
    stale();
  });
  form.addEventListener("input", stale);
  Promise.all([loadBenchmarks(), loadTargets()]).then(SR.ready);
})();
