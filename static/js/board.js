// The leaderboard's sideways-scrolling table: marks the wrapper while there is more to the
// right (a shadow in site.css) and hides the "scroll for more" hint when nothing overflows.
// Without JavaScript the hint shows on narrow screens (CSS) and the table still scrolls.
(function () {
  "use strict";
  var wrap = document.getElementById("board-wrap");
  var hint = document.getElementById("board-scroll-hint");
  if (!wrap) return;
  function update() {
    var overflow = wrap.scrollWidth - wrap.clientWidth > 1;
    var atEnd = wrap.scrollLeft + wrap.clientWidth >= wrap.scrollWidth - 1;
    wrap.classList.toggle("more-right", overflow && !atEnd);
    wrap.classList.toggle("more-left", overflow && wrap.scrollLeft > 1);
    if (hint) hint.hidden = !overflow;
  }
  wrap.addEventListener("scroll", update, { passive: true });
  window.addEventListener("resize", update);
  update();
})();
