// Corpus page (staff): upload files through the REST API, one request per file,
// and follow each resulting document until it is ready or failed.
(function () {
  "use strict";

  var form = document.getElementById("upload-form");
  if (!form) return;
  var input = document.getElementById("upload-files");
  var rows = document.getElementById("upload-rows");
  var results = document.getElementById("upload-results");
  var summary = document.getElementById("upload-summary");
  var dropzone = document.getElementById("dropzone");
  var reingestInput = document.getElementById("reingest-file");
  var csrf = form.querySelector("input[name='csrfmiddlewaretoken']").value;
  var uploadUrl = form.dataset.uploadUrl;
  var PARALLEL_UPLOADS = 3;
  var tracked = []; // {state: "uploading"|"queued"|...|"ready"|"failed"|"refused"}

  function cell(text, className) {
    var td = document.createElement("td");
    if (className) td.className = className;
    if (text) td.textContent = text;
    return td;
  }

  function newRow(name) {
    var tr = document.createElement("tr");
    var nameCell = cell(name);
    var statusCell = cell("");
    var badge = document.createElement("span");
    badge.className = "badge queued";
    badge.textContent = "waiting";
    statusCell.appendChild(badge);
    var progressCell = cell("");
    var bar = document.createElement("progress");
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute("aria-label", "Progress of " + name);
    progressCell.appendChild(bar);
    var detail = cell("", "small");
    tr.append(nameCell, statusCell, progressCell, detail);
    rows.appendChild(tr);
    var item = { tr: tr, name: name, badge: badge, bar: bar, detail: detail, nameCell: nameCell, state: "waiting" };
    tracked.push(item);
    return item;
  }

  // The counts by status and the document list, fetched again as documents finish, so they
  // never say "0 documents" beside a finished upload. At most one fetch at a time; a document that
  // finishes meanwhile asks for one more after it.
  var refreshing = false;
  var refreshAgain = false;
  function refreshDocumentList() {
    if (refreshing) { refreshAgain = true; return; }
    refreshing = true;
    fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.text(); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        ["document-counts", "documents-section"].forEach(function (id) {
          var now = document.getElementById(id);
          var next = fresh.getElementById(id);
          if (now && next) now.replaceWith(document.importNode(next, true));
        });
      })
      .catch(function () { /* the list stays as it was; the upload rows still say what happened */ })
      .then(function () {
        refreshing = false;
        if (refreshAgain) { refreshAgain = false; refreshDocumentList(); }
      });
  }

  var FINAL_STATES = { ready: true, unchanged: true, failed: true };

  function setState(item, state, percent, detail) {
    if (FINAL_STATES[state] && item.state !== state) refreshDocumentList();
    item.state = state;
    item.badge.className = "badge " + ({ uploading: "queued", refused: "failed", unchanged: "ready" }[state] || state);
    item.badge.textContent = state;
    if (percent !== null && percent !== undefined) {
      item.bar.value = percent;
      item.bar.setAttribute("aria-valuetext", percent + "%");
    }
    if (detail !== undefined) item.detail.textContent = detail;
    item.tr.dataset.state = state;
    updateSummary();
  }

  function updateSummary() {
    var counts = {};
    tracked.forEach(function (item) { counts[item.state] = (counts[item.state] || 0) + 1; });
    var finished = (counts.ready || 0) + (counts.unchanged || 0) + (counts.failed || 0) + (counts.refused || 0);
    var parts = [];
    ["ready", "unchanged", "failed", "refused"].forEach(function (k) { if (counts[k]) parts.push(counts[k] + " " + k); });
    if (finished === tracked.length) {
      summary.textContent = "Finished: " + parts.join(", ") + ". The document list below is up to date.";
    } else {
      summary.textContent = finished + " of " + tracked.length + " finished" + (parts.length ? " (" + parts.join(", ") + ")" : "") + "…";
    }
  }

  function documentProgress(doc) {
    if (doc.status === "ready") return 100;
    if (doc.status === "queued") return 5;
    if (doc.status === "parsing") return 10;
    if (doc.status === "embedding") return 10 + Math.round(0.9 * (doc.progress || 0));
    return 0;
  }

  function follow(item, doc) {
    var link = document.createElement("a");
    link.href = form.dataset.documentUrl.replace("/0/", "/" + doc.id + "/");
    link.textContent = doc.title || doc.external_id;
    item.nameCell.textContent = "";
    item.nameCell.appendChild(link);
    var idLine = document.createElement("div");
    idLine.className = "mono small muted";
    idLine.textContent = doc.external_id + (item.name ? " · " + item.name : "");
    item.nameCell.appendChild(idLine);
    if (doc.changed === false && doc.status === "ready") {
      setState(item, "unchanged", 100, "Same content as the stored version: nothing to do.");
      return;
    }
    var delay = 600;
    function poll() {
      fetch(doc.status_url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
        .then(function (fresh) {
          if (fresh.status === "ready") {
            setState(item, "ready", 100, (fresh.sentence_count != null ? fresh.sentence_count + " sentences. " : "") + (fresh.error || ""));
            return;
          }
          if (fresh.status === "failed") {
            setState(item, "failed", 0, fresh.error || "Ingestion failed.");
            return;
          }
          setState(item, fresh.status, documentProgress(fresh),
            fresh.status === "embedding" ? "Embedding sentences: " + fresh.progress + "%" : "");
          delay = Math.min(delay * 1.25, 3000);
          window.setTimeout(poll, delay);
        })
        .catch(function (error) {
          if (String(error.message).indexOf("404") >= 0) {
            setState(item, "failed", 0, "The document was deleted.");
            return;
          }
          delay = Math.min(delay * 2, 10000);
          window.setTimeout(poll, delay);
        });
    }
    setState(item, doc.status, documentProgress(doc), "");
    poll();
  }

  function upload(file, externalId) {
    var item = newRow(file.name);
    return new Promise(function (resolve) {
      var data = new FormData();
      data.append("files", file, file.name);
      if (externalId) data.append("external_id", externalId);
      var xhr = new XMLHttpRequest();
      xhr.open("POST", uploadUrl);
      xhr.setRequestHeader("X-CSRFToken", csrf);
      xhr.setRequestHeader("Accept", "application/json");
      xhr.upload.addEventListener("progress", function (event) {
        if (event.lengthComputable) {
          // Sending the bytes is the first 5% of a document's way to "ready".
          setState(item, "uploading", Math.round(5 * event.loaded / event.total), "Uploading " + Math.round(100 * event.loaded / event.total) + "%");
        }
      });
      xhr.addEventListener("load", function () {
        var body = {};
        try { body = JSON.parse(xhr.responseText); } catch (e) { body = { detail: "The server answered " + xhr.status + "." }; }
        if (xhr.status === 202) {
          var documents = body.documents || [];
          documents.forEach(function (doc, index) { follow(index === 0 ? item : newRow(file.name), doc); });
          (body.errors || []).forEach(function (error) { setState(newRow(error.file), "refused", 0, error.detail); });
        } else {
          setState(item, "refused", 0, body.detail || ("The server answered " + xhr.status + "."));
        }
        resolve();
      });
      xhr.addEventListener("error", function () {
        setState(item, "refused", 0, "The upload did not reach the server. Check the connection and try again.");
        resolve();
      });
      setState(item, "uploading", 0, "Uploading…");
      xhr.send(data);
    });
  }

  function uploadAll(files, externalId) {
    if (!files.length) return;
    results.hidden = false;
    var queue = Array.prototype.slice.call(files);
    function next() {
      var file = queue.shift();
      return file ? upload(file, externalId).then(next) : Promise.resolve();
    }
    var workers = [];
    for (var i = 0; i < Math.min(PARALLEL_UPLOADS, queue.length); i++) workers.push(next());
    return Promise.all(workers);
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (!input.files.length) {
      summary.textContent = "Choose at least one file first.";
      results.hidden = false;
      input.focus();
      return;
    }
    var files = input.files;
    uploadAll(files).then(function () { input.value = ""; });
  });

  ["dragenter", "dragover"].forEach(function (name) {
    dropzone.addEventListener(name, function (event) { event.preventDefault(); dropzone.classList.add("dragging"); });
  });
  ["dragleave", "drop"].forEach(function (name) {
    dropzone.addEventListener(name, function () { dropzone.classList.remove("dragging"); });
  });
  dropzone.addEventListener("drop", function (event) {
    event.preventDefault();
    uploadAll(event.dataTransfer.files);
  });

  // Re-ingest: replace one document's content with a new file under the same id.
  var reingestId = null;
  // Delegated: the document list is replaced as documents finish, its buttons with it.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button.reingest");
    if (!button) return;
    reingestId = button.dataset.externalId;
    reingestInput.value = "";
    reingestInput.click();
  });
  if (reingestInput) {
    reingestInput.addEventListener("change", function () {
      if (reingestInput.files.length && reingestId) uploadAll(reingestInput.files, reingestId);
    });
  }
})();
