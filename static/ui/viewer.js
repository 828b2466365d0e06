// Document viewer: bring the first highlighted sentence into view when the URL names none.
(function () {
  "use strict";
  if (window.location.hash) return;
  var first = document.querySelector(".sentences li.highlighted");
  if (first) first.scrollIntoView({ block: "center" });
})();
