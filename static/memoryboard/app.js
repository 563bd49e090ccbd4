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
