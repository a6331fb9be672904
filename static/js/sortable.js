// Sortable tables: every table.sortable gets a button in each column heading. Sorting
// uses a cell's data-sort value when it has one (the exact number), its text otherwise.
// Without JavaScript the table stays as the server ordered it.
(function () {
  "use strict";
  function key(cell) {
    var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    var num = parseFloat(raw);
    return isNaN(num) || !/^[-+]?[\d.]/.test(raw) ? { n: null, s: raw.toLowerCase() } : { n: num, s: "" };
  }
  function compare(a, b) {
    if (a.n !== null && b.n !== null) return a.n - b.n;
    if (a.n !== null) return -1;
    if (b.n !== null) return 1;
    return a.s < b.s ? -1 : a.s > b.s ? 1 : 0;
  }
  function sortBy(table, index, heading) {
    var body = table.tBodies[0];
    var descending = heading.getAttribute("aria-sort") !== "descending";
    var rows = Array.prototype.slice.call(body.rows).map(function (row, i) {
      return { row: row, i: i, k: key(row.cells[index]) };
    });
    rows.sort(function (x, y) {
      var c = compare(x.k, y.k);
      return (descending ? -c : c) || x.i - y.i;
    });
    var fragment = document.createDocumentFragment();
    rows.forEach(function (r) { fragment.appendChild(r.row); });
    body.appendChild(fragment);
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.removeAttribute("aria-sort"); });
    heading.setAttribute("aria-sort", descending ? "descending" : "ascending");
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    if (!table.tHead || !table.tBodies.length) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      button.addEventListener("click", function () { sortBy(table, index, th); });
    });
  });
})();
