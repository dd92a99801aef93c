// `/docs`: starts Swagger UI (static/vendor/swagger-ui) on the API's document. A file of its
// own, not an inline script, so that the page's Content-Security-Policy allows scripts from
// this server only (service/http/headers.py). The script's tag carries the document's address
// (`data-url`) and flask-smorest's Swagger UI settings (`data-config`, JSON).
(function () {
  const tag = document.currentScript;
  const config = Object.assign(JSON.parse(tag.dataset.config || "{}"), {
    url: tag.dataset.url,
    dom_id: "#swagger-ui-container",
  });
  window.addEventListener("load", function () {
    window.ui = window.SwaggerUIBundle(config);
  });
})();
