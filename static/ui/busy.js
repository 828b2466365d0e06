// A form that runs for seconds before its page comes back (the checks of "Check answers and
// citations") says so from the moment it is sent: what is running and for how long, with its
// button disabled so that a second click does not send it again.
document.querySelectorAll("form[data-busy]").forEach((form) => {
  form.addEventListener("submit", () => {
    const button = form.querySelector('button[type="submit"]');
    const status = document.createElement("p");
    status.className = "busy-status muted";
    status.setAttribute("role", "status");
    form.appendChild(status);
    const started = Date.now();
    const tick = () => {
      const seconds = Math.floor((Date.now() - started) / 1000);
      status.textContent = `${form.dataset.busy}… ${seconds} s`;
    };
    tick();
    setInterval(tick, 1000);
    // Disabled after the browser has read the form, so the submission itself is unchanged.
    if (button) setTimeout(() => { button.disabled = true; }, 0);
  });
});
