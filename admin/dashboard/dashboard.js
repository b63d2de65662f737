// Herald dashboard: the copy buttons beside shortened IDs. Everything else
// works without script; without it the buttons stay hidden and the full
// ID is in the element's title and link.
"use strict";
document.documentElement.classList.add("js");
document.addEventListener("click", function (ev) {
  var b = ev.target.closest ? ev.target.closest("button.copy") : null;
  if (!b) return;
  ev.preventDefault();
  var text = b.getAttribute("data-copy");
  var done = function () {
    b.classList.add("copied");
    b.textContent = "Copied";
    setTimeout(function () { b.classList.remove("copied"); b.textContent = "Copy"; }, 1500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, function () { fallback(text); done(); });
  } else {
    fallback(text);
    done();
  }
});
function fallback(text) {
  var t = document.createElement("textarea");
  t.value = text;
  t.setAttribute("readonly", "");
  t.className = "offscreen";
  document.body.appendChild(t);
  t.select();
  try { document.execCommand("copy"); } catch (e) {}
  document.body.removeChild(t);
}
