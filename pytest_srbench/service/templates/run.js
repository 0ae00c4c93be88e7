// Run detail: the header follows the run (SSE stream when available, polling always), tabs
// read results, cases, calls (with the live active view), evidence, recipes, events and the
// read-only recovery review. Model output is shown with textContent only.
(function () {
  "use strict";
  var id = document.getElementById("main").getAttribute("data-run-id");
  var base = "/api/runs/" + encodeURIComponent(id);
  var error = document.getElementById("error");
  var run = null;
  var current = "results";
  var stream = null;
  var reportAt = 0;
  var SHOW = 25;   // rows shown a page (the guide: 25)
  var READ = 100;  // results and calls read at most 100 at a time
  var EVENTS_READ = 1000;  // events read on open and per "Load more events"

  function active() { return run !== null && SR.TERMINAL.indexOf(run.status) < 0; }
  function text(id_, value) { document.getElementById(id_).textContent = value === null || value === undefined ? "—" : String(value); }
  function fail(e) { SR.showError(error, e); }
  function correct(value) { return value === true ? "✓ yes" : value === false ? "✗ no" : "—"; }
  // A list of loaded rows shown SHOW a page: "<prefix>-prev", "<prefix>-next"/"-more" and
  // "<prefix>-page" are its controls; ``draw`` gets the rows of the page shown.
  function pager(prefix, nextId, draw) {
    var state = { page: 0, rows: [] };
    var prev = document.getElementById(prefix + "-prev");
    var next = document.getElementById(nextId);
    function render() {
      var pages = Math.max(1, Math.ceil(state.rows.length / SHOW));
      state.page = Math.max(0, Math.min(state.page, pages - 1));
      draw(state.rows.slice(state.page * SHOW, (state.page + 1) * SHOW));
      text(prefix + "-page", "page " + (state.page + 1) + " of " + pages);
      prev.disabled = state.page === 0;
      next.disabled = state.page >= pages - 1;
    }
    prev.addEventListener("click", function () { state.page -= 1; render(); });
    next.addEventListener("click", function () { state.page += 1; render(); });
    return {
      set: function (rows, keepPage) { state.rows = rows; if (!keepPage) { state.page = 0; } render(); },
      rows: function () { return state.rows; }
    };
  }
  // A row of a replay run keeps its source's cost: the report's estimate, never spent
  function rowCost(value) {
    if (run !== null && run.mode === "replay" && value !== null && value !== undefined) {
      return SR.usd(value) + " (estimate)";
    }
    return SR.usd(value);
  }
  function answerText(value) {
    if (value === null || value === undefined) { return "—"; }
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  // -- header --------------------------------------------------------------------------
  function drawRun(data) {
    var previous = run;
    run = data.run;
    var status = document.getElementById("run-status");
    SR.clear(status).appendChild(SR.badge(run.status));
    var p = run.progress || {};
    var planned = run.planned_cells || 0;
    // the bar is the cells answered: a cancelled or failed cell is not progress
    var done = p.completed || 0;
    var bar = document.getElementById("run-progress");
    bar.max = Math.max(planned, 1);
    bar.value = done;
    text("run-progress-text", done + " of " + planned + " cells" + (planned ? " (" + Math.floor(100 * done / planned) + "%)" : "")
      + (p.failed ? " · " + p.failed + " failed or cancelled" : ""));
    text("run-planned", planned);
    text("run-counts", (p.completed || 0) + " · " + (p.failed || 0) + " · " + (p.running || 0) + " · " + (p.pending || 0));
    text("run-name", run.name);
    text("run-mode", run.mode + " · " + run.profile);
    text("run-targets", (run.targets || []).map(function (t) { return t.id + " (" + t.kind + " · " + t.model + ")"; }).join(", "));
    text("run-source", run.source);
    text("run-created", SR.time(run.created_at));
    text("run-updated", SR.time(run.updated_at));
    var parent = SR.clear(document.getElementById("run-parent"));
    if (run.parent_run_id) { parent.appendChild(SR.link("/runs/" + encodeURIComponent(run.parent_run_id), run.parent_run_id)); } else { parent.textContent = "—"; }
    var runError = document.getElementById("run-error");
    if (run.error) { runError.textContent = run.error; runError.hidden = false; } else { runError.hidden = true; }
    if (run.spend_usd !== undefined) { text("run-spend", SR.usd(run.spend_usd)); }
    if (run.wall_time_s !== undefined) { text("run-wall", SR.secs(run.wall_time_s)); }
    else if (active()) { text("run-wall", SR.secs(Math.max(0, Date.now() - Date.parse(run.created_at)) / 1000)); }
    drawEvidence(null);
    showReplay();
    document.getElementById("cancel").hidden = !active();
    if (!active()) { document.getElementById("cancel-confirm").hidden = true; }
    document.title = "Run " + run.id + " · " + run.status + " · srbench";
    var finished = previous !== null && SR.TERMINAL.indexOf(previous.status) < 0 && !active();
    followEvents(finished);
    return summary(finished).then(function () {
      if (finished || (active() && current === "results" && !resultsCursor)) { refreshTab(); }
    });
  }
  // Spend and wall time come from the report model (every number does): while the run is
  // active it is rebuilt at most every 10 s, and once more when it ends.
  function summary(force) {
    if (run.spend_usd !== undefined && run.wall_time_s !== undefined) { return Promise.resolve(); }
    var now = Date.now();
    if (!force && reportAt && (!active() || now - reportAt < 10000)) { return Promise.resolve(); }
    reportAt = now;
    return SR.api(base + "/report").then(function (report) {
      var s = report.summary || {};
      drawLatency(report);
      drawData(report);
      drawScores(report);
      drawEvidence(report);
      text("run-spend", SR.usd(s.total_spend_usd));
      // a running run's report ends its wall time at the last status change: the page counts
      if (!active()) { text("run-wall", SR.secs(s.wall_time_s)); }
    }, function () { /* a report that cannot be built yet: keep the last values */ });
  }
  // Accuracy with its 95 % interval and cost per target, as the report has them (the rows
  // read below never change them).
  function drawScores(report) {
    var tbody = SR.clear(document.querySelector("#scores tbody"));
    ((report.summary || {}).targets || []).forEach(function (t) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-target", t.id);
      SR.cell(tr, t.id, null, "target");
      SR.cell(tr, estimate(t, "accuracy", SR.num), "num", "accuracy");
      SR.cell(tr, SR.interval(t.accuracy_ci95), null, "interval");
      SR.cell(tr, (t.correct === null || t.correct === undefined ? "—" : t.correct) + " / " + t.total, "num", "correct");
      SR.cell(tr, estimate(t, "cost_usd", SR.usd), "num", "cost");
      SR.cell(tr, SR.usd(t.total_spend_usd), "num", "spend");
      tbody.appendChild(tr);
    });
  }
  // A replay report moves a number to estimated_<key> (the original is null): shown so marked
  function estimate(t, key, format) {
    var value = t["estimated_" + key];
    if ((t[key] === null || t[key] === undefined) && value !== null && value !== undefined) {
      return format(value) + " (estimate)";
    }
    return format(t[key]);
  }
  // A replay run says, above everything, that it is an offline estimate and where from.
  function drawEvidence(report) {
    var banner = document.getElementById("run-evidence");
    if (run.mode !== "replay") { banner.hidden = true; return; }
    var sources = report && report.replay_sources;
    if (!report && !banner.hidden) { return; }  // keep the sources drawn from the report
    SR.clear(banner).appendChild(document.createTextNode(
      "Offline replay: an estimate, not live evidence. No model was called: each routed cell took the answer a live baseline run gave."));
    if (sources) {
      banner.appendChild(document.createTextNode(" Baseline "));
      banner.appendChild(SR.link("/runs/" + encodeURIComponent(sources.baseline_run_id), sources.baseline_run_id));
      banner.appendChild(document.createTextNode(", preview "));
      banner.appendChild(SR.link("/runs/" + encodeURIComponent(sources.preview_run_id), sources.preview_run_id));
      banner.appendChild(document.createTextNode("."));
    }
    banner.hidden = false;
  }
  // One line per benchmark: the kind of data its cases came from and where from, as the
  // report records it (the report's own label says what its scores may claim).
  function origin(source) {
    if (!source) { return "not recorded (a run from before data origins)"; }
    if (source.kind === "released") { return source.source + " @ " + source.revision; }
    if (source.kind === "synthetic") { return source.generator + ", seed " + (source.seed === undefined ? "unknown" : source.seed); }
    if (source.kind === "original") { return source.note; }
    return source.source || "the project";
  }
  function drawData(report) {
    var sources = report.data_sources;
    text("data-label", sources ? sources.label : "not recorded (a report from before data origins)");
    var tbody = SR.clear(document.querySelector("#data-sources tbody"));
    var seen = {};
    (report.benchmarks || []).forEach(function (row) {
      if (seen[row.benchmark]) { return; }
      seen[row.benchmark] = true;
      var tr = document.createElement("tr");
      var kind = row.data_source ? row.data_source.kind : "unknown";
      tr.setAttribute("data-benchmark", row.benchmark);
      SR.cell(tr, row.benchmark, null, "benchmark");
      SR.cell(tr, null, null, "data").appendChild(SR.el("span", kind, "badge " + (kind === "released" ? "ok" : "warn")));
      SR.cell(tr, origin(row.data_source), null, "origin");
      tbody.appendChild(tr);
    });
  }
  // p50 / p90 / p95 as the report has them ("—" for a percentile the report does not carry)
  function drawLatency(report) {
    var tbody = SR.clear(document.querySelector("#latency tbody"));
    ((report.summary || {}).targets || []).forEach(function (t) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-target", t.id);
      SR.cell(tr, t.id, null, "target");
      ["p50", "p90", "p95"].forEach(function (p) { SR.cell(tr, SR.secs(t["latency_" + p + "_s"]), "num", p); });
      tbody.appendChild(tr);
    });
    var rows = (report.rag && report.rag.rows) || [];
    var rag = SR.clear(document.querySelector("#rag-latency tbody"));
    rows.forEach(function (r) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-target", r.target_id);
      tr.setAttribute("data-benchmark", r.benchmark);
      SR.cell(tr, r.benchmark, null, "benchmark");
      SR.cell(tr, r.target_id, null, "target");
      SR.cell(tr, r.mode, null, "mode");
      ["p50", "p90", "p95"].forEach(function (p) { SR.cell(tr, SR.num(r[p + "_latency_ms"], 1), "num", p); });
      rag.appendChild(tr);
    });
    document.getElementById("rag-latency-box").hidden = !rows.length;
  }
  function loadRun() {
    return SR.api(base).then(drawRun).then(function () {
      if (!active() && poller) { poller.stop(); SR.connection(true); }
      return null;
    }, function (e) {
      if (e.status === 404) { fail(e); if (poller) { poller.stop(); } }
      throw e;
    });
  }
  var poller = null;
  var pending = null;
  function soon() {
    if (pending !== null) { return; }
    pending = window.setTimeout(function () { pending = null; if (poller) { poller.now(); } }, 300);
  }
  // The event stream makes the header follow the run at once; EventSource resumes by itself
  // with Last-Event-ID. With a bearer token (no header on EventSource) polling alone is used.
  var NAMES = ["RunCreated", "RunStarted", "CaseStarted", "CaseCompleted", "CaseFailed", "CallSent",
    "FailureObserved", "DispatchStopped", "RunCompleted", "RunFailed", "RunCancelled", "message"];
  function openStream() {
    if (stream !== null || SR.token() || !window.EventSource || !active()) { return; }
    stream = new window.EventSource(base + "/events");
    NAMES.forEach(function (name) {
      stream.addEventListener(name, function () {
        if (name === "RunCompleted" || name === "RunFailed" || name === "RunCancelled") { closeStream(); }
        soon();
      });
    });
  }
  function closeStream() {
    if (stream !== null) { stream.close(); stream = null; }
  }
  window.addEventListener("pagehide", closeStream);

  // -- cancel (two clicks; closing the page never cancels) ------------------------------
  document.getElementById("cancel").addEventListener("click", function () {
    document.getElementById("cancel-confirm").hidden = false;
    document.getElementById("cancel-confirm").focus();
  });
  document.getElementById("cancel-confirm").addEventListener("click", function () {
    var button = document.getElementById("cancel-confirm");
    button.disabled = true;
    SR.api(base + "/cancel", { method: "POST" }).then(function (data) {
      SR.hideError(error);
      button.hidden = true;
      return drawRun(data);
    }, fail).then(function () { button.disabled = false; if (poller) { poller.now(); } });
  });

  // -- results (cursor pages) ------------------------------------------------------------
  // The cell's latency as the report has it (report cells): the subject calls' time, else the
  // cell's wall time for a completed cell; a cell that ended without an answer has none.
  var resultsCursor = null;
  var resultsNext = null;
  var resultsPager = pager("results", "results-more", function (rows) {
    var tbody = SR.clear(document.querySelector("#results tbody"));
    rows.forEach(function (r) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-case", r.case_id);
      tr.setAttribute("data-target", r.target_id);
      SR.cell(tr, r.case_id, null, "case");
      SR.cell(tr, r.target_id, null, "target");
      SR.cell(tr, r.benchmark, null, "benchmark");
      SR.cell(tr, r.status, null, "status");
      SR.cell(tr, correct(r.correct), null, "correct");
      SR.cell(tr, SR.short(answerText(r.answer), 80), "clip", "answer");
      var answerLatency = r.answer_latency_s;  // the service applies the report's rule
      SR.cell(tr, SR.secs(answerLatency), "num", "latency").setAttribute("data-value", answerLatency === null ? "" : answerLatency);
      SR.cell(tr, SR.secs(r.latency_s), "num", "wall");
      SR.cell(tr, rowCost(r.cost_usd), "num", "cost");
      SR.cell(tr, r.error ? SR.short(r.error, 80) : "", "clip", "error");
      tbody.appendChild(tr);
    });
  });
  function loadResults(after) {
    return SR.api(base + "/results?" + SR.query({ after: after, limit: READ })).then(function (data) {
      var same = resultsCursor === after && resultsPager.rows().length > 0;
      resultsCursor = after;
      resultsNext = data.next_cursor;
      resultsPager.set(data.results || [], same);
      text("results-info", (resultsNext ? "loaded " : "") + (data.results || []).length + " rows" + (after ? " after #" + after : "")
        + (resultsNext ? " · more: Next 100" : ""));
      document.getElementById("results-next").disabled = !resultsNext;
      document.getElementById("results-first").disabled = !after;
    });
  }
  document.getElementById("results-first").addEventListener("click", function () { loadResults(null).catch(fail); });
  document.getElementById("results-next").addEventListener("click", function () { if (resultsNext) { loadResults(resultsNext).catch(fail); } });

  // -- everything of a kind, page by page (bounded) ---------------------------------------
  function collect(path, key, keep, maxPages) {
    var out = [];
    function page(after, left) {
      return SR.api(path + (path.indexOf("?") < 0 ? "?" : "&") + SR.query({ after: after, limit: 500 })).then(function (data) {
        (data[key] || []).forEach(function (row) { if (!keep || keep(row)) { out.push(row); } });
        if (data.next_cursor && left > 1) { return page(data.next_cursor, left - 1); }
        return out;
      });
    }
    return page(null, maxPages || 20);
  }

  // -- questions: one row per case and target; a case opens its calls ---------------------
  var questions = [];
  var qPage = 0;
  function drawQuestions() {
    var filter = document.getElementById("q-filter").value.trim().toLowerCase();
    var rows = questions.filter(function (r) {
      return !filter || (r.case_id + " " + r.target_id).toLowerCase().indexOf(filter) >= 0;
    });
    var pages = Math.max(1, Math.ceil(rows.length / SHOW));
    qPage = Math.min(qPage, pages - 1);
    var tbody = SR.clear(document.querySelector("#questions tbody"));
    rows.slice(qPage * SHOW, (qPage + 1) * SHOW).forEach(function (r) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-case", r.case_id);
      tr.setAttribute("data-target", r.target_id);
      var first = SR.cell(tr, null, null, "case");
      var button = SR.el("button", r.case_id, "link open-case");
      button.type = "button";
      button.addEventListener("click", function () { openCase(r.case_id); });
      first.appendChild(button);
      SR.cell(tr, r.benchmark, null, "benchmark");
      SR.cell(tr, r.target_id, null, "target");
      SR.cell(tr, r.status, null, "status");
      SR.cell(tr, correct(r.correct), null, "correct");
      SR.cell(tr, SR.short(answerText(r.answer), 100), "clip", "answer");
      tbody.appendChild(tr);
    });
    text("q-info", rows.length + " of " + questions.length + " rows");
    text("q-page", "page " + (qPage + 1) + " of " + pages);
    document.getElementById("q-prev").disabled = qPage === 0;
    document.getElementById("q-next").disabled = qPage >= pages - 1;
  }
  function loadQuestions() {
    return collect(base + "/results", "results").then(function (rows) {
      questions = rows.sort(function (a, b) {
        return a.case_id < b.case_id ? -1 : a.case_id > b.case_id ? 1 : a.target_id < b.target_id ? -1 : 1;
      });
      drawQuestions();
    });
  }
  function messageText(content) {
    if (typeof content === "string") { return content; }
    if (Array.isArray(content)) {
      return content.map(function (part) { return part && typeof part.text === "string" ? part.text : JSON.stringify(part); }).join("\n");
    }
    return JSON.stringify(content);
  }
  function fact(dl, label, value) {
    var div = document.createElement("div");
    div.appendChild(SR.el("dt", label));
    div.appendChild(SR.el("dd", value === null || value === undefined || value === "" ? "—" : value));
    dl.appendChild(div);
  }
  function callBox(call) {
    var box = SR.el("div", null, "call-box");
    box.setAttribute("data-call", call.id);
    box.appendChild(SR.el("h4", call.id + " · " + call.target_id + " · " + call.role));
    var dl = SR.el("dl", null, "identity");
    fact(dl, "status", call.status);
    fact(dl, "model", call.model || call.requested_model);
    fact(dl, "decision", call.decision);
    fact(dl, "latency", SR.secs(call.latency_s));
    fact(dl, "cost", rowCost(call.cost_usd));
    fact(dl, "finish reason", call.finish_reason);
    fact(dl, "error", call.error);
    box.appendChild(dl);
    var messages = call.request && call.request.messages ? call.request.messages : [];
    if (messages.length) {
      box.appendChild(SR.el("h5", "Prompt sent"));
      var prompt = SR.el("pre", messages.map(function (m) { return "[" + m.role + "]\n" + messageText(m.content); }).join("\n\n"), "text prompt");
      box.appendChild(prompt);
    }
    box.appendChild(SR.el("h5", "Answer received"));
    box.appendChild(SR.el("pre", call.final === null || call.final === undefined ? "(none)" : messageText(call.final), "text answer"));
    if (call.reasoning) {
      box.appendChild(SR.el("h5", "Reasoning"));
      box.appendChild(SR.el("pre", messageText(call.reasoning), "text"));
    }
    var evidence = SR.el("button", "Show evidence", "link");
    evidence.type = "button";
    evidence.addEventListener("click", function () { showEvidence(call.id); });
    box.appendChild(evidence);
    return box;
  }
  // -- an agent cell's steps in order: the last subject call's request holds the whole
  // conversation (each model message, tool call and tool result), its reply ends it; the
  // grader's tool-call records (details.agent) say whether each call was valid.
  function pretty(args) {
    if (typeof args !== "string") { return JSON.stringify(args, null, 2); }
    try { return JSON.stringify(JSON.parse(args), null, 2); } catch (e) { return args; }
  }
  function step(list, kind, label, body) {
    var li = document.createElement("li");
    li.setAttribute("data-step", kind);
    li.appendChild(SR.el("span", label, "step"));
    if (body !== null && body !== undefined && body !== "") { li.appendChild(SR.el("pre", body, "text")); }
    list.appendChild(li);
    return li;
  }
  function traceSteps(list, calls, agent, answer) {
    var records = agent.tool_calls || [];
    var index = 0;
    function toolCall(name, args) {
      var record = records[index] || null;
      index += 1;
      var verdict = record === null ? "" : record.valid === false ? " · invalid" : record.error ? " · error: " + record.error : "";
      step(list, "tool-call", "tool call · " + name + verdict, pretty(args)).setAttribute("data-tool", name);
    }
    var last = null;
    calls.forEach(function (c) { if (c.request && c.request.messages) { last = c; } });
    if (last === null) {  // no saved request: the grader's records and the answer
      records.forEach(function (r) {
        toolCall(r.name, r.arguments);
        step(list, "tool-result", "tool result" + (r.result_ok === false ? " · failed" : ""), r.error || null);
      });
      step(list, "answer", "final answer", answerText(answer));
      return;
    }
    last.request.messages.forEach(function (m) {
      if (m.role === "tool") {
        step(list, "tool-result", "tool result" + (m.tool_call_id ? " · " + m.tool_call_id : ""), messageText(m.content));
        return;
      }
      if (m.content !== null && m.content !== undefined && messageText(m.content) !== "") {
        step(list, "message", (m.role === "assistant" ? "model" : m.role) + " message", messageText(m.content));
      }
      (m.tool_calls || []).forEach(function (t) {
        var fn = t["function"] || {};
        toolCall(fn.name || t.name || "?", fn.arguments !== undefined ? fn.arguments : t.arguments);
      });
    });
    (last.tool_calls || []).forEach(function (t) {
      var fn = t["function"] || {};
      toolCall(fn.name || t.name || "?", fn.arguments !== undefined ? fn.arguments : t.arguments);
    });
    if (last.final !== null && last.final !== undefined && messageText(last.final) !== "") {
      step(list, "answer", "final answer", messageText(last.final));
    } else if (last.error) {
      step(list, "answer", "no answer · " + last.error, null);
    }
  }
  function drawTraces(caseId, calls) {
    var box = SR.clear(document.getElementById("case-traces"));
    questions.filter(function (r) { return r.case_id === caseId && r.details && r.details.agent; }).forEach(function (r) {
      var agent = r.details.agent;
      var section = SR.el("section", null, "agent-trace");
      section.setAttribute("data-target", r.target_id);
      section.appendChild(SR.el("h4", "Agent trace · " + r.target_id));
      section.appendChild(SR.el("p", (agent.succeeded ? "succeeded" : "did not succeed")
        + (agent.reasons && agent.reasons.length ? ": " + agent.reasons.join("; ") : "")
        + " · " + (agent.calls_made || 0) + " tool call(s), " + (agent.invalid_calls || 0) + " invalid", "note"));
      var list = SR.el("ol", null, "trace");
      var mine = calls.filter(function (c) { return c.target_id === r.target_id && c.role === "subject"; })
        .sort(function (a, b) { return (a._seq || 0) - (b._seq || 0); });
      traceSteps(list, mine, agent, r.answer);
      section.appendChild(list);
      box.appendChild(section);
    });
  }
  function openCase(caseId) {
    var box = document.getElementById("case");
    var list = SR.clear(document.getElementById("case-calls"));
    SR.clear(document.getElementById("case-traces"));
    text("case-id", caseId);
    box.hidden = false;
    box.setAttribute("data-case", caseId);
    list.appendChild(SR.el("p", "loading calls…", "note"));
    return collect(base + "/calls", "calls", function (c) { return c.case_id === caseId; }).then(function (calls) {
      return Promise.all(calls.map(function (c) {
        return SR.api(base + "/calls/" + encodeURIComponent(c.id)).then(function (whole) { return whole.call || whole; });
      }));
    }).then(function (calls) {
      SR.clear(list);
      drawTraces(caseId, calls);
      if (!calls.length) { list.appendChild(SR.el("p", "No call was made for this case yet.", "note")); }
      calls.forEach(function (call) { list.appendChild(callBox(call)); });
      box.scrollIntoView({ block: "nearest" });
    }).catch(fail);
  }
  document.getElementById("q-filter").addEventListener("input", function () { qPage = 0; drawQuestions(); });
  document.getElementById("q-reload").addEventListener("click", function () { loadQuestions().catch(fail); });
  document.getElementById("q-prev").addEventListener("click", function () { qPage = Math.max(0, qPage - 1); drawQuestions(); });
  document.getElementById("q-next").addEventListener("click", function () { qPage += 1; drawQuestions(); });
  document.getElementById("case-close").addEventListener("click", function () { document.getElementById("case").hidden = true; });

  // -- calls: the live active view (every second while the run runs) and all calls -------
  var callsNext = null;
  var activeTimer = null;
  function loadActive() {
    return SR.api(base + "/calls?" + SR.query({ active: "true", limit: 100 })).then(function (data) {
      var tbody = SR.clear(document.querySelector("#active tbody"));
      var calls = data.calls || [];
      calls.forEach(function (c) {
        var tr = document.createElement("tr");
        tr.setAttribute("data-call", c.id);
        SR.cell(tr, c.id, null, "call");
        SR.cell(tr, c.case_id, null, "case");
        SR.cell(tr, c.target_id, null, "target");
        SR.cell(tr, c.phase, null, "phase");
        SR.cell(tr, SR.secs(c.elapsed_s), "num", "elapsed");
        SR.cell(tr, SR.time(c.last_activity_at), null, "activity");
        SR.cell(tr, c.bytes_received === undefined ? "—" : c.bytes_received, "num", "bytes");
        tbody.appendChild(tr);
      });
      text("active-info", calls.length ? calls.length + " call(s) in flight · refreshed " + new Date().toLocaleTimeString()
        : active() ? "No call in flight right now." : "The run is " + (run ? run.status : "not running") + ": no call in flight.");
    });
  }
  function activeLoop() {
    if (activeTimer !== null) { return; }
    function tick() {
      loadActive().catch(function () { SR.connection(false); }).then(function () {
        activeTimer = current === "calls" && active() ? window.setTimeout(tick, 1000) : null;
      });
    }
    activeTimer = 0;
    tick();
  }
  var callsPager = pager("calls", "calls-more", function (rows) {
    var tbody = SR.clear(document.querySelector("#calls tbody"));
    rows.forEach(function (c) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-call", c.id);
      SR.cell(tr, c._seq, "num", "seq");
      SR.cell(tr, c.id, null, "call");
      SR.cell(tr, c.case_id, null, "case");
      SR.cell(tr, c.target_id, null, "target");
      SR.cell(tr, c.role, null, "role");
      SR.cell(tr, c.status, null, "status");
      SR.cell(tr, c.model || c.requested_model, null, "model");
      SR.cell(tr, c.decision, null, "decision");
      SR.cell(tr, SR.secs(c.latency_s), "num", "latency");
      SR.cell(tr, rowCost(c.cost_usd), "num", "cost");
      SR.cell(tr, c.finish_reason, null, "finish");
      var button = SR.el("button", "evidence", "link");
      button.type = "button";
      button.addEventListener("click", function () { showEvidence(c.id); });
      SR.cell(tr, null, null, "evidence").appendChild(button);
      tbody.appendChild(tr);
    });
  });
  function loadCalls(after) {
    return SR.api(base + "/calls?" + SR.query({ after: after, limit: READ })).then(function (data) {
      callsNext = data.next_cursor;
      var datalist = SR.clear(document.getElementById("call-ids"));
      (data.calls || []).forEach(function (c) {
        var option = document.createElement("option");
        option.value = c.id;
        datalist.appendChild(option);
      });
      callsPager.set(data.calls || [], false);
      text("calls-info", (callsNext ? "loaded " : "") + (data.calls || []).length + " calls" + (after ? " after #" + after : "")
        + (callsNext ? " · more: Next 100" : ""));
      document.getElementById("calls-next").disabled = !callsNext;
      document.getElementById("calls-first").disabled = !after;
    });
  }
  document.getElementById("calls-first").addEventListener("click", function () { loadCalls(null).catch(fail); });
  document.getElementById("calls-next").addEventListener("click", function () { if (callsNext) { loadCalls(callsNext).catch(fail); } });

  // -- evidence --------------------------------------------------------------------------
  function showEvidence(callId) {
    document.getElementById("evidence-call").value = callId;
    select("evidence");
  }
  function loadEvidence() {
    var callId = document.getElementById("evidence-call").value.trim();
    var pre = document.getElementById("evidence-text");
    if (!callId) { return Promise.resolve(); }
    text("evidence-info", "loading the evidence of " + callId + "…");
    return SR.api(base + "/calls/" + encodeURIComponent(callId) + "/evidence", { as: "text" }).then(function (body) {
      text("evidence-info", callId + ": " + body.length + " characters of raw response, shown as text.");
      pre.textContent = body;
      pre.hidden = false;
    }, function (e) {
      pre.hidden = true;
      text("evidence-info", SR.errorText(e));
    });
  }
  document.getElementById("evidence-form").addEventListener("submit", function (event) { event.preventDefault(); loadEvidence(); });

  // -- recipes ---------------------------------------------------------------------------
  function loadRecipes() {
    return SR.api(base + "/recipes").then(function (data) {
      var box = SR.clear(document.getElementById("recipes"));
      var recipes = data.recipes || [];
      if (!recipes.length) { box.appendChild(SR.el("p", "Recipe unavailable: no target of this run captured a frozen recipe.", "note unavailable")); }
      recipes.forEach(function (r) {
        var section = SR.el("section", null, "recipe");
        section.setAttribute("data-target", r.target_id || "");
        section.appendChild(SR.el("h3", (r.target_id || "target") + (r.status ? " · " + r.status : "")));
        var body = JSON.stringify(r, null, 2);
        // the redacted recipe as the service sent it (no connection details, no credentials):
        // a recipe artifact, not a deployable configuration
        if (r.status === "captured" && r.recipe) {
          var link = SR.el("a", "Download recipe (JSON)", "download-recipe");
          link.href = URL.createObjectURL(new Blob([body + "\n"], { type: "application/json" }));
          link.download = "srbench-" + id + "-" + String(r.target_id || "target").replace(/[^A-Za-z0-9._-]/g, "_") + "-recipe.json";
          section.appendChild(link);
          section.appendChild(SR.el("p", "Captured " + SR.time(r.captured_at) + " (UTC) · projection sha256 " + r.projection_sha256
            + ". A redacted recipe (no connection details, no credentials), not a deployable configuration.", "note"));
        } else {
          section.appendChild(SR.el("p", "Recipe unavailable" + (r.reason ? ": " + r.reason : "") + ".", "note unavailable"));
        }
        section.appendChild(SR.el("pre", body, "text"));
        box.appendChild(section);
      });
    });
  }

  // -- events (oldest first, 25 a page; up to 1,000 read on open and per "Load more
  // events"; followed live once every event is read while the run is active; the type filter
  // covers the loaded events; a failed read keeps the cursor and the loaded events) --------
  var eventsCursor = null;
  var eventsLoaded = false;
  var eventsAtEnd = false;
  var eventsBusy = null;
  var eventsAgain = false;
  var eventsFailed = null;
  var eventRows = [];
  var kinds = {};
  function seqOf(e) { return e._seq !== undefined ? e._seq : e.seq !== undefined ? e.seq : e.sequence; }
  function kindOf(e) { return String(e.kind || e.name || e.event || ""); }
  function addKind(kind) {
    if (kinds[kind]) { return; }
    kinds[kind] = true;
    var select = document.getElementById("events-kind");
    var option = SR.el("option", kind);
    option.value = kind;
    var before = Array.prototype.slice.call(select.options, 1).filter(function (o) { return o.value > kind; })[0];
    select.insertBefore(option, before || null);
  }
  var eventsPager = pager("events", "events-next", function (rows) {
    var tbody = SR.clear(document.querySelector("#events tbody"));
    rows.forEach(function (e) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-seq", seqOf(e));
      tr.setAttribute("data-kind", kindOf(e));
      SR.cell(tr, seqOf(e), "num", "seq");
      SR.cell(tr, SR.time(e.at), null, "at");
      SR.cell(tr, kindOf(e), null, "kind");
      SR.cell(tr, SR.short(e.data === undefined ? "" : e.data, 160), "clip", "data");
      tbody.appendChild(tr);
    });
  });
  function filterEvents(keepPage) {
    var kind = document.getElementById("events-kind").value;
    var matching = eventRows.filter(function (e) { return !kind || kindOf(e) === kind; });
    eventsPager.set(matching, keepPage);
    var table = document.getElementById("events");
    table.setAttribute("data-loaded", eventRows.length);
    table.setAttribute("data-matching", matching.length);
    // no total from the service: a read that was full says only how many are loaded
    var loaded = eventsAtEnd ? eventRows.length + " events" : "loaded " + eventRows.length;
    var state = eventsFailed ? " · " + eventsFailed
      : !eventsAtEnd ? " · more: Load more events" : active() ? " · following the run live" : " · all (the run is " + run.status + ")";
    text("events-info", (kind ? matching.length + " " + kind + " of " : "") + loaded + state);
    document.getElementById("events-more").disabled = eventsAtEnd && !eventsFailed;
  }
  // Read up to ``budget`` events after the cursor, 500 a request; each answer is kept as it
  // comes (a later failure keeps what was read and the cursor after it).
  function readEvents(budget) {
    return SR.api(base + "/events/page?" + SR.query({ after: eventsCursor, limit: Math.min(500, budget) })).then(function (data) {
      var events = data.events || [];
      events.forEach(function (e) { eventRows.push(e); addKind(kindOf(e)); });
      if (data.next_cursor) {
        eventsCursor = data.next_cursor;
      } else if (events.length) {
        eventsCursor = seqOf(events[events.length - 1]);
      }
      eventsAtEnd = !data.next_cursor;
      eventsFailed = null;
      filterEvents(true);
      if (data.next_cursor && budget - events.length > 0) { return readEvents(budget - events.length); }
      return null;
    });
  }
  function loadEvents() {
    if (eventsBusy) { eventsAgain = true; return eventsBusy; }
    eventsBusy = readEvents(EVENTS_READ).then(function () {
      eventsBusy = null;
      if (eventsAgain) { eventsAgain = false; return loadEvents(); }
      return null;
    }, function (e) {
      eventsBusy = null;
      eventsAgain = false;
      eventsFailed = "the read failed (" + SR.errorText(e) + "): the " + eventRows.length
        + " loaded events and the cursor are kept; Load more events reads on from #" + (eventsCursor === null ? 0 : eventsCursor);
      filterEvents(true);
    });
    return eventsBusy;
  }
  // Called whenever the header learns something new (stream event or poll): new events are
  // appended once every event is read; the run's end appends its final events once.
  function followEvents(finished) {
    if (!eventsLoaded || !eventsAtEnd || eventsFailed || !(active() || finished)) { return; }
    loadEvents().catch(fail);
    // the run's status and its event are one write; a late cell event may follow it
    if (finished) { window.setTimeout(function () { loadEvents().catch(fail); }, 1500); }
  }
  document.getElementById("events-more").addEventListener("click", function () { loadEvents().catch(fail); });
  document.getElementById("events-kind").addEventListener("change", function () { filterEvents(false); });

  // -- recovery: review (read-only), then start a child from exactly the reviewed plan ----
  // The reviewed plan is kept as the text the service sent and posted back unchanged. Its
  // idempotency key is made once per reviewed plan and kept in this tab (sessionStorage), so a
  // second click, a reload or a review of the same plan asks for the same child (200).
  var reviewedPlan = null;  // {text, plan, key}
  var RECOVERY_KEY = "srbench-recovery:" + id;
  function recoveryMemory() {
    try { return JSON.parse(window.sessionStorage.getItem(RECOVERY_KEY) || "{}") || {}; } catch (e) { return {}; }
  }
  function remember(memory) {
    try { window.sessionStorage.setItem(RECOVERY_KEY, JSON.stringify(memory)); } catch (e) { /* private mode */ }
  }
  function recoveryKey(sha) {
    var memory = recoveryMemory();
    if (!memory[sha]) {
      var random = window.crypto && window.crypto.randomUUID ? window.crypto.randomUUID()
        : Date.now().toString(36) + Math.random().toString(36).slice(2);
      memory[sha] = { key: "recover-" + random };
      remember(memory);
    }
    return memory[sha].key;
  }
  // a short fingerprint of a selection (FNV-1a, 32 bits, hex): one key per ticked set
  function digest(value) {
    var h = 0x811c9dc5;
    for (var i = 0; i < value.length; i += 1) {
      h ^= value.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return value.length.toString(36) + "-" + h.toString(16);
  }
  function drawChildren() {
    var memory = recoveryMemory();
    var list = SR.clear(document.querySelector("#recovery-children ul"));
    Object.keys(memory).forEach(function (sha) {
      if (!memory[sha].child) { return; }
      var li = document.createElement("li");
      li.appendChild(SR.link("/runs/" + encodeURIComponent(memory[sha].child), memory[sha].child));
      list.appendChild(li);
    });
    document.getElementById("recovery-children").hidden = !list.firstChild;
  }
  // Every cell of the reviewed plan, candidates and excluded ones with their reason, 25 a
  // page; the run's recovery children (its lineage, from the report), 25 a page. In failed
  // mode the reviewer ticks the candidates to attempt again (kept across pages); the plan is
  // posted with exactly those cells as its selected_cells.
  var recoveryCells = [];
  var picking = false;  // failed mode: the candidates are ticked one by one
  var picked = {};  // cellKey -> true
  function cellKey(c) { return JSON.stringify([c.case_id, c.target_id]); }
  function pickedCells() {
    if (!reviewedPlan) { return []; }
    return (reviewedPlan.plan.eligible_cells || []).filter(function (c) { return picked[cellKey(c)]; })
      .map(function (c) { return { case_id: c.case_id, target_id: c.target_id }; });
  }
  function drawPicked() {
    if (!picking || reviewedPlan === null) { return; }
    var n = pickedCells().length;
    var start = document.getElementById("recovery-start");
    start.textContent = "Start recovery (" + n + " cell" + (n === 1 ? "" : "s") + ")";
    start.disabled = n === 0;
    text("recovery-picked", n + " of " + (reviewedPlan.plan.eligible_cells || []).length + " candidates ticked");
    hideConfirm();  // a changed selection is reviewed again
  }
  var recoveryPager = pager("recovery", "recovery-next", function (rows) {
    var tbody = SR.clear(document.querySelector("#recovery-cells tbody"));
    rows.forEach(function (c) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-case", c.case_id);
      tr.setAttribute("data-target", c.target_id);
      tr.setAttribute("data-state", c.reason ? "excluded" : "eligible");
      var pick = SR.cell(tr, null, null, "pick");
      if (picking && !c.reason) {
        var box = document.createElement("input");
        box.type = "checkbox";
        box.className = "recovery-pick";
        box.checked = !!picked[cellKey(c)];
        box.setAttribute("aria-label", "attempt " + c.case_id + " on " + c.target_id + " again");
        box.addEventListener("change", function () {
          if (box.checked) { picked[cellKey(c)] = true; } else { delete picked[cellKey(c)]; }
          drawPicked();
        });
        pick.appendChild(box);
      }
      SR.cell(tr, c.case_id, null, "case");
      SR.cell(tr, c.target_id, null, "target");
      SR.cell(tr, c.reason ? "excluded" : "candidate", null, "state");
      SR.cell(tr, c.reason || "", null, "reason");
      tbody.appendChild(tr);
    });
  });
  // A review's cells in its pager, filtered by its "show" select: all, the cells with a
  // reason (the select's ``withReason`` value) or those without; redrawn when it changes.
  function reviewFilter(selectId, withReason, pager, cells) {
    var select = document.getElementById(selectId);
    function draw(keepPage) {
      var show = select.value;
      pager.set(cells().filter(function (c) {
        return !show || (show === withReason) === !!c.reason;
      }), keepPage);
    }
    select.addEventListener("change", function () { draw(false); });
    return draw;
  }
  var drawRecoveryCells = reviewFilter("recovery-show", "excluded", recoveryPager, function () { return recoveryCells; });
  function pickAll(on) {
    picked = {};
    if (on && reviewedPlan) { (reviewedPlan.plan.eligible_cells || []).forEach(function (c) { picked[cellKey(c)] = true; }); }
    drawRecoveryCells(true);
    drawPicked();
  }
  document.getElementById("recovery-pick-all").addEventListener("click", function () { pickAll(true); });
  document.getElementById("recovery-pick-none").addEventListener("click", function () { pickAll(false); });
  var lineagePager = pager("lineage", "lineage-next", function (rows) {
    var tbody = SR.clear(document.querySelector("#recovery-lineage tbody"));
    rows.forEach(function (c) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-run", c.run_id);
      SR.cell(tr, null, null, "run").appendChild(SR.link("/runs/" + encodeURIComponent(c.run_id), c.run_id));
      SR.cell(tr, c.status, null, "status");
      SR.cell(tr, c.mode, null, "mode");
      SR.cell(tr, c.cells, "num", "cells");
      SR.cell(tr, SR.time(c.created_at), null, "created");
      tbody.appendChild(tr);
    });
    if (!rows.length) {
      var tr = document.createElement("tr");
      SR.cell(tr, "No recovery run was started from this run.", "note");
      tbody.appendChild(tr);
    }
  });
  function loadLineage() {
    return SR.api(base + "/report").then(function (report) {
      lineagePager.set(report.child_attempts || [], true);
    });
  }
  function hideConfirm() {
    document.getElementById("recovery-confirm").hidden = true;
    document.getElementById("recovery-ack").checked = false;
  }
  function loadRecovery() {
    var mode = document.getElementById("recovery-mode").value;
    reviewedPlan = null;
    picking = false;
    picked = {};
    document.getElementById("recovery-pick").hidden = true;
    document.getElementById("recovery-pick-note").hidden = true;
    hideConfirm();
    document.getElementById("recovery-start").hidden = true;
    SR.hideError(document.getElementById("recovery-error"));
    drawChildren();
    return SR.api(base + "/recovery-plan?" + SR.query({ mode: mode }), { as: "text" }).then(function (body) {
      var plan = JSON.parse(body);
      var dl = SR.clear(document.getElementById("recovery-counts"));
      var counts = plan.counts || {};
      var eligible = counts.eligible !== undefined ? counts.eligible : (plan.eligible_cells || []).length;
      fact(dl, "mode", plan.mode || mode);
      fact(dl, "eligible", eligible);
      fact(dl, "excluded", counts.excluded !== undefined ? counts.excluded : (plan.excluded || []).length);
      fact(dl, "new attempt budget", SR.usd(plan.new_attempt_budget_usd));
      fact(dl, "plan sha256", plan.plan_sha256);
      var reasons = {};
      (plan.excluded || []).forEach(function (e) { reasons[e.reason] = (reasons[e.reason] || 0) + 1; });
      recoveryCells = (plan.eligible_cells || []).concat(plan.excluded || []);
      picking = plan.mode === "failed" && eligible > 0;
      document.getElementById("recovery-pick").hidden = !picking;
      document.getElementById("recovery-pick-note").hidden = !picking;
      drawRecoveryCells(false);
      var tbody = SR.clear(document.querySelector("#recovery-reasons tbody"));
      Object.keys(reasons).sort().forEach(function (reason) {
        var tr = document.createElement("tr");
        tr.setAttribute("data-reason", reason);
        SR.cell(tr, reason);
        SR.cell(tr, reasons[reason], "num");
        tbody.appendChild(tr);
      });
      SR.hideError(error);
      if (eligible > 0) {
        reviewedPlan = { text: body, plan: plan, key: recoveryKey(plan.plan_sha256) };
        var start = document.getElementById("recovery-start");
        start.textContent = "Start recovery (" + eligible + " cell" + (eligible === 1 ? "" : "s") + ")";
        start.hidden = false;
        start.disabled = false;
        drawPicked();  // failed mode: nothing is ticked yet
      }
    });
  }
  document.getElementById("recovery-load").addEventListener("click", function () { loadRecovery().catch(fail); });
  document.getElementById("recovery-mode").addEventListener("change", function () { loadRecovery().catch(fail); });
  document.getElementById("recovery-start").addEventListener("click", function () {
    if (reviewedPlan === null) { return; }
    var plan = reviewedPlan.plan;
    var count = picking ? pickedCells().length : plan.counts.eligible;
    if (count === 0) { return; }
    var ack = !!plan.requires_new_attempt_acknowledgment;
    text("recovery-summary", "Create a recovery run (a child of " + id + ") that attempts " + count
      + " cell(s) of the reviewed plan again (mode " + plan.mode + ", budget " + SR.usd(plan.new_attempt_budget_usd)
      + "). It runs like any run; this run is not changed.");
    document.getElementById("recovery-ack").checked = false;
    document.getElementById("recovery-ack-label").hidden = !ack;
    document.getElementById("recovery-confirm-yes").disabled = ack;
    document.getElementById("recovery-confirm").hidden = false;
    document.getElementById("recovery-confirm-yes").focus();
  });
  document.getElementById("recovery-ack").addEventListener("change", function (event) {
    document.getElementById("recovery-confirm-yes").disabled = !event.target.checked;
  });
  document.getElementById("recovery-back").addEventListener("click", hideConfirm);
  document.getElementById("recovery-confirm-yes").addEventListener("click", function () {
    if (reviewedPlan === null) { return; }
    var reviewed = reviewedPlan;
    var planText = reviewed.text;
    var key = reviewed.key;
    var remembered = reviewed.plan.plan_sha256;
    if (picking) {
      // the reviewed text, unchanged, with exactly the ticked cells as its selected_cells;
      // the idempotency key belongs to this plan and this selection
      var cells = pickedCells();
      if (!cells.length) { return; }
      var selection = JSON.stringify(cells);
      remembered = reviewed.plan.plan_sha256 + ":" + digest(selection);
      key = recoveryKey(remembered);
      planText = planText.replace(/\s+$/, "");
      planText = planText.slice(0, -1) + ",\"selected_cells\":" + selection + "}";
    }
    var button = document.getElementById("recovery-confirm-yes");
    var failure = document.getElementById("recovery-error");
    button.disabled = true;
    var json = "{\"plan\":" + planText + ",\"idempotency_key\":" + JSON.stringify(key)
      + (reviewed.plan.requires_new_attempt_acknowledgment ? ",\"acknowledge_new_attempt\":true" : "") + "}";
    SR.api(base + "/recover", { method: "POST", json: json }).then(function (data) {
      var child = data.run.id;
      var memory = recoveryMemory();
      memory[remembered] = { key: key, child: child };
      remember(memory);
      hideConfirm();
      document.getElementById("recovery-start").hidden = true;
      var note = SR.clear(document.getElementById("recovery-child"));
      note.appendChild(document.createTextNode("Recovery run created: "));
      note.appendChild(SR.link("/runs/" + encodeURIComponent(child), child));
      note.appendChild(document.createTextNode(" — opening it…"));
      note.hidden = false;
      window.location.assign("/runs/" + encodeURIComponent(child));
    }, function (e) {
      SR.showError(failure, e);
      button.disabled = false;
    });
  });

  // -- offline replay (a completed preview only): pick a live baseline, review, create once --
  // The review is read-only. The idempotency key is made once per (preview, baseline) pair and
  // kept in this tab (sessionStorage), so a second click or a reload asks for the same run.
  var replayShown = false;
  var replayCursor = null;
  var replayReview = null;  // the review shown: {baseline, doc}
  var REPLAY_KEY = "srbench-replay:" + id;
  function replayMemory() {
    try { return JSON.parse(window.sessionStorage.getItem(REPLAY_KEY) || "{}") || {}; } catch (e) { return {}; }
  }
  function replayKey(baseline) {
    var memory = replayMemory();
    if (!memory[baseline]) {
      var random = window.crypto && window.crypto.randomUUID ? window.crypto.randomUUID()
        : Date.now().toString(36) + Math.random().toString(36).slice(2);
      memory[baseline] = { key: "replay-" + random };
      try { window.sessionStorage.setItem(REPLAY_KEY, JSON.stringify(memory)); } catch (e) { /* private mode */ }
    }
    return memory[baseline].key;
  }
  function rememberReplay(baseline, runId) {
    var key = replayKey(baseline);
    var memory = replayMemory();
    memory[baseline] = { key: key, run: runId };
    try { window.sessionStorage.setItem(REPLAY_KEY, JSON.stringify(memory)); } catch (e) { /* private mode */ }
  }
  function showReplay() {
    var section = document.getElementById("replay");
    var wanted = run.mode === "preview" && run.status === "completed";
    section.hidden = !wanted;
    if (wanted && !replayShown) {
      replayShown = true;
      loadBaselines(null).catch(function (e) { SR.showError(document.getElementById("replay-error"), e); });
    }
  }
  function optionText(o) {
    var verdict = o.eligible ? "replayable, " + o.eligible_cells + " cell" + (o.eligible_cells === 1 ? "" : "s")
      : "cannot be replayed: " + (o.problems.length ? o.problems.join(", ") : o.ineligible_cells + " ineligible cell" + (o.ineligible_cells === 1 ? "" : "s"));
    return o.baseline_run_id + " · " + SR.short(o.name || "", 60) + " · " + SR.time(o.created_at) + " · " + verdict;
  }
  function loadBaselines(after) {
    var select = document.getElementById("replay-baseline");
    return SR.api("/api/replay-options?" + SR.query({ preview_run_id: id, after: after, limit: 20 })).then(function (data) {
      if (!after) { SR.clear(select); }
      (data.options || []).forEach(function (o) {
        var option = SR.el("option", optionText(o));
        option.value = o.baseline_run_id;
        option.setAttribute("data-eligible", o.eligible ? "true" : "false");
        select.appendChild(option);
      });
      replayCursor = data.next_cursor;
      document.getElementById("replay-more").hidden = !replayCursor;
      var count = select.options.length;
      var eligible = select.querySelectorAll("option[data-eligible=true]").length;
      text("replay-options-info", count ? count + " completed live run" + (count === 1 ? "" : "s") + " listed, " + eligible + " replayable"
        + (replayCursor ? " · more: More baselines" : "")
        : "No completed live run in the store: run the single models the router picks first.");
      document.getElementById("replay-review").disabled = !count;
      if (!after && eligible && !select.querySelector("option[data-eligible=true]").selected) {
        select.value = select.querySelector("option[data-eligible=true]").value;
      }
    });
  }
  document.getElementById("replay-more").addEventListener("click", function () {
    if (replayCursor) { loadBaselines(replayCursor).catch(function (e) { SR.showError(document.getElementById("replay-error"), e); }); }
  });
  var replayCells = [];
  var replayPager = pager("replay", "replay-next", function (rows) {
    var tbody = SR.clear(document.querySelector("#replay-cells tbody"));
    rows.forEach(function (c) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-case", c.case_id);
      tr.setAttribute("data-target", c.target_id);
      tr.setAttribute("data-state", c.reason ? "ineligible" : "eligible");
      SR.cell(tr, c.case_id, null, "case");
      SR.cell(tr, c.target_id, null, "target");
      SR.cell(tr, c.benchmark, null, "benchmark");
      SR.cell(tr, c.selected_model === null || c.selected_model === undefined ? "—" : c.selected_model, null, "model");
      SR.cell(tr, c.baseline_target_id || "—", null, "baseline-target");
      SR.cell(tr, c.source_call_id || "—", null, "call");
      SR.cell(tr, c.reason || "", null, "reason");
      tbody.appendChild(tr);
    });
  });
  var drawReplayCells = reviewFilter("replay-show", "ineligible", replayPager, function () { return replayCells; });
  function drawReplayRun(runId, created) {
    var note = SR.clear(document.getElementById("replay-run"));
    note.appendChild(document.createTextNode(created ? "Replay run created: " : "The replay run of this review: "));
    var a = SR.link("/runs/" + encodeURIComponent(runId), runId);
    a.id = "replay-run-link";
    note.appendChild(a);
    note.appendChild(document.createTextNode(" (offline estimate, completed)."));
    note.hidden = false;
  }
  function hideReplayConfirm() { document.getElementById("replay-confirm").hidden = true; }
  function loadReplayReview() {
    var baseline = document.getElementById("replay-baseline").value;
    var failure = document.getElementById("replay-error");
    replayReview = null;
    hideReplayConfirm();
    document.getElementById("replay-create").hidden = true;
    document.getElementById("replay-run").hidden = true;
    SR.hideError(failure);
    if (!baseline) { return Promise.resolve(); }
    return SR.api("/api/replays/review?" + SR.query({ baseline_run_id: baseline, preview_run_id: id })).then(function (doc) {
      var dl = SR.clear(document.getElementById("replay-counts"));
      fact(dl, "baseline", doc.baseline_run_id);
      fact(dl, "verdict", doc.eligible ? "replayable" : "refused");
      fact(dl, "replayable cells", doc.eligible_cells);
      fact(dl, "ineligible cells", doc.ineligible_cells);
      fact(dl, "model requests", doc.model_requests);
      dl.setAttribute("data-eligible", doc.eligible ? "true" : "false");
      // every named reason: the run-level ones, then each cell reason with its count
      var problems = SR.clear(document.getElementById("replay-problems"));
      var reasons = {};
      doc.cells.forEach(function (c) { if (c.reason) { reasons[c.reason] = (reasons[c.reason] || 0) + 1; } });
      doc.problems.forEach(function (p) { problems.appendChild(SR.el("li", p)); });
      Object.keys(reasons).sort().forEach(function (r) {
        problems.appendChild(SR.el("li", r + " (" + reasons[r] + " cell" + (reasons[r] === 1 ? "" : "s") + ")"));
      });
      if (!doc.cells.length) { problems.appendChild(SR.el("li", "the preview has no routed cells")); }
      problems.hidden = doc.eligible;
      replayCells = doc.cells;
      document.getElementById("replay-show").value = "";
      drawReplayCells(false);
      document.getElementById("replay-result").hidden = false;
      if (doc.eligible) {
        replayReview = { baseline: baseline, doc: doc };
        var create = document.getElementById("replay-create");
        create.textContent = "Create the offline replay (" + doc.eligible_cells + " cell" + (doc.eligible_cells === 1 ? "" : "s") + ")";
        create.hidden = false;
        create.disabled = false;
        var made = replayMemory()[baseline];
        if (made && made.run) { drawReplayRun(made.run, false); }
      }
    }, function (e) { SR.showError(failure, e); });
  }
  document.getElementById("replay-review").addEventListener("click", function () { loadReplayReview(); });
  document.getElementById("replay-baseline").addEventListener("change", function () {
    document.getElementById("replay-result").hidden = true;
    document.getElementById("replay-run").hidden = true;
    SR.hideError(document.getElementById("replay-error"));
    replayReview = null;
  });
  document.getElementById("replay-create").addEventListener("click", function () {
    if (replayReview === null) { return; }
    text("replay-summary", "Create an offline replay run of this preview on baseline " + replayReview.baseline + ": "
      + replayReview.doc.eligible_cells + " routed cell(s) take the answer of the single model the router selected. "
      + "Zero model requests; the run is completed at once and is an estimate, not live evidence.");
    document.getElementById("replay-confirm").hidden = false;
    document.getElementById("replay-confirm-yes").disabled = false;
    document.getElementById("replay-confirm-yes").focus();
  });
  document.getElementById("replay-back").addEventListener("click", hideReplayConfirm);
  document.getElementById("replay-confirm-yes").addEventListener("click", function () {
    if (replayReview === null) { return; }
    var button = document.getElementById("replay-confirm-yes");
    if (button.disabled) { return; }
    var baseline = replayReview.baseline;
    var failure = document.getElementById("replay-error");
    button.disabled = true;
    SR.hideError(failure);
    SR.api("/api/replays", { method: "POST", body: { baseline_run_id: baseline, preview_run_id: id, idempotency_key: replayKey(baseline) } }).then(function (data) {
      rememberReplay(baseline, data.run.id);
      hideReplayConfirm();
      document.getElementById("replay-create").hidden = true;
      drawReplayRun(data.run.id, data.created);
    }, function (e) {
      SR.showError(failure, e);  // a refusal names every replay_ineligible reason
      button.disabled = false;
    });
  });

  // -- report ----------------------------------------------------------------------------
  function loadReport() {
    return SR.frame(document.getElementById("report-frame"), "/runs/" + encodeURIComponent(id) + "/report.html",
      document.getElementById("report-error"));
  }

  // -- tabs ------------------------------------------------------------------------------
  function refreshTab() {
    var work = {
      results: function () { return loadResults(resultsCursor); },
      questions: loadQuestions,
      calls: function () { activeLoop(); return loadCalls(null); },
      evidence: loadEvidence,
      recipe: loadRecipes,
      events: function () { if (eventsLoaded) { return Promise.resolve(); } eventsLoaded = true; return loadEvents(); },
      recovery: function () { return Promise.all([loadLineage(), active() ? null : loadRecovery()]); },
      report: loadReport
    }[current];
    return work ? work().catch(fail) : Promise.resolve();
  }
  var select = SR.tabs(document.getElementById("tabs"), function (name) {
    current = name;
    refreshTab();
  });

  SR.download(document.getElementById("report-json"), fail);
  var first = true;
  poller = SR.poll(function () {
    return loadRun().then(function () {
      if (first) {
        first = false;
        openStream();
        return refreshTab().then(SR.ready);
      }
      return null;
    }, function (e) {
      if (first) { first = false; SR.ready(); }
      throw e;
    });
  }, 2000);
})();
