// Keeps the «через 3 ч 12 мин» countdowns of the panel's deadlines current.
(function () {
  "use strict";
  function left(ms) {
    if (ms <= 0) return "срок истёк";
    var minutes = Math.ceil(ms / 60000);
    var d = Math.floor(minutes / 1440), h = Math.floor((minutes % 1440) / 60), m = minutes % 60;
    var parts = [];
    if (d) parts.push(d + " д");
    if (h) parts.push(h + " ч");
    if (m && !d) parts.push(m + " мин");
    return "через " + (parts.join(" ") || "минуту");
  }
  function tick() {
    var now = Date.now();
    document.querySelectorAll(".gm-countdown[data-deadline]").forEach(function (el) {
      var at = Date.parse(el.getAttribute("data-deadline"));
      if (!isNaN(at)) el.textContent = left(at - now);
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    tick();
    setInterval(tick, 20000);
  });
})();
