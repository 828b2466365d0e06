// Ask page: follow each pending question job until it is done, then swap in
// the server-rendered answer. Polls the REST API (session auth).
(function () {
  "use strict";

  // The steps as the page drew them (ui.presenters.STEPS); this list only when it drew none.
  var DEFAULT_STEPS = ["queued", "retrieval", "generation", "citation", "verification", "done"];
  var MESSAGES = {
    queued: "Queued: waiting for a worker…",
    retrieval: "Retrieving and ranking passages…",
    generation: "Writing the answer…",
    citation: "Citing the sources…",
    verification: "Verifying each sentence against its sources…",
    done: "Done.",
  };

  function stepsOf(turn) {
    var drawn = Array.prototype.map.call(turn.querySelectorAll(".progress-steps li"), function (li) {
      return li.dataset.step;
    });
    return drawn.length ? drawn : DEFAULT_STEPS;
  }

  function announce(text) {
    var live = document.getElementById("live-announcer");
    if (!live) {
      live = document.createElement("div");
      live.id = "live-announcer";
      live.className = "visually-hidden";
      live.setAttribute("aria-live", "polite");
      live.setAttribute("role", "status");
      document.body.appendChild(live);
    }
    live.textContent = "";
    window.setTimeout(function () { live.textContent = text; }, 50);
  }

  function stepOf(job, steps) {
    if (job.status === "done") return "done";
    if (job.status === "failed") return "failed";
    if (steps.indexOf(job.stage) >= 0) return job.stage;
    return "queued";
  }

  function showStep(turn, step, steps) {
    var position = steps.indexOf(step);
    turn.querySelectorAll(".progress-steps li").forEach(function (li) {
      var index = steps.indexOf(li.dataset.step);
      var state = index < position ? "complete" : index === position ? "current" : "pending";
      li.className = state;
      var hidden = li.querySelector(".visually-hidden");
      if (hidden) hidden.textContent = " (" + state + ")";
    });
    var status = turn.querySelector(".job-status");
    if (status && MESSAGES[step]) {
      status.innerHTML = '<span class="spinner" aria-hidden="true"></span> ';
      status.appendChild(document.createTextNode(MESSAGES[step]));
    }
  }

  function replaceTurn(turn, finalStep) {
    return fetch(turn.dataset.turnUrl, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        var holder = document.createElement("div");
        holder.innerHTML = html.trim();
        var fresh = holder.firstElementChild;
        turn.replaceWith(fresh);
        if (finalStep === "done") {
          var sentences = fresh.querySelectorAll(".answer-sentence").length;
          var refused = fresh.querySelector(".answer-refused");
          var unsure = fresh.querySelector(".answer-low-confidence");
          announce(refused ? "No answer: the corpus does not support one."
            : unsure ? "This may not answer your question: " + sentences + " sentence(s), sources collapsed."
            : "Answer ready: " + sentences + " sentence(s).");
        } else {
          announce("The question failed. " + (fresh.querySelector(".job-status") || {}).textContent);
        }
      });
  }

  function follow(turn) {
    var delay = 700;
    var lastStep = null;
    var steps = stepsOf(turn);
    // Progress only moves forward: a stage re-queued after its worker stopped, or one between the
    // drawn steps (planning, combining parts), keeps the furthest step shown.
    var furthest = 0;
    turn.querySelectorAll(".progress-steps li").forEach(function (li, index) {
      if (li.className === "complete" || li.className === "current") furthest = index;
    });
    function poll() {
      fetch(turn.dataset.statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) {
          if (!response.ok) throw new Error("HTTP " + response.status);
          return response.json();
        })
        .then(function (job) {
          var step = stepOf(job, steps);
          if (step !== "done" && step !== "failed") {
            if (steps.indexOf(step) < furthest) step = steps[furthest];
            furthest = steps.indexOf(step);
          }
          if (step !== lastStep) {
            lastStep = step;
            turn.dataset.step = step;
            if (step !== "done" && step !== "failed") {
              showStep(turn, step, steps);
              announce(MESSAGES[step]);
            }
          }
          if (step === "done" || step === "failed") return replaceTurn(turn, step);
          delay = Math.min(delay * 1.3, 3000);
          window.setTimeout(poll, delay);
        })
        .catch(function () {
          // A hiccup (server restart, network): keep trying, more slowly.
          delay = Math.min(delay * 2, 10000);
          window.setTimeout(poll, delay);
        });
    }
    poll();
  }

  document.querySelectorAll("[data-pending='true']").forEach(follow);

  var form = document.getElementById("ask-form");
  if (form) {
    var textarea = form.querySelector("textarea");
    if (textarea) {
      // Ctrl/Cmd+Enter asks, as in most chat tools; Enter alone makes a new line.
      textarea.addEventListener("keydown", function (event) {
        if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
          event.preventDefault();
          form.requestSubmit();
        }
      });
    }
    form.addEventListener("submit", function () {
      var button = form.querySelector("button[type='submit']");
      if (button) {
        // Disabled after the submit event has been dispatched, so the form still posts.
        window.setTimeout(function () { button.disabled = true; button.textContent = "Asking…"; }, 0);
      }
    });
  }
})();

// The "advanced" disclosure: show the alpha slider's value, and moving it means "set alpha".
(function () {
  "use strict";
  var slider = document.getElementById("id_alpha");
  var output = document.getElementById("alpha-value");
  var setBox = document.getElementById("id_alpha_set");
  if (!slider || !output) return;
  slider.addEventListener("input", function () {
    output.textContent = slider.value;
    if (setBox) setBox.checked = true;
  });
})();
