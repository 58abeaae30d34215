/* Progressive extras: the page reads fine without them. Filtering, folding, sorting, and making
   sure a link to an event lands on a visible, open event. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var list = document.getElementById("timeline-list");
  var form = document.getElementById("filters");
  var counter = document.getElementById("shown-count");

  function countShown() {
    if (!list || !counter) return;
    var n = 0, all = list.children.length;
    for (var i = 0; i < all; i++) {
      if (list.children[i].offsetParent !== null) n++;
    }
    counter.textContent = n + " of " + all + " events shown";
  }

  function applyFilters() {
    if (!list || !form) return;
    var boxes = form.querySelectorAll("input[name=kind]");
    for (var i = 0; i < boxes.length; i++) {
      list.classList.toggle("hide-" + boxes[i].value, !boxes[i].checked);
    }
    list.classList.toggle("only-lifecycle", form.elements["only-lifecycle"].checked);
    list.classList.toggle("only-findings", form.elements["only-findings"].checked);
    var q = form.elements.q.value.trim().toLowerCase();
    var evs = list.children;
    for (var j = 0; j < evs.length; j++) {
      var hit = !q || evs[j].textContent.toLowerCase().indexOf(q) !== -1;
      evs[j].classList.toggle("no-match", !hit);
    }
    countShown();
  }

  function clearFilters() {
    if (!form) return;
    var boxes = form.querySelectorAll("input[name=kind]");
    for (var i = 0; i < boxes.length; i++) boxes[i].checked = true;
    form.elements["only-lifecycle"].checked = false;
    form.elements["only-findings"].checked = false;
    form.elements.q.value = "";
    applyFilters();
  }

  /* A link to #event-N must land on it even when a filter hides it. */
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!id) return;
    var target = document.getElementById(id);
    if (!target) return;
    if (target.classList.contains("ev") && target.offsetParent === null) {
      clearFilters();
      target.scrollIntoView({ block: "start" });
    }
  }

  if (form && list) {
    form.hidden = false;
    form.addEventListener("input", applyFilters);
    form.addEventListener("change", applyFilters);
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    var folds = form.querySelectorAll("button[data-fold]");
    for (var i = 0; i < folds.length; i++) {
      folds[i].addEventListener("click", function () {
        var open = this.getAttribute("data-fold") === "open";
        var ds = list.querySelectorAll("details.output");
        for (var k = 0; k < ds.length; k++) ds[k].open = open;
      });
    }
    countShown();
  }
  window.addEventListener("hashchange", reveal);
  reveal();

  /* Sortable tables: click a header; numbers sort as numbers. */
  function cellValue(row, idx) {
    var c = row.children[idx];
    return c ? c.textContent.trim() : "";
  }
  var heads = document.querySelectorAll("table.sortable th[data-sort]");
  for (var h = 0; h < heads.length; h++) {
    heads[h].addEventListener("click", function () {
      var th = this, table = th.closest("table"), body = table.tBodies[0];
      var idx = Array.prototype.indexOf.call(th.parentNode.children, th);
      var asc = th.getAttribute("data-dir") !== "asc";
      th.setAttribute("data-dir", asc ? "asc" : "desc");
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = cellValue(a, idx), y = cellValue(b, idx);
        var nx = parseFloat(x), ny = parseFloat(y);
        var r = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return asc ? r : -r;
      });
      for (var r = 0; r < rows.length; r++) body.appendChild(rows[r]);
    });
  }
})();
