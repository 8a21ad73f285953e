// @ts-check
// The rating's course on the You screen: a small inline SVG line drawn from the history's
// rated matches (the rating before the oldest, then `rating_after` of each, oldest first),
// with its lowest and highest values marked, and a sentence for screen readers.

/** @typedef {import("./protocol.js").HistoryMatch} HistoryMatch */

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 320;
const HEIGHT = 120;
const PAD = { left: 40, right: 8, top: 10, bottom: 14 };

/**
 * The ratings to draw, oldest first: the rating before the oldest rated match of the
 * history, then the rating after each (pure).
 * @param {HistoryMatch[]} matches the history, newest first
 * @returns {number[]}
 */
export function ratingCourse(matches) {
  const rated = matches.filter((m) => m.rated && typeof m.rating_after === "number").reverse();
  if (!rated.length) return [];
  const first = rated[0].rating_before;
  const course = rated.map((m) => /** @type {number} */ (m.rating_after));
  return typeof first === "number" ? [first, ...course] : course;
}

/** @param {string} tag @param {Record<string, string | number>} attrs */
function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  return node;
}

/**
 * The chart of `course` (at least two ratings), or null when there is nothing to draw.
 * @param {number[]} course
 * @returns {SVGSVGElement | null}
 */
export function ratingChart(course) {
  if (course.length < 2) return null;
  const low = Math.min(...course);
  const high = Math.max(...course);
  const span = Math.max(high - low, 20);
  const mid = (high + low) / 2;
  const bottom = mid - span / 2;
  const x = (/** @type {number} */ i) => PAD.left + (i * (WIDTH - PAD.left - PAD.right)) / (course.length - 1);
  const y = (/** @type {number} */ v) => PAD.top + ((bottom + span - v) * (HEIGHT - PAD.top - PAD.bottom)) / span;
  const chart = /** @type {SVGSVGElement} */ (
    /** @type {unknown} */ (svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "rating-chart", role: "img" }))
  );
  const last = course[course.length - 1];
  const words = `Your rating over your last ${course.length - 1} rated matches: from ${course[0]} to ${last}, lowest ${low}, highest ${high}.`;
  chart.setAttribute("aria-label", words);
  const title = svg("title", {});
  title.textContent = words;
  chart.append(title);
  for (const value of low === high ? [low] : [high, low]) {
    chart.append(svg("line", { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(value), y2: y(value), class: "grid" }));
    const label = svg("text", { x: PAD.left - 6, y: y(value) + 4, "text-anchor": "end", class: "axis" });
    label.textContent = String(value);
    chart.append(label);
  }
  const points = course.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  chart.append(svg("polyline", { points, class: "line" }));
  chart.append(svg("circle", { cx: x(course.length - 1), cy: y(last), r: 4, class: "dot" }));
  return chart;
}
