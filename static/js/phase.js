// Phase times: each <time data-local> also in the reader's own time zone, and each
// [data-countdown] kept current. The page works without it (UTC and a server-side count).
(function () {
  "use strict";
  const units = [["day", 86400], ["hour", 3600], ["minute", 60]];
  function left(ms) {
    let seconds = Math.max(Math.floor(ms / 1000), 0);
    const parts = [];
    for (const [name, size] of units) {
      const n = Math.floor(seconds / size);
      seconds -= n * size;
      if (n > 0 && parts.length < 2) parts.push(n + " " + name + (n === 1 ? "" : "s"));
    }
    return parts.length ? parts.join(", ") : "less than a minute";
  }
  document.querySelectorAll("time[data-local]").forEach(function (node) {
    const local = new Date(node.getAttribute("datetime"));
    const span = document.createElement("span");
    span.className = "local-time";
    span.textContent = " (" + local.toLocaleString([], {dateStyle: "medium", timeStyle: "short"}) + " your time)";
    node.after(span);
  });
  function tick() {
    document.querySelectorAll("[data-countdown]").forEach(function (node) {
      const ms = new Date(node.getAttribute("data-countdown")) - new Date();
      const suffix = node.textContent.endsWith(" left") ? " left" : "";
      node.textContent = left(ms) + suffix;
    });
  }
  tick();
  setInterval(tick, 30000);
})();
