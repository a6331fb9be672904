// Live status of a queued or running run: polls the status URL and updates the page in
// place; once the run is scored the page reloads once to show its scores.
(function () {
  "use strict";
  var box = document.getElementById("run-status");
  if (!box || !box.dataset.statusUrl) return;
  var url = box.dataset.statusUrl;
  var explain = { queued: "Waiting for a worker.", running: "Being scored now.", scored: "Scored: loading the results…", failed: "Scoring failed.", withdrawn: "Withdrawn." };
  var delay = 1500;
  function field(name) { return box.querySelector('[data-field="' + name + '"]'); }
  function show(data) {
    var status = data.status || "";
    // Keep the server's own explanation (e.g. "stored, scored shortly") until the status moves.
    if (status !== box.dataset.status) field("explain").textContent = explain[status] || "";
    box.className = "status status-" + status;
    box.dataset.status = status;
    field("status").textContent = status.charAt(0).toUpperCase() + status.slice(1);
    var failure = field("failure");
    failure.textContent = data.failure_reason || "";
    failure.hidden = !data.failure_reason;
  }
  function poll() {
    fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("status " + response.status);
        return response.json();
      })
      .then(function (data) {
        show(data);
        if (data.status === "scored") { window.location.reload(); return; }
        if (data.finished || data.status === "failed" || data.status === "withdrawn") {
          var polling = field("polling");
          if (polling) polling.hidden = true;
          return;
        }
        delay = Math.min(delay * 1.3, 10000);
        window.setTimeout(poll, delay);
      })
      .catch(function () { delay = Math.min(delay * 2, 30000); window.setTimeout(poll, delay); });
  }
  window.setTimeout(poll, delay);
})();
