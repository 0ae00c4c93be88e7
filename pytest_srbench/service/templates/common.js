// srbench serve: helpers shared by every dashboard page. Data from the API (model output
// included) is untrusted: it only ever enters the page through textContent.
/* exported SR */
/* eslint no-redeclare: ["error", { "builtinGlobals": false }] */
var SR = (function () {
  "use strict";
  var TOKEN_KEY = "srbench-token";
  var asking = null;
  var TERMINAL = ["completed", "failed", "cancelled", "interrupted"];

  function token() {
    try { return window.sessionStorage.getItem(TOKEN_KEY); } catch (e) { return null; }
  }
  function askToken() {
    // One form for every request waiting on a 401; the token stays in this tab only.
    if (asking) { return asking; }
    var box = document.getElementById("token-box");
    var form = document.getElementById("token-form");
    var input = document.getElementById("token-input");
    asking = new Promise(function (resolve) {
      function submitted(event) {
        event.preventDefault();
        form.removeEventListener("submit", submitted);
        try { window.sessionStorage.setItem(TOKEN_KEY, input.value); } catch (e) { /* private mode */ }
        box.hidden = true;
        asking = null;
        resolve(input.value);
      }
      form.addEventListener("submit", submitted);
      box.hidden = false;
      input.value = "";
      input.focus();
    });
    return asking;
  }
  function ApiError(status, code, message) {
    this.status = status;
    this.code = code;
    this.message = message;
  }
  function headers(extra) {
    var out = extra || {};
    var t = token();
    if (t) { out.Authorization = "Bearer " + t; }
    return out;
  }
  function failure(response) {
    return response.text().then(function (text) {
      var code = "HTTP_" + response.status;
      var message = response.statusText || "request failed";
      try {
        var body = JSON.parse(text);
        if (body && body.error) {
          code = String(body.error.code || code);
          message = String(body.error.message || message);
        }
      } catch (e) { /* not JSON */ }
      throw new ApiError(response.status, code, message);
    });
  }
  // fetch with the bearer token; on a 401 ask for the token (once) and retry once.
  // options: method, body (JSON) or json (its text), as: "json" | "text" | "blob".
  function api(path, options, retried) {
    options = options || {};
    var init = { method: options.method || "GET", cache: "no-store", credentials: "same-origin",
                 headers: headers({ Accept: options.as === "json" || !options.as ? "application/json" : "*/*" }) };
    if (options.body !== undefined || options.json !== undefined) {
      init.headers["Content-Type"] = "application/json";  // json: a body serialized already
      init.body = options.json !== undefined ? options.json : JSON.stringify(options.body);
    }
    return fetch(path, init).then(function (response) {
      if (response.status === 401 && !retried) {
        return askToken().then(function () { return api(path, options, true); });
      }
      if (!response.ok) { return failure(response); }
      if (options.as === "text") { return response.text(); }
      if (options.as === "blob") { return response.blob(); }
      return response.json();
    }, function () {
      throw new ApiError(0, "NETWORK", "the service cannot be reached");
    });
  }
  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    return node;
  }
  function clear(node) {
    while (node.firstChild) { node.removeChild(node.firstChild); }
    return node;
  }
  function link(href, text) {
    var a = el("a", text);
    a.setAttribute("href", href);
    return a;
  }
  function cell(row, text, cls, key) {
    var td = el("td", text, cls);
    if (key) { td.setAttribute("data-col", key); }
    row.appendChild(td);
    return td;
  }
  function time(iso) {
    if (!iso) { return "—"; }
    return String(iso).slice(0, 19).replace("T", " ");
  }
  function usd(value) {
    if (value === null || value === undefined) { return "—"; }
    return "$" + (Math.abs(value) >= 0.01 ? value.toFixed(4) : value.toFixed(6));
  }
  function secs(value) {
    if (value === null || value === undefined) { return "—"; }
    return Number(value).toFixed(2) + "s";
  }
  function num(value, digits) {
    if (value === null || value === undefined) { return "—"; }
    return Number(value).toFixed(digits === undefined ? 3 : digits);
  }
  function interval(pair) {
    if (!pair || pair.length !== 2 || pair[0] === null || pair[1] === null) { return "—"; }
    return "[" + num(pair[0]) + ", " + num(pair[1]) + "]";
  }
  function short(value, max) {
    var text = typeof value === "string" ? value : JSON.stringify(value);
    if (text === undefined || text === null) { return "—"; }
    max = max || 120;
    return text.length > max ? text.slice(0, max - 1) + "…" : text;
  }
  function badge(status) {
    var kind = status === "completed" ? "ok" : (status === "running" || status === "queued") ? "run"
      : (status === "failed" || status === "interrupted") ? "bad" : "warn";
    var span = el("span", status, "badge " + kind);
    span.setAttribute("data-status", status);
    return span;
  }
  function errorText(error) {
    if (error && error.code) { return error.code + ": " + error.message; }
    return "ERROR: " + String(error && error.message ? error.message : error);
  }
  function showError(node, error) {
    node.textContent = errorText(error);
    node.hidden = false;
  }
  function hideError(node) {
    node.textContent = "";
    node.hidden = true;
  }
  function connection(ok) {
    var node = document.getElementById("conn");
    if (!node) { return; }
    if (ok) {
      node.textContent = "live · " + new Date().toLocaleTimeString();
      node.className = "conn";
    } else {
      node.textContent = "reconnecting…";
      node.className = "conn bad";
    }
  }
  // Read-only polling: a failed fetch shows "reconnecting…" and the next tick recovers.
  function poll(load, ms) {
    var timer = null;
    var busy = false;
    var again = false;
    var stopped = false;
    function tick() {
      timer = null;
      busy = true;
      Promise.resolve().then(load).then(function () { connection(true); }, function () {
        connection(false);
      }).then(function () {
        busy = false;
        if (stopped) { return; }
        timer = window.setTimeout(tick, again ? 0 : ms);
        again = false;
      });
    }
    tick();
    return {
      now: function () {
        if (stopped) { return; }
        if (busy) { again = true; return; }
        if (timer !== null) { window.clearTimeout(timer); }
        tick();
      },
      stop: function () { stopped = true; if (timer !== null) { window.clearTimeout(timer); } }
    };
  }
  function query(params) {
    var parts = new URLSearchParams();
    Object.keys(params).forEach(function (key) {
      var value = params[key];
      if (value === null || value === undefined || value === "") { return; }
      if (Array.isArray(value)) {
        value.forEach(function (v) { parts.append(key, v); });
      } else {
        parts.append(key, String(value));
      }
    });
    return parts.toString();
  }
  function ready() { document.documentElement.setAttribute("data-ready", "1"); }
  // A same-origin page (report) fetched with the token and shown in a sandboxed frame.
  function frame(iframe, path, errorNode) {
    return api(path, { as: "text" }).then(function (html) {
      iframe.srcdoc = html;
      iframe.hidden = false;
      if (errorNode) { hideError(errorNode); }
    }, function (error) {
      if (errorNode) { showError(errorNode, error); }
    });
  }
  // A download through fetch when a token is needed (a plain link cannot send the header).
  function download(anchor, onError) {
    anchor.addEventListener("click", function (event) {
      if (!token()) { return; }
      event.preventDefault();
      api(anchor.getAttribute("href"), { as: "blob" }).then(function (blob) {
        var url = URL.createObjectURL(blob);
        var a = document.createElement("a");
        a.href = url;
        a.download = anchor.getAttribute("download") || "download";
        document.body.appendChild(a);
        a.click();
        a.remove();
        window.setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
      }, function (error) { if (onError) { onError(error); } });
    });
  }
  // A filter form kept in the address: fills the fields from the query string and reads them.
  function filterForm(form, fields) {
    var params = new URLSearchParams(window.location.search);
    fields.forEach(function (key) {
      if (params.get(key)) { form.elements.namedItem(key).value = params.get(key); }
    });
    return {
      offset: Math.max(0, parseInt(params.get("offset") || "0", 10) || 0),
      values: function () {
        var out = {};
        fields.forEach(function (key) { out[key] = form.elements.namedItem(key).value.trim(); });
        return out;
      }
    };
  }
  function tabs(root, onShow) {
    var buttons = Array.prototype.slice.call(root.querySelectorAll("[role=tab]"));
    function show(button) {
      buttons.forEach(function (b) {
        var on = b === button;
        b.setAttribute("aria-selected", on ? "true" : "false");
        b.tabIndex = on ? 0 : -1;
        document.getElementById(b.getAttribute("aria-controls")).hidden = !on;
      });
      onShow(button.getAttribute("data-tab"));
    }
    buttons.forEach(function (button, index) {
      button.addEventListener("click", function () { show(button); });
      button.addEventListener("keydown", function (event) {
        var step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
        if (step) {
          var next = buttons[(index + step + buttons.length) % buttons.length];
          next.focus();
          show(next);
        }
      });
    });
    return function (name) {
      var button = root.querySelector("[role=tab][data-tab='" + name + "']");
      if (button) { show(button); }
    };
  }
  return {
    api: api, el: el, clear: clear, link: link, cell: cell, time: time, usd: usd, secs: secs,
    num: num, interval: interval, short: short, badge: badge, errorText: errorText,
    showError: showError, hideError: hideError, poll: poll, query: query, ready: ready,
    connection: connection, frame: frame, download: download, tabs: tabs, token: token,
    filterForm: filterForm,
    TERMINAL: TERMINAL
  };
})();
