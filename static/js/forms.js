// Forms (issue #13), an enhancement: the page works the same without it.
// After a refused submission focus moves to the error summary, so that a screen reader
// reads it first and a keyboard user starts from it; its links then focus the field
// they name (following a "#id" link only scrolls to it).
(function () {
  "use strict";
  const summary = document.querySelector(".error-summary");
  if (!summary) {
    return;
  }
  summary.setAttribute("tabindex", "-1");
  summary.focus();
  summary.addEventListener("click", function (event) {
    const link = event.target.closest("a[href^='#']");
    const field = link && document.getElementById(link.getAttribute("href").slice(1));
    if (field) {
      event.preventDefault();
      field.focus();
      field.scrollIntoView({ block: "center" });
    }
  });
})();
