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
// The replay's model choice ([data-presets]) fills, at once, the placeholders of the price and cache fields
// with that model's values (what an empty field will use), and names the cache model "as the model" uses;
// the cache write placeholder follows the input price, the cache model and its lifetime.
function replayPresetValues(form) {
  const select = form.querySelector("select[data-presets]");
  const option = select && select.selectedOptions[0];
  return option ? JSON.parse(option.dataset.values || "{}") : {};
}
function replayWritePlaceholder(form) {
  const values = replayPresetValues(form);
  const price = form.elements.price_input, write = form.elements.price_write;
  if (!price || !write) return;
  const input = parseFloat(price.value || price.placeholder) || 0;
  const kind = (form.elements.cache_model && form.elements.cache_model.value) || values.cache_model;
  const ttl = parseInt((form.elements.cache_ttl && form.elements.cache_ttl.value) || "300", 10);
  const factor = kind === "anthropic" ? (ttl === 3600 ? 2 : 1.25) : 1;
  write.placeholder = String(Math.round(input * factor * 10000) / 10000);
}
function replayFollowPreset(select) {
  const form = select.form;
  const values = replayPresetValues(form);
  for (const [name, value] of Object.entries(values)) {
    const field = form.elements[name];
    if (field && field.tagName === "INPUT") field.placeholder = String(value);
  }
  const cache = form.elements.cache_model;
  const asModel = cache && cache.querySelector("option[data-as-model]");
  if (asModel && values.cache_model) {
    const labels = JSON.parse(cache.dataset.labels || "{}");
    asModel.textContent = `${asModel.dataset.asModel} (${labels[values.cache_model] || values.cache_model})`;
  }
  replayWritePlaceholder(form);
}
document.addEventListener("change", (event) => {
  const el = event.target;
  if (el.matches("select[data-presets]")) replayFollowPreset(el);
  else if (el.form && el.form.querySelector("select[data-presets]") && ["cache_model", "cache_ttl"].includes(el.name)) {
    replayWritePlaceholder(el.form);
  }
});
document.addEventListener("input", (event) => {
  const el = event.target;
  if (el.name === "price_input" && el.form && el.form.querySelector("select[data-presets]")) replayWritePlaceholder(el.form);
});
