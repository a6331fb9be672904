// Menus that act at once: a <select data-autosubmit> sends its form when the reader picks
// an option (the leaderboard's "Rank by", the comparison pages' measure and correction).
// The form's button stays for readers without JavaScript.
(function () {
  "use strict";
  document.addEventListener("change", function (event) {
    var select = event.target;
    if (!(select instanceof HTMLSelectElement) || !select.hasAttribute("data-autosubmit")) return;
    var form = select.form;
    if (!form) return;
    if (typeof form.requestSubmit === "function") form.requestSubmit();
    else form.submit();
  });
})();
