// The corpora list's counts while documents are still being read: the table is fetched again every
// few seconds until every corpus's documents are all ready (or failed: they no longer change), so
// "Ready" catches up with uploads and bulk imports without a reload.
(function () {
  var POLL_MS = 3000;
  function pending(table) { return table && table.dataset.pending === "true"; }
  function poll() {
    var table = document.getElementById("corpora-table");
    if (!pending(table)) return;
    fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.text(); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("corpora-table");
        var now = document.getElementById("corpora-table");
        if (fresh && now) now.replaceWith(document.importNode(fresh, true));
      })
      .catch(function () { /* the counts stay as they were; the next poll tries again */ })
      .then(function () { setTimeout(poll, POLL_MS); });
  }
  setTimeout(poll, POLL_MS);
})();
