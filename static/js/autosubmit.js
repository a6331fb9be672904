// Menus that act at once: a <select data-autosubmit> sends its form when the reader picks
// an option (the leaderboard's "Rank by", the comparison pages' measure and correction),
// and an <input type="checkbox" data-autosubmit> when it is ticked or cleared (the
// leaderboard's "Best run per team").
// The form's button stays for readers without JavaScript.
(function () {
  "use strict";
  document.addEventListener("change", function (event) {
    var control = event.target;
    var acts = control instanceof HTMLSelectElement ||
      (control instanceof HTMLInputElement && control.type === "checkbox");
    if (!acts || !control.hasAttribute("data-autosubmit")) return;
    var form = control.form;
    if (!form) return;
    if (typeof form.requestSubmit === "function") form.requestSubmit();
    else form.submit();
  });
})();
