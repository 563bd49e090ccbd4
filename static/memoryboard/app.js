// memoryboard: small behaviours without inline scripts (the CSP forbids them).
document.addEventListener("change", (event) => {
  const el = event.target;
  if (el.matches("[data-autosubmit]")) el.form.requestSubmit();
});
document.addEventListener("submit", (event) => {
  const form = event.target;
  const question = form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
// A 400 answer to an htmx form inside [data-swap-errors] is a page fragment naming the field at fault:
// swap it in (htmx 2 does not swap 4xx answers by default).
document.addEventListener("htmx:beforeSwap", (event) => {
  const detail = event.detail;
  const source = detail.requestConfig ? detail.requestConfig.elt : detail.elt;  // detail.elt is the target
  if (detail.xhr.status === 400 && source && source.closest("[data-swap-errors]")) {
    detail.shouldSwap = true;
    detail.isError = false;
  }
});
