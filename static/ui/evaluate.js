// Run page: follow a queued or running evaluation; reload once it has finished to show its tables.
(function () {
  "use strict";
  var box = document.getElementById("run-progress");
  if (!box) return;
  var bar = document.getElementById("run-bar");
  var status = document.getElementById("run-status");
  var count = document.getElementById("run-count");
  var percent = document.getElementById("run-percent");
  var delay = 1000;
  function poll() {
    fetch(box.dataset.progressUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(function (run) {
        bar.value = run.percent;
        status.textContent = run.status;
        status.className = "badge " + run.status;
        count.textContent = run.done + " of " + run.total + " cases";
        percent.textContent = run.percent + "%";
        if (run.status === "done" || run.status === "failed") {
          window.location.reload();
          return;
        }
        delay = Math.min(delay * 1.2, 4000);
        window.setTimeout(poll, delay);
      })
      .catch(function () { delay = Math.min(delay * 2, 15000); window.setTimeout(poll, delay); });
  }
  window.setTimeout(poll, 500);
})();
