// SPDX-License-Identifier: MIT
// flamegraph.js - what makes the flame graph of `prof report --format=svg`
// interactive: hover for a frame's name, samples and percent; click to zoom
// on a frame; search for a regular expression (the Search button, Ctrl-F or
// '/'), which highlights the frames whose name matches and says what share
// of the samples they cover.  It is compiled into prof and written inside
// the SVG, so the file needs nothing else.
//
// The SVG gives every frame as <g data-s="START" data-n="SAMPLES"
// data-d="DEPTH"> holding a <title>, a <rect> and, if wide enough, a
// <text>: its place is in samples, exact at any zoom, not in pixels
// rounded once.  The root
// <svg> gives the layout (data-samples, data-width, data-pad, data-char).
// It must not hold the three characters that end a CDATA section.
"use strict";

var fg = {
	svg: null,
	frames: [],		// every drawn frame: {g, rect, text or null, s, n, d, name, fill}
	total: 0,		// samples (or ns) under the widest frame
	unit: "samples",	// what data-s and data-n count: "samples" or "ns"
	pad: 10,		// pixels left and right of the frames
	width: 0,		// pixels the frames span
	charWidth: 7,		// pixels a character of the frame labels takes, about
	zoomed: null,		// the frame zoomed on, or null
	term: null,		// the search, or null
	details: null,
	matched: null,
	unzoom: null,
	search: null
};

function fgById(id) {
	return document.getElementById(id);
}

// The label of a frame W pixels wide: its name, cut with ".." to fit.
function fgFit(name, w) {
	var fit = Math.floor((w - 6) / fg.charWidth);

	if (fit < 3)
		return "";
	if (name.length <= fit)
		return name;
	return name.substring(0, fit - 2) + "..";
}

// Place frame F at X, W pixels wide, shown or not.  A frame too narrow
// for a label at full width comes without a <text>: it gets one here.
function fgPlace(f, x, w, shown, parent) {
	var label;

	f.g.style.display = shown ? "" : "none";
	if (!shown)
		return;
	f.rect.setAttribute("x", x.toFixed(2));
	f.rect.setAttribute("width", w.toFixed(2));
	label = fgFit(f.name, w);
	if (!f.text && label) {
		f.text = document.createElementNS(fg.svg.namespaceURI, "text");
		f.text.setAttribute("y", (Number(f.rect.getAttribute("y")) +
					  Number(f.rect.getAttribute("height")) - 3.5).toFixed(1));
		f.g.appendChild(f.text);
	}
	if (f.text) {
		f.text.setAttribute("x", (x + 3).toFixed(2));
		f.text.textContent = label;
	}
	if (parent)
		f.g.setAttribute("class", "parent");
	else
		f.g.removeAttribute("class");
}

// Zoom on frame Z (null: on the whole graph).  Its subtree spans the width;
// the frames it is inside span it too, dimmed; the others hide.
function fgZoom(z) {
	var s = z ? z.s : 0, n = z ? z.n : fg.total, d = z ? z.d : 0;
	var i, f, scale = fg.width / n;

	fg.zoomed = z;
	for (i = 0; i < fg.frames.length; i++) {
		f = fg.frames[i];
		if (f.d >= d && f.s >= s && f.s + f.n <= s + n)
			fgPlace(f, fg.pad + (f.s - s) * scale, f.n * scale, true, false);
		else if (f.d < d && f.s <= s && f.s + f.n >= s + n)
			fgPlace(f, fg.pad, fg.width, true, true);
		else
			fgPlace(f, 0, 0, false, false);
	}
	fg.unzoom.setAttribute("class", z ? "button" : "button hide");
}

function fgPercent(n) {
	return (fg.total ? 100 * n / fg.total : 0).toFixed(2) + "%";
}

// Highlight the frames whose name matches TERM (a regular expression; case
// matters only if it has a capital letter), or none if TERM is null.
function fgSearch(term) {
	var i, f, re = null, hits = [], end = -1, covered = 0;

	if (term !== null && term !== "") {
		try {
			re = new RegExp(term, term.toLowerCase() === term ? "i" : "");
		} catch (e) {
			fg.details.textContent = "Invalid search: " + e.message;
			return;
		}
	}
	fg.term = re ? term : null;
	for (i = 0; i < fg.frames.length; i++) {
		f = fg.frames[i];
		if (re && re.test(f.name)) {
			f.rect.setAttribute("fill", "rgb(230,0,230)");
			hits.push(f);
		} else {
			f.rect.setAttribute("fill", f.fill);
		}
	}
	// frames nest or are apart: count the samples under the outermost hits
	hits.sort(function (a, b) { return a.s - b.s || a.d - b.d; });
	for (i = 0; i < hits.length; i++) {
		if (hits[i].s >= end) {
			covered += hits[i].n;
			end = hits[i].s + hits[i].n;
		}
	}
	fg.matched.textContent = re ? "Matched: " + fgPercent(covered) + " (" +
		fgAmount(covered) + ")" : "";
	fg.search.textContent = re ? "Reset Search" : "Search";
}

function fgAskSearch() {
	var term = window.prompt("Search for functions matching (a regular expression; " +
				 "all lower case: any case):", fg.term || "");

	if (term !== null)
		fgSearch(term);
}

// The frame that the element EL is part of, or null.
function fgFrameOf(el) {
	for (; el && el !== fg.svg; el = el.parentNode)
		if (el.fgFrame)
			return el.fgFrame;
	return null;
}

// N of the graph's unit as shown: "12 samples", or time "3.25 ms" (N in ns).
function fgAmount(n) {
	if (fg.unit === "ns")
		return (n / 1e6).toFixed(2) + " ms";
	return n + " samples";
}

function fgTitleLine(f) {
	return f.g.getElementsByTagName("title")[0].textContent.split("\n")[0];
}

function init() {
	var gs, i, g, t, f;

	fg.svg = document.documentElement;
	fg.total = Number(fg.svg.getAttribute("data-samples"));
	fg.unit = fg.svg.getAttribute("data-unit") || "samples";
	fg.pad = Number(fg.svg.getAttribute("data-pad"));
	fg.width = Number(fg.svg.getAttribute("data-width")) - 2 * fg.pad;
	fg.charWidth = Number(fg.svg.getAttribute("data-char"));
	fg.details = fgById("details");
	fg.matched = fgById("matched");
	fg.unzoom = fgById("unzoom");
	fg.search = fgById("search");
	gs = fgById("frames").getElementsByTagName("g");
	for (i = 0; i < gs.length; i++) {
		g = gs[i];
		t = g.getElementsByTagName("title")[0].textContent.split("\n")[0];
		f = {
			g: g,
			rect: g.getElementsByTagName("rect")[0],
			text: g.getElementsByTagName("text")[0] || null,
			s: Number(g.getAttribute("data-s")),
			n: Number(g.getAttribute("data-n")),
			d: Number(g.getAttribute("data-d")),
			name: t.replace(/ \(([0-9,]+ samples?|[0-9.]+ ms), [0-9.]+%(; base [0-9.]+%, [-+][0-9.]+ points)?\)$/, "")
		};
		f.fill = f.rect.getAttribute("fill");
		g.fgFrame = f;
		fg.frames.push(f);
	}
	fg.svg.addEventListener("mouseover", function (e) {
		var f = fgFrameOf(e.target);

		if (f)
			fg.details.textContent = fgTitleLine(f);
	});
	fg.svg.addEventListener("mouseout", function (e) {
		if (fgFrameOf(e.target))
			fg.details.textContent = " ";
	});
	fg.svg.addEventListener("click", function (e) {
		var f = fgFrameOf(e.target);

		if (f)
			fgZoom(f);
	});
	fg.unzoom.addEventListener("click", function () { fgZoom(null); });
	fg.search.addEventListener("click", function () {
		if (fg.term !== null)
			fgSearch(null);
		else
			fgAskSearch();
	});
	window.addEventListener("keydown", function (e) {
		if ((e.key === "f" && (e.ctrlKey || e.metaKey)) || e.key === "/") {
			e.preventDefault();
			fgAskSearch();
		} else if (e.key === "Escape") {
			fgSearch(null);
			fgZoom(null);
		}
	});
}
