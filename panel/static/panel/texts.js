// The theme texts' editor (templates/panel/texts.html): a preview as the GM types.
(function () {
  const csrf = document.querySelector("input[name=csrfmiddlewaretoken]").value;
  document.querySelectorAll(".gm-theme-input").forEach(function (area) {
    let timer = null;
    area.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        const body = new URLSearchParams({slot: area.dataset.slot, text: area.value});
        fetch(area.dataset.preview, {method: "POST", body: body,
                                     headers: {"X-CSRFToken": csrf}})
          .then(function (r) { return r.json(); })
          .then(function (data) {
            const pre = document.getElementById("preview-" + area.dataset.slot);
            pre.textContent = data.ok ? data.text : "Не отрисовывается. " + data.error;
            pre.classList.toggle("refused", !data.ok);
          });
      }, 300);
    });
  });
})();
