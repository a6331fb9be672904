// Tables that scroll inside their box (.table-wrap) under sticky headings: the heading
// row at the top, and on the leaderboard and the matrix the rank and run names at the
// left. The browser scrolls a focused link or button into the box but not out from under
// those headings, so a keyboard user could land on something hidden behind them. After
// focus moves, the box scrolls on by as much as the headings cover.
(function () {
  "use strict";
  function stuck(cell, side) {
    var style = getComputedStyle(cell);
    return style.position === "sticky" && style[side] !== "auto";
  }
  function uncover(target, cell, wrap) {
    var box = target.getBoundingClientRect();
    var left = box.left;
    if (!stuck(cell, "left")) {
      Array.prototype.forEach.call(cell.parentElement.cells, function (other) {
        if (other.cellIndex < cell.cellIndex && stuck(other, "left")) {
          left = Math.max(left, other.getBoundingClientRect().right);
        }
      });
    }
    var top = box.top;
    var head = wrap.querySelector("thead");
    if (head && !head.contains(cell) && head.rows.length && stuck(head.rows[0].cells[0], "top")) {
      top = Math.max(top, head.getBoundingClientRect().bottom);
    }
    if (left > box.left) wrap.scrollLeft -= left - box.left + 4;
    if (top > box.top) wrap.scrollTop -= top - box.top + 4;
  }
  document.addEventListener("focusin", function (event) {
    var target = event.target;
    var wrap = target.closest && target.closest(".table-wrap");
    var cell = wrap && target.closest("td, th");
    if (!cell || !wrap.contains(cell)) return;
    // after the browser's own scrolling into view
    window.requestAnimationFrame(function () { uncover(target, cell, wrap); });
  });
})();
