// Annotating an assigned question: 1/2/3 choose the answerability, Ctrl+Enter saves.
// Keys typed into a text field are left alone.
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
    var radio = form.querySelector("input[name='answerability'][data-key='" + event.key + "']");
    if (radio) {
      radio.checked = true;
      radio.focus();
      event.preventDefault();
    }
  });
})();
