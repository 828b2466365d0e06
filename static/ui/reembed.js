// Corpus page: follow a re-embedding in progress, and reload once the corpus has switched models.
(function () {
  "use strict";

  var section = document.getElementById("embedding");
  var status = document.getElementById("embedding-job-status");
  if (!section || !status) return;
  var bar = document.getElementById("embedding-job-progress");
  var count = document.getElementById("embedding-job-count");

  function poll() {
    fetch(section.dataset.statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (body) {
        var job = body && body.jobs[0];
        if (!job) return;
        status.textContent = job.status;
        status.className = "badge " + job.status;
        bar.value = job.progress;
        count.textContent = job.documents_done + " of " + job.documents_total + " documents";
        if (job.status === "queued" || job.status === "running") {
          window.setTimeout(poll, 2000);
        } else {
          window.location.reload();
        }
      })
      .catch(function () { window.setTimeout(poll, 5000); });
  }
  window.setTimeout(poll, 1000);
})();
