// Annotating an assigned question: 1/2/3 choose the answerability, j/k move between evidence
// sentences (space toggles one), / searches, o opens a document, r goes to the reference answer,
// s skips, Ctrl+Enter saves. Keys typed into a text field are left alone.
(function () {
  "use strict";
  var form = document.getElementById("task-annotate-form");
  if (!form) return;
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target && (target.tagName === "TEXTAREA" || target.tagName === "SELECT" || (target.tagName === "INPUT" && ["text", "search", ""].indexOf(target.type || "") !== -1));
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      document.getElementById("save-annotation").click();
      return;
    }
    // Enter in the search box searches and in the skip reason skips; the form's first button would save.
    var own = { query: "search", skip_reason: "skip" }[target && target.id];
    if (event.key === "Enter" && own) {
      event.preventDefault();
      form.querySelector("button[value='" + own + "']").click();
      return;
    }
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "j" || event.key === "k") {
      var boxes = Array.prototype.slice.call(form.querySelectorAll("#evidence-list input[name='evidence']"));
      if (!boxes.length) return;
      var at = boxes.indexOf(target);
      var next = at === -1 ? 0 : Math.min(Math.max(at + (event.key === "j" ? 1 : -1), 0), boxes.length - 1);
      boxes[next].focus();
      boxes[next].scrollIntoView({ block: "nearest" });
      event.preventDefault();
      return;
    }
    var field = { "/": "query", o: "open_document", r: "reference_answer", s: "skip_reason" }[event.key];
    if (field) {
      if (field === "skip_reason") document.getElementById("skip").open = true;
      document.getElementById(field).focus();
      event.preventDefault();
      return;
    }
    var radio = form.querySelector("input[name='answerability'][data-key='" + event.key + "']");
    if (radio) {
      radio.checked = true;
      radio.focus();
      event.preventDefault();
    }
  });
})();
