// Annotate page: mark selected evidence sentences and keep a running count (announced politely).
(function () {
  "use strict";
  var list = document.getElementById("evidence-list");
  if (!list) return;
  var count = document.getElementById("evidence-count");
  function update() {
    var boxes = list.querySelectorAll("input[type='checkbox']");
    var n = 0;
    boxes.forEach(function (box) {
      box.closest("li").classList.toggle("selected", box.checked);
      if (box.checked) n += 1;
    });
    count.textContent = n + " evidence sentence" + (n === 1 ? "" : "s") + " selected.";
  }
  list.addEventListener("change", update);
})();
