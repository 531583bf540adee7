/* Tables a reader can sort and filter, in the page itself (no server: works from file:// and
   under any sub-path). Progressive: without JavaScript every table is complete and in the
   order the site wrote it. With it:
   - a column header sorts by that column (again: the other way); numbers with units sort by
     value (1.2 ms after 900 µs, 2 GB/s after 512 MB/s), text in natural order;
   - a table of more than a few rows (outside a finding's card) gets a filter box: only the rows holding every word typed;
   - a table too wide for its column (a phone) shows each row as a card, labelled by its
     column headers;
   - each case of a case table links to its own anchor, and a link to a case inside a
     collapsed list (skipped cases) opens the list. */
(function () {
  "use strict";
  var FILTER_FROM = 8; // rows: smaller tables get no filter box
  var TIME = { ns: 1e-9, "µs": 1e-6, us: 1e-6, ms: 1e-3, s: 1, min: 60, h: 3600 };
  var PREFIX = { k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15,
                 Ki: 1024, Mi: 1048576, Gi: 1073741824, Ti: 1099511627776 };
  var NUMBER = /^([-−]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)\s*(ns|µs|us|ms|min|h|s\b|[kKMGTP]i?)?/;
  var DATE = /^\d{4}-\d\d-\d\d/;

  function cellText(cell) {
    return cell ? (cell.getAttribute("data-sort") || cell.textContent).trim() : "";
  }

  // a cell's value: a number (units applied) where it starts with one, else its text
  function value(text) {
    if (DATE.test(text)) return text;
    var match = NUMBER.exec(text);
    if (!match) return text;
    var number = parseFloat(match[1].replace(/,/g, "").replace("−", "-"));
    var unit = match[2];
    return number * (unit ? (TIME[unit] || PREFIX[unit] || 1) : 1);
  }

  function compare(a, b) {
    var numberA = typeof a === "number", numberB = typeof b === "number";
    if (numberA && numberB) return a - b;
    if (numberA !== numberB) return numberA ? -1 : 1; // numbers first, dashes and text after
    var emptyA = a === "" || a === "–", emptyB = b === "" || b === "–";
    if (emptyA !== emptyB) return emptyA ? 1 : -1;
    return String(a).localeCompare(String(b), undefined, { numeric: true, sensitivity: "base" });
  }

  function columnIndex(th) {
    var index = 0;
    for (var cell = th.previousElementSibling; cell; cell = cell.previousElementSibling) {
      index += cell.colSpan || 1;
    }
    return index;
  }

  // the cell of a row at a column, colspans counted (a failed case's error spans the numbers)
  function cellAt(row, column) {
    var at = 0;
    for (var i = 0; i < row.cells.length; i++) {
      var span = row.cells[i].colSpan || 1;
      if (column < at + span) return at === column ? row.cells[i] : null;
      at += span;
    }
    return null;
  }

  function sortBy(table, th) {
    var body = table.tBodies[0];
    var column = columnIndex(th);
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    var rows = Array.prototype.slice.call(body.rows);
    var keyed = rows.map(function (row, i) {
      return { row: row, key: value(cellText(cellAt(row, column))), i: i };
    });
    keyed.sort(function (a, b) {
      var order = compare(a.key, b.key);
      if (!ascending && typeof a.key === typeof b.key) order = -order;
      return order || a.i - b.i;
    });
    Array.prototype.forEach.call(th.parentNode.children, function (other) {
      other.removeAttribute("aria-sort");
    });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var fragment = document.createDocumentFragment();
    keyed.forEach(function (item) { fragment.appendChild(item.row); });
    body.appendChild(fragment);
  }

  function makeSortable(table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.title = "Sort by " + th.textContent.trim();
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      button.addEventListener("click", function () { sortBy(table, th); });
    });
  }

  function filterRows(table, words, count) {
    var shown = 0, rows = table.tBodies[0].rows;
    for (var i = 0; i < rows.length; i++) {
      var text = rows[i].textContent.toLowerCase();
      var match = words.every(function (word) { return text.indexOf(word) >= 0; });
      rows[i].hidden = !match;
      if (match) shown++;
    }
    count.textContent = words.length ? shown + " of " + rows.length + " rows" : rows.length + " rows";
  }

  function addFilter(table) {
    var rows = table.tBodies[0].rows.length;
    var box = document.createElement("div");
    box.className = "table-filter";
    var input = document.createElement("input");
    input.type = "search";
    input.placeholder = "Filter: e.g. cuda bf16";
    input.setAttribute("aria-label", "Show only the rows holding every word typed");
    var count = document.createElement("span");
    count.className = "count";
    count.textContent = rows + " rows";
    box.appendChild(input);
    box.appendChild(count);
    var wrap = table.closest(".table-wrap") || table;
    wrap.parentNode.insertBefore(box, wrap);
    input.addEventListener("input", function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      filterRows(table, words, count);
    });
  }

  // each cell labelled by its column's header, for the card layout of a narrow column
  function label(table) {
    var names = Array.prototype.map.call(table.tHead.rows[0].cells, function (th) {
      return th.textContent.trim();
    });
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      Array.prototype.forEach.call(row.cells, function (cell, i) {
        if (names[i] && !cell.hasAttribute("data-label")) cell.setAttribute("data-label", names[i]);
      });
    });
  }

  // a table wider than its column is shown as cards (case tables do this in CSS alone)
  function stack(table) {
    if (table.classList.contains("cases")) return;
    table.classList.remove("stacked");
    var column = (table.closest(".table-wrap") || table.parentNode).clientWidth;
    if (table.scrollWidth > column + 1) {
      label(table);
      table.classList.add("stacked");
    }
  }

  // each case's device cell links to the case's own anchor: a link to one case to copy
  function linkCases(table) {
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      var cell = row.querySelector("td.dev");
      if (!row.id || !cell) return;
      var link = document.createElement("a");
      link.className = "case";
      link.href = "#" + row.id;
      link.title = "Link to this case";
      while (cell.firstChild) link.appendChild(cell.firstChild);
      cell.appendChild(link);
    });
  }

  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) return;
    for (var node = target.parentNode; node; node = node.parentNode) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    target.scrollIntoView();
  }

  var tables = Array.prototype.slice.call(document.querySelectorAll("main table"))
    .filter(function (table) { return table.tHead && table.tBodies.length === 1; });
  tables.forEach(function (table) {
    var rows = table.tBodies[0].rows.length;
    if (table.classList.contains("cases")) linkCases(table);
    if (rows > 1) makeSortable(table);
    if (rows >= FILTER_FROM && !table.closest(".finding")) addFilter(table);
    stack(table);
  });
  var resizing;
  window.addEventListener("resize", function () {
    clearTimeout(resizing);
    resizing = setTimeout(function () { tables.forEach(stack); }, 200);
  });
  window.addEventListener("hashchange", openTarget);
  if (location.hash) openTarget();
})();
