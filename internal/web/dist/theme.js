// The theme before the first paint: a classic script in <head>, run before
// the stylesheet applies (the CSP allows no inline script). Same key and
// rule as src/shell/theme.ts, which takes over once the app has loaded.
(function () {
  var t = null;
  try {
    t = localStorage.getItem("caduceus.theme");
  } catch (e) {
    // storage blocked: follow the system
  }
  if (t !== "light" && t !== "dark") {
    t = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }
  document.documentElement.setAttribute("data-theme", t);
})();
