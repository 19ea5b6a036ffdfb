// toolreg web index: progressive enhancement only. Every page works without
// this file: the search form is a plain GET, the pin snippet is selectable text.
// With it: results update as you type (the server renders the results region
// as a fragment when asked with `X-Partial: results`), and copy buttons work.
(function () {
  "use strict";

  // ---- search as you type ----------------------------------------------
  var form = document.getElementById("search-form");
  var region = document.getElementById("results");
  if (form && region && window.fetch && window.URLSearchParams && window.FormData) {
    var timer = null;
    var inflight = null;
    var last = null;

    var queryString = function () {
      var params = new URLSearchParams();
      new FormData(form).forEach(function (value, key) {
        if (typeof value === "string" && value !== "" && key !== "page") {
          params.append(key, value);
        }
      });
      return params.toString();
    };

    var refresh = function () {
      var qs = queryString();
      if (qs === last) return;
      last = qs;
      if (inflight) inflight.abort();
      inflight = window.AbortController ? new AbortController() : null;
      region.setAttribute("aria-busy", "true");
      fetch("/" + (qs ? "?" + qs : ""), {
        headers: { "X-Partial": "results" },
        credentials: "same-origin",
        signal: inflight ? inflight.signal : undefined
      })
        .then(function (res) {
          // 4xx answers carry a message for the results region (e.g. a bad filter).
          if (!res.ok && (res.status < 400 || res.status >= 500)) throw new Error("search failed: " + res.status);
          return res.text();
        })
        .then(function (html) {
          region.innerHTML = html;
          region.removeAttribute("aria-busy");
          var url = window.location.pathname + (qs ? "?" + qs : "");
          window.history.replaceState(null, "", url);
        })
        .catch(function (err) {
          if (err && err.name === "AbortError") return;
          region.removeAttribute("aria-busy");
          last = null; // let the next keystroke retry
        });
    };

    var schedule = function (delay) {
      if (timer) clearTimeout(timer);
      timer = setTimeout(refresh, delay);
    };

    last = queryString();
    form.addEventListener("input", function (ev) {
      schedule(ev.target && ev.target.tagName === "SELECT" ? 0 : 250);
    });
    form.addEventListener("change", function () { schedule(0); });
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      if (timer) clearTimeout(timer);
      last = null;
      refresh();
    });
  }

  // ---- copy buttons ------------------------------------------------------
  var selectText = function (el) {
    if (el.select) { el.select(); return; }
    var range = document.createRange();
    range.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  };
  var buttons = document.querySelectorAll("button[data-copy]");
  Array.prototype.forEach.call(buttons, function (button) {
    var source = document.getElementById(button.getAttribute("data-copy"));
    var status = document.getElementById(button.getAttribute("data-copy-status") || "");
    if (!source) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = (source.value !== undefined ? source.value : source.textContent).trim();
      var done = function (ok) {
        if (status) status.textContent = ok ? "Copied to the clipboard." : "Copy failed: select the text and copy it.";
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(function () { done(true); }, function () {
          selectText(source);
          done(false);
        });
      } else {
        selectText(source);
        var ok = false;
        try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
        done(ok);
      }
    });
  });

})();
