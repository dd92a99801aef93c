// Zoom and pan of the board (issue 22): the picture (`figure.picture`) fills its column's
// width at first ("fit"); the buttons above it zoom in and out (keyboard: they are buttons),
// as do ctrl + wheel (a trackpad's pinch) and a two-finger pinch on a touch screen, around
// the pointer. A zoomed picture pans in its own box: by scrolling it (a finger, the wheel,
// the arrow keys once it has the focus) or by dragging it with the mouse. A drag is never a
// click: the click that ends one does not reach the board's places (decide.js `Board`).
//
// game.js calls `zoom(figure)` after every live refresh of the page's <main>: the level and
// the box's scroll position carry over (and the level over a reload of the page, in this tab).

const STEP = 1.25;
const LEAST = 0.5;
const MOST = 4;
const DRAG = 6; // px a mouse moves before a press is a drag, not a click
const KEY = `kontor.zoom:${location.pathname}`; // this page's, for this tab

let level = 1;
try { level = clamp(Number(sessionStorage.getItem(KEY)) || 1); } catch (e) { /* no storage: fit */ }
let kept = { left: 0, top: 0 };
let current = null; // the shown picture's apply(), for a resized window
addEventListener("resize", () => { if (current) current(); });

function clamp(x) {
  return Math.min(MOST, Math.max(LEAST, x));
}

function button(text, action) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "zoom-" + action;
  b.textContent = text;
  return b;
}

export function zoom(figure) {
  const svg = figure && figure.querySelector("svg");
  if (!svg || figure.querySelector(":scope > .zoom")) return; // no picture, or wired already
  const bar = document.createElement("div");
  bar.className = "zoom";
  bar.setAttribute("role", "group");
  bar.setAttribute("aria-label", "Zoom the board (at 100 % it fits the width)");
  const out = button("Zoom out", "out");
  const fit = button("Fit", "fit");
  const into = button("Zoom in", "in");
  const shown = document.createElement("span");
  shown.className = "zoom-level";
  shown.setAttribute("aria-live", "polite");
  shown.textContent = `${Math.round(level * 100)} %`; // before it is shown: said only when it changes
  bar.append(out, fit, into, shown);
  figure.prepend(bar);

  function apply() {
    svg.style.width = `${(level * 100).toFixed(1)}%`;
    const zoomed = level > 1.001;
    figure.classList.toggle("zoomed", zoomed);
    shown.textContent = `${Math.round(level * 100)} %`;
    out.setAttribute("aria-disabled", String(level <= LEAST + 0.001));
    into.setAttribute("aria-disabled", String(level >= MOST - 0.001));
    fit.setAttribute("aria-disabled", String(Math.abs(level - 1) < 0.001));
    const pans = figure.scrollWidth > figure.clientWidth + 1 || figure.scrollHeight > figure.clientHeight + 1;
    figure.classList.toggle("pans", pans);
    if (pans) { // a box that scrolls takes the focus (its arrow keys pan it)
      figure.setAttribute("tabindex", "0");
      figure.setAttribute("aria-label", "The board, zoomed: scroll or drag it to see the rest");
    } else {
      figure.removeAttribute("tabindex");
      figure.removeAttribute("aria-label");
    }
    try { sessionStorage.setItem(KEY, String(level)); } catch (e) { /* kept for this page only */ }
  }

  // The new level, keeping the picture's point under (x, y) (in the viewport; by default the
  // middle of the box) where it is.
  function to(next, x, y) {
    next = clamp(next);
    if (Math.abs(next - level) < 0.0001) return;
    const f = figure.getBoundingClientRect();
    if (x === undefined) { x = f.left + figure.clientWidth / 2; y = f.top + Math.min(figure.clientHeight, innerHeight) / 2; }
    const a = svg.getBoundingClientRect();
    const fx = (x - a.left) / a.width;
    const fy = (y - a.top) / a.height;
    level = next;
    apply();
    const b = svg.getBoundingClientRect();
    figure.scrollLeft += b.left + fx * b.width - x;
    figure.scrollTop += b.top + fy * b.height - y;
  }

  out.addEventListener("click", () => to(level / STEP));
  into.addEventListener("click", () => to(level * STEP));
  fit.addEventListener("click", () => { to(1); figure.scrollLeft = 0; figure.scrollTop = 0; });

  figure.addEventListener("scroll", () => { kept = { left: figure.scrollLeft, top: figure.scrollTop }; });

  // ctrl + wheel (and a trackpad's pinch, which the browser sends as one) zooms.
  figure.addEventListener("wheel", (ev) => {
    if (!ev.ctrlKey) return;
    ev.preventDefault();
    to(level * Math.exp(-ev.deltaY * (ev.deltaMode === 1 ? 0.05 : 0.002)), ev.clientX, ev.clientY);
  }, { passive: false });

  // Two fingers pinch (one finger scrolls the box: the browser's own panning).
  let pinch = null;
  const spread = (ts) => Math.hypot(ts[0].clientX - ts[1].clientX, ts[0].clientY - ts[1].clientY);
  figure.addEventListener("touchstart", (ev) => {
    if (ev.touches.length === 2) pinch = { d: spread(ev.touches) || 1, level };
  }, { passive: true });
  figure.addEventListener("touchmove", (ev) => {
    if (!pinch || ev.touches.length !== 2) return;
    ev.preventDefault();
    const [a, b] = ev.touches;
    to(pinch.level * spread(ev.touches) / pinch.d, (a.clientX + b.clientX) / 2, (a.clientY + b.clientY) / 2);
  }, { passive: false });
  figure.addEventListener("touchend", (ev) => { if (ev.touches.length < 2) pinch = null; });

  // A mouse drags the picture about; the click ending a drag goes nowhere.
  let drag = null;
  let swallow = false;
  figure.addEventListener("pointerdown", (ev) => {
    if (ev.pointerType !== "mouse" || ev.button !== 0 || bar.contains(ev.target)) return;
    drag = { id: ev.pointerId, x: ev.clientX, y: ev.clientY, left: figure.scrollLeft, top: figure.scrollTop, moved: false };
    swallow = false;
  });
  figure.addEventListener("pointermove", (ev) => {
    if (!drag || ev.pointerId !== drag.id) return;
    const dx = ev.clientX - drag.x;
    const dy = ev.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < DRAG) return;
    if (!drag.moved) {
      drag.moved = true;
      figure.classList.add("dragging");
      try { figure.setPointerCapture(drag.id); } catch (e) { /* the pointer is gone */ }
    }
    figure.scrollLeft = drag.left - dx;
    figure.scrollTop = drag.top - dy;
  });
  const end = (ev) => {
    if (!drag || ev.pointerId !== drag.id) return;
    if (drag.moved) {
      swallow = true;
      setTimeout(() => { swallow = false; }, 300); // a drag ending outside the board has no click
    }
    figure.classList.remove("dragging");
    drag = null;
  };
  figure.addEventListener("pointerup", end);
  figure.addEventListener("pointercancel", end);
  figure.addEventListener("click", (ev) => {
    if (!swallow) return;
    swallow = false;
    ev.stopPropagation();
    ev.preventDefault();
  }, true);

  current = apply;
  apply();
  figure.scrollLeft = kept.left;
  figure.scrollTop = kept.top;
}
