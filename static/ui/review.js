// Review page: cite by clicking sentences in the viewer panel; add sentences; switch documents
// without losing what has been typed. Without JavaScript the same form takes sentences typed as the
// viewer shows them, document:number (a bare number is a sentence id, as older pages wrote them).
(function () {
  "use strict";

  var rowsBox = document.getElementById("correction-rows");
  if (!rowsBox) return;
  var addButton = document.getElementById("add-sentence");
  var panelForm = document.getElementById("panel-form");
  var active = null;
  var labels = {}; // reference ("document:3") or sentence id -> "document 3", learnt from the panels seen

  function rows() { return Array.prototype.slice.call(rowsBox.querySelectorAll(".correction-row")); }
  function idsOf(row) {
    var raw = row.querySelector("input.cites").value;
    return raw.split(raw.indexOf(",") >= 0 ? "," : /\s+/).map(function (t) { return t.trim().replace(/^#(\d+)$/, "$1"); })
      .filter(function (t) { return /^\d+$/.test(t) || /.:./.test(t); });
  }
  function setIds(row, ids) {
    // Commas when a document id holds a space, so each reference stays whole.
    row.querySelector("input.cites").value = ids.join(ids.some(function (r) { return / /.test(r); }) ? ", " : " ");
    renderChips(row);
    syncPanel();
  }

  function learnLabels() {
    document.querySelectorAll("#pick-panel .pick").forEach(function (button) {
      labels[button.dataset.sentenceId] = labels[button.dataset.ref] = button.dataset.document + " " + button.dataset.label;
    });
  }

  function renderChips(row) {
    var box = row.querySelector(".chips");
    box.textContent = "";
    idsOf(row).forEach(function (id) {
      var chip = document.createElement("span");
      chip.className = "chip";
      chip.appendChild(document.createTextNode(labels[id] || (/^\d+$/.test(id) ? "#" + id : id)));
      var remove = document.createElement("button");
      remove.type = "button";
      remove.textContent = "×";
      remove.setAttribute("aria-label", "Remove citation " + (labels[id] || id));
      remove.addEventListener("click", function () {
        setIds(row, idsOf(row).filter(function (x) { return x !== id; }));
        row.querySelector("input.cites").focus();
      });
      chip.appendChild(remove);
      box.appendChild(chip);
    });
  }

  function activate(row) {
    active = row;
    rows().forEach(function (r) {
      r.classList.toggle("active", r === row);
      // The button keeps its name; its pressed state and a hint say which sentence the viewer cites for.
      r.querySelector(".cite-from-viewer").setAttribute("aria-pressed", r === row ? "true" : "false");
      var hint = r.querySelector(".active-hint");
      if (hint) hint.hidden = r !== row;
    });
    syncPanel();
  }

  function syncPanel() {
    var ids = active ? idsOf(active) : [];
    document.querySelectorAll("#pick-panel .pick").forEach(function (button) {
      var cited = ids.indexOf(button.dataset.ref) >= 0 || ids.indexOf(button.dataset.sentenceId) >= 0;
      button.setAttribute("aria-pressed", cited ? "true" : "false");
    });
  }

  function renumber() {
    rows().forEach(function (row, index) {
      row.querySelector(".row-number").textContent = index + 1;
      var text = row.querySelector("textarea");
      var cites = row.querySelector("input.cites");
      text.id = "sentence-text-" + (index + 1);
      cites.id = "sentence-cites-" + (index + 1);
      row.querySelectorAll("label")[0].htmlFor = text.id;
      row.querySelectorAll("label")[1].htmlFor = cites.id;
    });
  }

  function wire(row) {
    var button = row.querySelector(".cite-from-viewer");
    button.hidden = false;
    button.addEventListener("click", function () { activate(row); });
    row.querySelector("textarea").addEventListener("focus", function () { activate(row); });
    row.querySelector("input.cites").addEventListener("focus", function () { activate(row); });
    row.querySelector("input.cites").addEventListener("input", function () { renderChips(row); syncPanel(); });
    renderChips(row);
  }

  function wirePanel() {
    learnLabels();
    document.querySelectorAll("#pick-panel .pick").forEach(function (button) {
      button.addEventListener("click", function () {
        if (!active) activate(rows()[0]);
        var refs = idsOf(active).filter(function (r) { return r !== button.dataset.sentenceId; });
        var at = refs.indexOf(button.dataset.ref);
        if (at >= 0) refs.splice(at, 1); else if (refs.length === idsOf(active).length) refs.push(button.dataset.ref);
        setIds(active, refs);
      });
    });
    rows().forEach(renderChips);
    syncPanel();
  }

  rows().forEach(wire);
  wirePanel();
  if (rows().length) activate(rows()[0]);

  addButton.hidden = false;
  addButton.addEventListener("click", function () {
    var template = rows()[rows().length - 1];
    var row = template.cloneNode(true);
    row.querySelector("textarea").value = "";
    row.querySelector("input.cites").value = "";
    row.querySelector("input.cites").removeAttribute("aria-invalid");
    row.querySelectorAll(".errorlist, .help").forEach(function (n) { n.remove(); });
    rowsBox.appendChild(row);
    renumber();
    wire(row);
    activate(row);
    row.querySelector("textarea").focus();
  });

  if (panelForm) {
    var select = document.getElementById("panel-doc");
    var showButton = document.getElementById("panel-show");
    if (showButton) showButton.hidden = true;
    select.addEventListener("change", function () {
      var url = panelForm.dataset.fragmentUrl.replace("/0/", "/" + select.value + "/");
      fetch(url, { credentials: "same-origin" })
        .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.text(); })
        .then(function (html) {
          var holder = document.createElement("div");
          holder.innerHTML = html.trim();
          document.getElementById("pick-panel").replaceWith(holder.firstElementChild);
          wirePanel();
        })
        .catch(function () { panelForm.submit(); });
    });
  }
})();
