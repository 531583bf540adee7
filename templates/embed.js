/* Draws every chart of the page: each spec sits in a <script type="application/json"> next to
   its container; vegaEmbed comes from the site's one Vega bundle, loaded only on a page that has
   a chart (~0.9 MB of script that most pages, an evidence or a run page, never use), as a
   classic script named by this script's data-vega attribute, so that it works from file://
   too. Charts follow the reader's light or dark colour scheme. */
(function () {
  "use strict";
  var bundle = document.currentScript && document.currentScript.getAttribute("data-vega");
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

  // The charts are made for a wide column. In a narrower one (a phone's, a finding's card) the
  // panels of a faceted chart go one under another, legends go below, and each view takes the
  // column's width, axes included: no data is off-screen and no text is shrunk to fit.
  var NARROW = 600; // px: a chart container narrower than this gets the narrow layout
  var AXIS = 100; // px: what a panel's y axis (labels with their units, title) takes beside it
  var MIN_PANEL = 120; // px

  function narrowed(spec, width) {
    var config = spec.config || {};
    config.legend = Object.assign({}, config.legend || {}, { orient: "bottom", direction: "vertical" });
    config.axis = Object.assign({}, config.axis || {}, { labelSeparation: 4 }); // no "2030" on a short axis
    spec.config = config;
    fit(spec, width, true);
    return spec;
  }

  function fit(view, width, top) {
    var parts = view.vconcat || view.hconcat || view.concat;
    if (view.facet && view.spec) {
      view.columns = 1;
      view.spec.width = Math.max(MIN_PANEL, width - AXIS);
    } else if (parts) {
      if (view.hconcat) { view.vconcat = parts; delete view.hconcat; }
      if (view.concat) view.columns = 1;
      parts.forEach(function (part) { fit(part, width, false); });
    } else if (!view.mark && !view.layer) {
      return; // a repeat: drawn as made
    } else if (top) {
      // Vega-Lite fits a single or layered view, axes included, into the width
      view.width = width;
      view.autosize = { type: "fit-x", contains: "padding" };
    } else {
      view.width = Math.max(MIN_PANEL, width - AXIS); // in a concatenation: no autosize
    }
  }

  // In a wide column the chart takes the column's whole width: a single or layered view is
  // fitted to it, axes and legend included; a faceted one gets panels that share it, its
  // legend below them.
  var GAP = 24; // px between two panels of a facet

  function widened(spec, width) {
    if (spec.facet && spec.spec) {
      var columns = spec.columns || 1;
      spec.config = spec.config || {};
      spec.config.legend = Object.assign({}, spec.config.legend || {}, { orient: "bottom" });
      spec.spec.width = Math.max(MIN_PANEL, Math.floor((width - AXIS) / columns) - GAP);
    } else if (spec.mark || spec.layer) {
      spec.width = width;
      spec.autosize = { type: "fit-x", contains: "padding" };
    }
    return spec;
  }

  function columnWidth(container) {
    return container.clientWidth; // 0 where hidden: drawn as made
  }

  var views = new WeakMap(); // container → its drawn view, finalized when it is drawn again

  function draw(container) {
    var source = document.getElementById(container.getAttribute("data-chart") + "-spec");
    var spec = themed(JSON.parse(source.textContent));
    var width = columnWidth(container);
    if (width && width < NARROW) spec = narrowed(spec, width);
    else if (width) spec = widened(spec, width);
    container.setAttribute("data-layout", width);
    container.classList.remove("rendered");
    if (views.has(container)) views.get(container).finalize();
    return vegaEmbed(container, spec, { renderer: "svg", actions: false })
      .then(function (result) {
        views.set(container, result);
        container.classList.add("rendered");
      })
      .catch(function (error) {
        container.textContent = "This chart could not be drawn: " + error;
        console.error(error);
      });
  }

  var charts = Array.prototype.slice.call(document.querySelectorAll("[data-chart]"));

  function drawAll() {
    if (typeof vegaEmbed !== "function") {
      console.error("benchsite: the Vega bundle did not load; charts are shown as text only");
      return;
    }
    charts.forEach(draw);
    // a phone turned sideways, a window made narrower or wider: charts whose column changed
    // width are drawn again
    var resizing;
    window.addEventListener("resize", function () {
      clearTimeout(resizing);
      resizing = setTimeout(function () {
        charts.forEach(function (container) {
          if (String(columnWidth(container)) !== container.getAttribute("data-layout")) draw(container);
        });
      }, 200);
    });
  }

  if (!charts.length) return;
  if (typeof vegaEmbed === "function" || !bundle) { // a theme that loads the bundle itself
    drawAll();
    return;
  }
  var script = document.createElement("script");
  script.src = bundle;
  script.onload = drawAll;
  script.onerror = drawAll; // says the bundle did not load
  document.body.appendChild(script);
})();
