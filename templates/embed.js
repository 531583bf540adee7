/* Draws every chart of the page: each spec sits in a <script type="application/json"> next to
   its container; vegaEmbed comes from the site's one Vega bundle (a classic script, so that it
   works from file:// too). Charts follow the reader's light or dark colour scheme. */
(function () {
  "use strict";
  var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  var ink = dark ? "#d8dee9" : "#1f2933";
  var grid = dark ? "#3b4252" : "#e4e7eb";
  var theme = {
    background: null,
    axis: { labelColor: ink, titleColor: ink, gridColor: grid, domainColor: grid, tickColor: grid },
    legend: { labelColor: ink, titleColor: ink },
    header: { labelColor: ink, titleColor: ink },
    title: { color: ink },
    view: { stroke: grid }
  };

  function themed(spec) {
    var config = spec.config || {};
    Object.keys(theme).forEach(function (key) {
      var value = theme[key];
      config[key] = value && typeof value === "object" ? Object.assign({}, config[key] || {}, value) : value;
    });
    spec.config = config;
    return spec;
  }

  function draw(container) {
    var source = document.getElementById(container.getAttribute("data-chart") + "-spec");
    var spec = themed(JSON.parse(source.textContent));
    return vegaEmbed(container, spec, { renderer: "svg", actions: false })
      .then(function () { container.classList.add("rendered"); })
      .catch(function (error) {
        container.textContent = "This chart could not be drawn: " + error;
        console.error(error);
      });
  }

  if (typeof vegaEmbed !== "function") {
    console.error("benchsite: the Vega bundle did not load; charts are shown as text only");
    return;
  }
  Array.prototype.forEach.call(document.querySelectorAll("[data-chart]"), draw);
})();
