// SPDX-License-Identifier: MIT
// viewer.js - the page of `prof report --format=html`: the header's facts
// and warnings, a timeline of the threads, and the views of what the
// timeline selects (flame graph, call tree, functions with their callers
// and callees), over the data viewer_model.js aggregates.  It needs nothing
// but the page: no network, no other file.  Every choice (a range brushed
// on the timeline, a thread or process clicked, the weight, a transform
// focusing on a function or excluding one, a search) re-aggregates from the
// events, so every view always shows the same selection, which the bar
// above the views lists with a way to undo each part.  Canvas draws the
// timeline and the flame graphs, so that 100,000 samples stay fast.
//
// window.profViewer is for the tests and the benchmark: it sets a range,
// a focus, a search or the weight as a user would, and reads back what
// the views show.
"use strict";

(function () {
	const M = ProfModel;
	const ROW = 17;			// px: a flame graph frame's height, its gap included
	const TRACK_H = 30, PROCESS_H = 22, OFF_H = 7;	// px: rows of the timeline
	const SHOWN_THREADS = 16;	// threads shown before the rest are folded
	const SHOWN_PROCESSES = 12;	// processes shown before the rest are folded, and then more
	const MIN_PX = 0.35;		// frames narrower are not drawn
	const MAX_ROWS = 2000;		// rows of the call tree drawn
	const FUNC_ROWS = 250;		// rows of the function table drawn, and then more

	const S = {
		prof: null, base: null, diff: false,
		weight: "cpu", range: null, focus: null, transforms: [],
		view: "flame", inverted: false, icicle: false, zoom: 0,
		re: null, flags: null,	// the search, and the functions it matches
		func: -1,		// the function of the sandwich
		win: null,		// the timeline's window [from, to], ns
		sort: { key: "self", desc: true },
		expanded: new Set(), expandedCallers: new Set(),
		folded: new Map(),	// process index -> whether its quiet threads show
		processes: SHOWN_PROCESSES,	// processes shown
		funcRows: FUNC_ROWS,	// functions shown
	};
	let W = null, AGG = null, CALLERS = null, BASE = null, KEEP = null;
	const el = {};

	// ---- small helpers --------------------------------------------------

	function h(tag, attrs, ...kids) {
		const e = document.createElement(tag);

		for (const k in attrs || {}) {
			if (k === "class")
				e.className = attrs[k];
			else if (k.startsWith("on"))
				e.addEventListener(k.slice(2), attrs[k]);
			else
				e.setAttribute(k, attrs[k]);
		}
		for (const c of kids)
			if (c !== null && c !== undefined)
				e.append(c instanceof Node ? c : String(c));
		return e;
	}

	// Replace the children of E by KIDS, leaving out the nulls.
	function put(e, ...kids) {
		e.replaceChildren(...kids.filter((k) => k !== null && k !== undefined));
	}

	function pct(part, whole) {
		return whole ? 100 * part / whole : 0;
	}

	function fmtPct(x) {
		return x.toFixed(2) + "%";
	}

	// A weight as the report prints it: samples, or time.
	function amount(v, weight) {
		if ((weight || S.weight) === "cpu")
			return Math.round(v).toLocaleString("en-US") + (Math.round(v) === 1 ? " sample" : " samples");
		if (v >= 1e9)
			return (v / 1e9).toFixed(3) + " s";
		return (v / 1e6).toFixed(2) + " ms";
	}

	function seconds(ns) {
		return (ns / 1e9).toFixed(ns < 1e10 ? 3 : 1) + " s";
	}

	function fname(p, f) {
		return p.funcNames[f];
	}

	function fmodule(p, f) {
		return p.strings[p.funcModule[f]];
	}

	function funcKey(p, f) {
		return fname(p, f) + "\0" + fmodule(p, f) + "\0" + p.funcInlined[f];
	}

	// A number 0..1 from a name, the same for the same name everywhere.
	function hash(name, salt) {
		let x = 2166136261 ^ salt;

		for (let i = 0; i < name.length; i++)
			x = Math.imul(x ^ name.charCodeAt(i), 16777619);
		x ^= x >>> 15;
		return ((x >>> 0) % 1000) / 1000;
	}

	// The fill of function F of P, as flamegraph.pl's java palette: red
	// for code, orange for the kernel, aqua for inlined, green without a
	// module (JIT); blue for waiting, red-violet for waiting for a CPU.
	function fill(p, f) {
		if (!p.fills)
			p.fills = new Array(p.nfuncs);
		return p.fills[f] || (p.fills[f] = fillOf(p, f));
	}

	function fillOf(p, f) {
		const name = fname(p, f), a = hash(name, 1), b = hash(name, 2), c = hash(name, 3);
		const rgb = (r, g, bl) => "rgb(" + (r | 0) + "," + (g | 0) + "," + (bl | 0) + ")";

		if (name === "[blocked]")
			return "rgb(80,130,210)";
		if (name === "[runnable]")
			return "rgb(200,80,160)";
		if (p.funcInlined[f])
			return rgb(80 + 60 * a, 180 + 60 * b, 180 + 60 * b);
		switch (p.funcKind[f]) {
		case M.KIND_KERNEL:
			return rgb(230 + 25 * a, 145 + 60 * b, 30 * c);
		case M.KIND_ANON:
			return rgb(60 + 60 * a, 190 + 50 * b, 60 + 60 * c);
		case M.KIND_OTHER:
			return rgb(190 + 20 * a, 190 + 20 * a, 200 + 20 * a);
		default:
			return rgb(205 + 50 * a, 40 + 60 * b, 40 + 50 * c);
		}
	}

	function kindName(p, f) {
		const k = p.funcKind[f];

		return (p.funcInlined[f] ? "inlined into its caller, " : "") +
			(k === M.KIND_KERNEL ? "kernel" : k === M.KIND_ANON ? "code without a module (JIT)" :
			 k === M.KIND_OTHER ? "marker" : "user");
	}

	// The source of function F at the lines LINES (a Set, may be empty).
	function where(p, f, lines) {
		const file = p.funcFile[f] >= 0 ? p.strings[p.funcFile[f]] : null;
		const ls = [...(lines || [])].filter((l) => l > 0).sort((x, y) => x - y);

		if (!file)
			return ls.length ? "line " + ls.slice(0, 6).join(", ") : "";
		return file + (ls.length ? ":" + ls.slice(0, 6).join(",") + (ls.length > 6 ? ",..." : "") : "");
	}

	// The source lines each node of the call tree was seen at.
	let nodeLines = null;

	function linesOf(n) {
		const p = S.prof;

		if (!nodeLines) {
			nodeLines = new Map();
			for (let s = 0; s < p.nstacks; s++) {
				const node = p.stackNode[s];
				let set = nodeLines.get(node);

				if (!set)
					nodeLines.set(node, set = new Set());
				set.add(p.stackLine[s]);
			}
		}
		return nodeLines.get(n);
	}

	// ---- the selection and the aggregation -------------------------------

	function selection(p, keep) {
		let threads = null;

		if (S.focus && p === S.prof)
			threads = new Set(S.focus.threads);
		return { weight: S.weight, range: p === S.prof ? S.range : null, threads: threads, keep: keep };
	}

	// The transforms as functions of P: by name, module and inlining.
	function transformsOf(p) {
		const ids = new Map();

		for (let f = 0; f < p.nfuncs; f++)
			ids.set(funcKey(p, f), f);
		return S.transforms.map((t) => ({
			type: t.type, funcs: t.keys.map((k) => ids.get(k)).filter((f) => f !== undefined),
		}));
	}

	function reaggregate(transformsChanged) {
		const p = S.prof;

		if (transformsChanged || KEEP === null)
			KEEP = S.transforms.length ? M.keptStacks(p, transformsOf(p)) : false;
		W = M.weigh(p, selection(p, KEEP || null));
		AGG = M.aggregate(p, W.stack);
		CALLERS = null;
		if (S.zoom && !AGG.total[S.zoom])
			S.zoom = 0;
		// diff: the base whole, weighed and transformed alike
		if (S.base && (transformsChanged || !BASE || BASE.weight !== S.weight)) {
			const b = S.base;
			const keep = S.transforms.length ? M.keptStacks(b, transformsOf(b)) : null;

			BASE = M.aggregate(b, M.weigh(b, selection(b, keep)).stack);
			BASE.weight = S.weight;
			mapBase();
		}
	}

	function callers() {
		if (!CALLERS)
			CALLERS = M.aggregateCallers(S.prof, W.stack);
		return CALLERS;
	}

	// diff: the base's node on the same path of functions as each of ours
	let baseOf = null;

	function mapBase() {
		if (baseOf)
			return;
		const p = S.prof, b = S.base, t = p.tree, ids = new Map();

		for (let f = 0; f < b.nfuncs; f++)
			ids.set(funcKey(b, f), f);
		const fmap = new Int32Array(p.nfuncs);

		for (let f = 0; f < p.nfuncs; f++) {
			const g = ids.get(funcKey(p, f));

			fmap[f] = g === undefined ? -1 : g;
		}
		baseOf = new Int32Array(t.n);
		for (let n = 1; n < t.n; n++) {
			const up = baseOf[t.parent[n]], g = fmap[t.func[n]];

			baseOf[n] = up < 0 || g < 0 ? -1 : b.tree.find(up, g);
		}
	}

	// diff: the base's percent on node N's path, and the change in points
	function change(n) {
		const b = baseOf[n] >= 0 ? pct(BASE.total[baseOf[n]], BASE.total[0]) : 0;

		return { base: b, change: pct(AGG.total[n], AGG.total[0]) - b };
	}

	// ---- the header ------------------------------------------------------

	function renderHeader() {
		const p = S.prof, f = p.facts;
		const cmd = f.argv.length ? f.argv.join(" ") : f.pids.length ? "pid " + f.pids.join(",") : "unknown";
		const facts = [];

		facts.push(h("span", { class: "fact" }, h("b", null, "command "), cmd));
		if (f.started)
			facts.push(h("span", { class: "fact" }, h("b", null, "started "), f.started));
		facts.push(h("span", { class: "fact" }, h("b", null, "event "),
			     f.event + (f.freq_hz ? " at " + f.freq_hz + " Hz" : "")));
		if (f.trailer) {
			facts.push(h("span", { class: "fact" }, h("b", null, "duration "), seconds(f.duration_ns)));
			facts.push(h("span", { class: "fact" + (f.lost_percent > 1 ? " bad" : "") },
				     h("b", null, "samples "), f.samples.toLocaleString("en-US") + ", " +
				     f.lost.toLocaleString("en-US") + " lost (" + f.lost_percent.toFixed(2) + "%)"));
			facts.push(h("span", { class: "fact" + (f.complete_percent < 95 ? " bad" : "") },
				     h("b", null, "stacks "), f.complete_percent.toFixed(1) + "% complete"));
			if (f.offcpu)
				facts.push(h("span", { class: "fact" }, h("b", null, "off-CPU "),
					     f.offcpu_intervals.toLocaleString("en-US") + " intervals, " +
					     f.offcpu_lost.toLocaleString("en-US") + " switches lost"));
		} else {
			facts.push(h("span", { class: "fact bad" }, h("b", null, "samples "),
				     f.samples.toLocaleString("en-US") + " read, no trailer: counters unknown"));
		}
		const title = S.diff ? S.base.title + " \u2192 " + p.title : p.title;
		const details = h("pre", { class: "details", hidden: "" }, S.diff ? S.base.header + "\n" + p.header : p.header);
		const warnings = (S.diff ? S.base.warnings.concat(p.warnings) : p.warnings)
			.map((w) => h("li", null, w));

		put(el.header, 
			h("div", { class: "title" }, h("span", { class: "brand" }, "prof"),
			  S.diff ? "differential profile " : "profile ", h("span", { class: "name" }, title || "(untitled)"),
			  h("button", { class: "link", id: "details-button",
					onclick: () => details.toggleAttribute("hidden") }, "details")),
			h("div", { class: "facts" }, ...facts),
			warnings.length ? h("ul", { class: "warnings", id: "warnings" }, ...warnings) : null,
			details);
	}

	// ---- the bar of what is selected ------------------------------------

	function chip(label, title, onclear) {
		return h("span", { class: "chip", title: title }, label,
			 h("button", { class: "x", title: "clear", onclick: onclear }, "\u00d7"));
	}

	function renderBar() {
		const chips = [];

		if (S.range)
			chips.push(chip("range " + S.range[0].toFixed(3) + "\u2013" + S.range[1].toFixed(3) + " s",
					"the samples (and intervals) that begin in this range",
					() => { remember(); S.range = null; update(); }));
		if (S.focus)
			chips.push(chip(S.focus.label, "only this " + S.focus.kind, () => { remember(); S.focus = null; update(); }));
		S.transforms.forEach((t) => chips.push(chip(t.type + ": " + t.label,
			t.type === "focus" ? "only the stacks through it" : "leaving out the stacks through it",
			() => { remember(); S.transforms = S.transforms.filter((x) => x !== t); update(true); })));
		if (chips.length)
			chips.push(h("button", { class: "link", onclick: undo, title: "undo the last choice" }, "undo"),
				   h("button", { class: "link", onclick: clearAll }, "clear all"));
		else
			chips.push(h("span", { class: "hint" },
				     "Drag on the timeline to choose a time range; click a thread or a process to see it alone; " +
				     "right-click a function to focus on it or exclude it."));
		const all = !S.range && !S.focus && !S.transforms.length;

		el.bar.replaceChildren(...chips);
		el.totals.textContent = amount(W.total) + (all ? "" : " (" + fmtPct(pct(W.total, allTotal())) + " of all)");
	}

	let allTotalCache = null;

	function allTotal() {
		if (!allTotalCache || allTotalCache.weight !== S.weight)
			allTotalCache = { weight: S.weight, total: M.weigh(S.prof, { weight: S.weight }).total };
		return allTotalCache.total;
	}

	// What was chosen last, undone: a transform, a focus, a range.
	const history = [];

	function remember() {
		history.push({ range: S.range, focus: S.focus, transforms: S.transforms.slice() });
		if (history.length > 100)
			history.shift();
	}

	function undo() {
		const last = history.pop();

		if (!last)
			return;
		S.range = last.range;
		S.focus = last.focus;
		S.transforms = last.transforms;
		update(true);
	}

	function clearAll() {
		remember();
		S.range = null;
		S.focus = null;
		S.transforms = [];
		update(true);
	}

	function addTransform(type, f) {
		const p = S.prof;

		remember();
		S.transforms.push({ type: type, keys: [funcKey(p, f)], label: fname(p, f) });
		update(true);
	}

	// ---- the timeline ----------------------------------------------------

	// The tracks shown: processes by weight, each with its threads by
	// weight; the quiet ones folded.
	function trackLayout() {
		const p = S.prof, wt = new Float64Array(p.threads.length);

		for (const tr of p.tracks)
			wt[tr.thread] = tr.t.length + tr.ot.length;
		const procs = p.processes.map((pr) => ({
			pr: pr, w: pr.threads.reduce((a, t) => a + wt[t.index], 0),
			threads: pr.threads.filter((t) => t.track).sort((a, b) => wt[b.index] - wt[a.index] || a.tid - b.tid),
		})).filter((x) => x.threads.length).sort((a, b) => b.w - a.w);
		let budget = SHOWN_THREADS;
		const rows = [];

		for (const x of procs.slice(0, S.processes)) {
			// a process of one thread is one track, that thread's
			rows.push({ kind: "process", pr: x.pr, threads: x.threads, single: x.threads.length === 1 });
			if (x.threads.length === 1) {
				budget--;
				continue;
			}
			const open = S.folded.get(x.pr.index);
			let shown = 0;

			for (const t of x.threads) {
				if (open || shown < Math.max(1, budget)) {
					rows.push({ kind: "thread", th: t });
					shown++;
				}
			}
			budget -= shown;
			if (shown < x.threads.length)
				rows.push({ kind: "more", pr: x.pr, n: x.threads.length - shown });
		}
		if (procs.length > S.processes)
			rows.push({ kind: "more processes", n: procs.length - S.processes,
				    threads: procs.slice(S.processes).reduce((a, x) => a + x.threads.length, 0) });
		return rows;
	}

	function renderTimeline() {
		const p = S.prof;

		if (!S.win)
			S.win = [0, Math.max(p.end, 1)];
		const rows = trackLayout();
		const kids = [h("div", { class: "tl-row axis" }, h("div", { class: "tl-label" },
				h("button", { class: "link", id: "zoom-in", onclick: zoomToRange, title: "show only the range chosen" }, "zoom to range"),
				" ", h("button", { class: "link", onclick: () => { S.win = null; renderTimeline(); } }, "whole")),
			      h("canvas", { class: "tl-canvas", height: 18, "data-axis": "1" }))];

		for (const r of rows) {
			if (r.kind === "more processes") {
				kids.push(h("div", { class: "tl-row more" }, h("div", { class: "tl-label" },
					h("button", { class: "link", onclick: () => { S.processes += 100; renderTimeline(); } },
					  "+ " + r.n + " more process" + (r.n > 1 ? "es" : "") + " (" + r.threads + " thread" +
					  (r.threads > 1 ? "s" : "") + ")" + (r.n > 100 ? ": show 100 more" : "")))));
				continue;
			}
			if (r.kind === "more") {
				kids.push(h("div", { class: "tl-row more" }, h("div", { class: "tl-label" },
					h("button", { class: "link", onclick: () => { S.folded.set(r.pr.index, true); renderTimeline(); } },
					  "+ " + r.n + " more thread" + (r.n > 1 ? "s" : "") + " of " + r.pr.name))));
				continue;
			}
			const isProc = r.kind === "process";
			const focused = S.focus && (isProc ? S.focus.kind === "process" && S.focus.id === r.pr.index
						    : S.focus.kind === "thread" && S.focus.id === r.th.index);
			const th = r.single ? r.threads[0] : r.th;
			const label = isProc ? r.pr.name + " (pid " + r.pr.pid + ")" +
				(r.single && th.name !== r.pr.name ? " " + th.name : "") : th.name + " (tid " + th.tid + ")";
			const row = h("div", { class: "tl-row " + r.kind + (r.single ? " single" : "") + (focused ? " focused" : ""),
					       title: label },
				      h("div", { class: "tl-label" }, label),
				      h("canvas", { class: "tl-canvas", height: isProc && !r.single ? PROCESS_H : TRACK_H }));

			row.rowInfo = r;
			kids.push(row);
		}
		const sel = h("div", { class: "tl-sel", hidden: "" });

		kids.push(sel);
		el.timeline.replaceChildren(...kids);
		el.sel = sel;
		drawTimeline();
	}

	// A track's activity in the window: its CPU samples (those through a
	// searched function apart) in columns a few px wide, as a share of what
	// the sampling rate gives a thread that runs all the time (of the
	// busiest column, for a process); its off-CPU intervals in a strip
	// under it, blocked and runnable in their own colours.
	function drawTrack(cv, tracks, isProc) {
		const p = S.prof, dpr = window.devicePixelRatio || 1;
		const wpx = cv.clientWidth, hpx = isProc ? PROCESS_H : TRACK_H;

		cv.width = Math.max(1, Math.round(wpx * dpr));
		cv.height = Math.round(hpx * dpr);
		const ctx = cv.getContext("2d");

		ctx.scale(dpr, dpr);
		const [v0, v1] = S.win, span = v1 - v0, freq = p.facts.freq_hz;
		// a column wide enough for a few samples of a busy thread
		const perPx = freq ? freq * (span / 1e9) / wpx : 1;
		const bw = Math.min(16, Math.max(1, Math.ceil(3 / perPx)));
		const cols = Math.max(1, Math.ceil(wpx / bw));
		const cpu = new Float64Array(cols), hit = new Float64Array(cols);
		const match = S.flags ? M.stacksThrough(p, S.flags) : null;

		for (const tr of tracks) {
			const t = tr.t;

			for (let i = M.lowerBound(t, v0 / 1e9); i < t.length && t[i] <= v1; i++) {
				const c = Math.min(cols - 1, Math.floor((t[i] - v0) / span * wpx / bw));

				cpu[c]++;
				if (match && match[tr.s[i]])
					hit[c]++;
			}
		}
		let full = freq && !isProc ? perPx * bw : 0;

		if (!full)
			full = Math.max(1, ...cpu);
		const strip = !isProc && p.facts.offcpu ? OFF_H : 0, top = hpx - strip - 1;
		const bars = (counts, color) => {
			ctx.fillStyle = color;
			for (let c = 0; c < cols; c++) {
				if (!counts[c])
					continue;
				const y = top * Math.min(1, counts[c] / full);

				ctx.fillRect(c * bw, top - y + 1, bw, y);
			}
		};

		bars(cpu, isProc ? "rgb(150,150,160)" : "rgb(235,150,40)");
		if (match)
			bars(hit, "rgb(200,0,200)");
		if (!strip)
			return;
		for (const tr of tracks) {
			for (let i = 0; i < tr.ot.length; i++) {
				const a = tr.ot[i], b = a + tr.od[i];

				if (b < v0 || a > v1)
					continue;
				const x0 = (Math.max(a, v0) - v0) / span * wpx, x1 = (Math.min(b, v1) - v0) / span * wpx;

				ctx.fillStyle = tr.ok[i] === 2 ? "rgb(200,80,160)" : "rgb(80,130,210)";
				ctx.fillRect(x0, hpx - strip + 1, Math.max(1, x1 - x0), strip - 2);
			}
		}
	}

	function drawAxis(cv) {
		const dpr = window.devicePixelRatio || 1, wpx = cv.clientWidth;

		cv.width = Math.max(1, Math.round(wpx * dpr));
		cv.height = Math.round(18 * dpr);
		const ctx = cv.getContext("2d");

		ctx.scale(dpr, dpr);
		ctx.font = "11px sans-serif";
		ctx.fillStyle = "#555";
		const [v0, v1] = S.win, span = (v1 - v0) / 1e9;
		const step = [1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600]
			.find((s) => span / s <= wpx / 90) || 7200;
		const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));

		for (let t = Math.ceil(v0 / 1e9 / step) * step; t <= v1 / 1e9; t += step) {
			const x = (t - v0 / 1e9) / span * wpx;

			ctx.fillRect(x, 12, 1, 6);
			ctx.fillText(t.toFixed(digits) + " s", x + 3, 11);
		}
	}

	function drawTimeline() {
		for (const row of el.timeline.children) {
			const cv = row.querySelector ? row.querySelector("canvas") : null;

			if (!cv)
				continue;
			if (cv.dataset.axis) {
				drawAxis(cv);
				continue;
			}
			const r = row.rowInfo;

			drawTrack(cv, r.kind === "process" ? r.threads.map((t) => t.track) : [r.th.track],
				  r.kind === "process" && !r.single);
		}
		drawSelection();
	}

	function drawSelection() {
		const sel = el.sel;

		if (!sel)
			return;
		if (!S.range) {
			sel.hidden = true;
			return;
		}
		const cv = el.timeline.querySelector("canvas");
		const wpx = cv.clientWidth, [v0, v1] = S.win;
		const x0 = Math.max(0, (S.range[0] * 1e9 - v0) / (v1 - v0) * wpx);
		const x1 = Math.min(wpx, (S.range[1] * 1e9 - v0) / (v1 - v0) * wpx);

		sel.hidden = x1 <= x0;
		sel.style.left = (cv.offsetLeft + x0) + "px";
		sel.style.width = Math.max(1, x1 - x0) + "px";
	}

	function zoomToRange() {
		if (!S.range)
			return;
		S.win = [S.range[0] * 1e9, S.range[1] * 1e9];
		renderTimeline();
	}

	// Brushing: a drag over the tracks chooses a range, a click a track.
	function timelineMouse() {
		let down = null;
		const timeAt = (ev) => {
			const cv = el.timeline.querySelector("canvas"), r = cv.getBoundingClientRect();
			const x = Math.min(Math.max(ev.clientX - r.left, 0), r.width);

			return (S.win[0] + x / r.width * (S.win[1] - S.win[0])) / 1e9;
		};

		el.timeline.addEventListener("mousedown", (ev) => {
			if (ev.button !== 0 || !ev.target.classList.contains("tl-canvas"))
				return;
			down = { x: ev.clientX, t: timeAt(ev), row: ev.target.parentNode, prev: S.range };
			ev.preventDefault();
		});
		window.addEventListener("mousemove", (ev) => {
			if (!down)
				return;
			if (Math.abs(ev.clientX - down.x) < 3 && !down.moved)
				return;
			down.moved = true;
			const t = timeAt(ev);

			S.range = [Math.min(down.t, t), Math.max(down.t, t)];
			drawSelection();
		});
		window.addEventListener("mouseup", (ev) => {
			if (!down)
				return;
			const d = down;

			down = null;
			if (d.moved) {
				const t = timeAt(ev);

				S.range = d.prev;
				remember();
				setRange(Math.min(d.t, t), Math.max(d.t, t));
				return;
			}
			const r = d.row.rowInfo;

			if (r)
				focusRow(r);
		});
		el.timeline.addEventListener("mousemove", (ev) => {
			if (!ev.target.classList.contains("tl-canvas") || down) {
				el.tip.hidden = true;
				return;
			}
			const r = ev.target.parentNode.rowInfo, t = timeAt(ev);
			const th = r && (r.kind === "thread" ? r.th : r.single ? r.threads[0] : null);
			const at = th ? eventAt(th.track, t, ev.target.getBoundingClientRect().width) : null;

			showTip(ev, [h("b", null, r ? (r.kind === "process" ? r.pr.name + " (pid " + r.pr.pid + ")" : r.th.name + " (tid " + r.th.tid + ")") : "time"),
				     h("div", null, t.toFixed(4) + " s"), at,
				     h("div", { class: "muted" }, r ? "click: this " + r.kind + " alone; drag: a time range" : "drag: a time range")]);
		});
		el.timeline.addEventListener("mouseleave", () => { el.tip.hidden = true; });
	}

	// What thread track TR did at T s, within a few px of a WPX-wide track:
	// the stack of its sample nearest T, or the interval T falls in.
	function eventAt(tr, t, wpx) {
		const p = S.prof, ns = t * 1e9, slack = (S.win[1] - S.win[0]) / wpx * 3;
		let stack = -1, what = "";

		for (let i = 0; i < tr.ot.length; i++)
			if (tr.ot[i] <= ns && ns < tr.ot[i] + tr.od[i]) {
				stack = tr.os[i];
				what = (tr.ok[i] === 2 ? "runnable for " : "blocked for ") + amount(tr.od[i], "wall");
			}
		if (stack < 0) {
			const i = M.lowerBound(tr.t, t), near = [i - 1, i].filter((k) => k >= 0 && k < tr.t.length)
				.sort((a, b) => Math.abs(tr.t[a] - ns) - Math.abs(tr.t[b] - ns))[0];

			if (near === undefined || Math.abs(tr.t[near] - ns) > slack)
				return null;
			stack = tr.s[near];
			what = "sample at " + (tr.t[near] / 1e9).toFixed(4) + " s";
		}
		const frames = [];

		for (let s = stack; s >= 0 && frames.length < 16; s = p.stackParent[s])
			frames.push(h("div", { class: "frame" }, h("span", { class: "sw", style: "background:" + fill(p, p.stackFunc[s]) }),
				      fname(p, p.stackFunc[s])));
		return h("div", { class: "stack" }, h("div", { class: "muted" }, what), ...frames);
	}

	function focusRow(r) {
		remember();
		if (r.kind === "process") {
			if (S.focus && S.focus.kind === "process" && S.focus.id === r.pr.index)
				S.focus = null;
			else
				S.focus = { kind: "process", id: r.pr.index, threads: r.pr.threads.map((t) => t.index),
					    label: "process " + r.pr.name + " (pid " + r.pr.pid + ")" };
		} else if (S.focus && S.focus.kind === "thread" && S.focus.id === r.th.index) {
			S.focus = null;
		} else {
			S.focus = { kind: "thread", id: r.th.index, threads: [r.th.index],
				    label: "thread " + r.th.name + " (tid " + r.th.tid + ")" };
		}
		update();
	}

	function setRange(from, to) {
		S.range = from === null ? null : [from, to];
		update();
	}

	// ---- the tooltip and the context menu ---------------------------------

	function showTip(ev, kids) {
		const tip = el.tip;

		tip.replaceChildren(...kids);
		tip.hidden = false;
		const x = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
		const y = ev.clientY + 16 + tip.offsetHeight > window.innerHeight ? ev.clientY - tip.offsetHeight - 8 : ev.clientY + 16;

		tip.style.left = Math.max(0, x) + "px";
		tip.style.top = Math.max(0, y) + "px";
	}

	function funcMenu(ev, f) {
		const p = S.prof, menu = el.menu;
		const item = (label, fn) => h("button", { onclick: () => { menu.hidden = true; fn(); } }, label);

		ev.preventDefault();
		put(menu, h("div", { class: "menu-title" }, fname(p, f)),
			item("Focus on this function (only the stacks through it)", () => addTransform("focus", f)),
			item("Exclude this function (leave out the stacks through it)", () => addTransform("exclude", f)),
			item("Callers and callees of this function", () => openSandwich(f)),
			item("Search for it", () => setSearch("^" + fname(p, f).replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "$")));
		menu.hidden = false;
		menu.style.left = Math.min(ev.clientX, window.innerWidth - menu.offsetWidth - 8) + "px";
		menu.style.top = Math.min(ev.clientY, window.innerHeight - menu.offsetHeight - 8) + "px";
	}

	// ---- flame graphs ----------------------------------------------------

	// Draw the tree of AGG on canvas CV, from node ROOT (its ancestors as
	// full-width frames under it): flame (roots at the bottom) or icicle;
	// the top of the tree (all) drawn unless NOROOT (a tree of one root).
	// Returns what was drawn, for the mouse: rows of [x, w, node].
	function drawFlame(cv, agg, opt) {
		const p = S.prof, t = agg.tree, kids = M.sortedChildren(p, t);
		const dpr = window.devicePixelRatio || 1, wpx = Math.max(100, cv.parentNode.clientWidth);
		const root = opt.root || 0, rootTotal = agg.total[root], base = opt.noRoot ? 1 : 0;
		const path = [];

		for (let a = root; a > 0; a = t.parent[a])
			path.unshift(a);
		// first the depth, for the height
		const drawn = [];
		let maxDepth = path.length;
		const todo = [[root, 0]];

		while (todo.length) {
			const [n, x] = todo.pop();
			const w = rootTotal ? agg.total[n] / rootTotal * wpx : 0;

			if (w < MIN_PX)
				continue;
			if (n || !base)
				drawn.push([n, x, w]);
			if (t.depth[n] > maxDepth)
				maxDepth = t.depth[n];
			let cx = x;

			for (const c of kids[n]) {
				if (!agg.total[c])
					continue;
				todo.push([c, cx]);
				cx += agg.total[c] / rootTotal * wpx;
			}
		}
		const hpx = (maxDepth + 1 - base) * ROW + 2;

		cv.style.height = hpx + "px";
		cv.style.width = wpx + "px";
		cv.width = Math.round(wpx * dpr);
		cv.height = Math.round(hpx * dpr);
		const ctx = cv.getContext("2d");

		ctx.scale(dpr, dpr);
		ctx.font = "12px sans-serif";
		ctx.textBaseline = "middle";
		const charW = ctx.measureText("abcdefghijklmnopqrstuvwxyz_").width / 27;
		const rows = [];
		const yOf = (d) => opt.icicle ? d * ROW : hpx - (d + 1) * ROW;
		const box = (n, x, w, depth, dim) => {
			const d = depth - base, y = yOf(d), f = n ? t.func[n] : -1;
			let color = n === 0 ? "rgb(200,200,205)" : fill(p, f);

			if (opt.diff && n && agg === AGG)	// the base is matched to the call tree
				color = diffFill(n);
			if (S.flags && f >= 0 && S.flags[f])
				color = "rgb(230,0,230)";
			ctx.globalAlpha = dim ? 0.55 : 1;
			ctx.fillStyle = color;
			ctx.fillRect(x, y, Math.max(w - 0.5, 0.5), ROW - 1);
			if (f >= 0 && p.funcInlined[f] && w > 3) {
				ctx.strokeStyle = "rgba(0,60,90,0.8)";
				ctx.strokeRect(x + 0.5, y + 0.5, w - 1.5, ROW - 2);
			}
			ctx.globalAlpha = 1;
			const fit = Math.floor((w - 6) / charW);

			if (fit >= 3) {
				const name = n === 0 ? opt.rootName || "all" : fname(p, f) + (p.funcInlined[f] ? " [inlined]" : "");

				ctx.fillStyle = "#000";
				ctx.fillText(name.length <= fit ? name : name.slice(0, fit - 2) + "..", x + 3, y + ROW / 2);
			}
			(rows[d] = rows[d] || []).push([x, w, n]);
		};

		// the path to the zoomed frame, at full width and dimmed
		if (root) {
			if (!base)
				box(0, 0, wpx, 0, true);
			for (const a of path.slice(0, -1))
				box(a, 0, wpx, t.depth[a], true);
		}
		for (const [n, x, w] of drawn)
			box(n, x, w, t.depth[n], false);
		for (const r of rows)
			if (r)
				r.sort((a, b) => a[0] - b[0]);
		return { rows: rows, yOf: yOf, hpx: hpx, drawn: drawn, wpx: wpx, agg: agg };
	}

	function diffFill(n) {
		const c = change(n), m = maxChange();
		const k = 235 - Math.round(200 * Math.min(1, m ? Math.abs(c.change) / m : 0));

		if (c.change > 0.005)
			return "rgb(255," + k + "," + k + ")";
		if (c.change < -0.005)
			return "rgb(" + k + "," + k + ",255)";
		return "rgb(235,235,235)";
	}

	let maxChangeCache = null;

	function maxChange() {
		if (maxChangeCache && maxChangeCache.agg === AGG)
			return maxChangeCache.v;
		let m = 0;

		for (let n = 1; n < AGG.tree.n; n++)
			if (AGG.total[n])
				m = Math.max(m, Math.abs(change(n).change));
		maxChangeCache = { agg: AGG, v: m };
		return m;
	}

	// The node under the mouse in a drawn graph G.
	function nodeAt(g, ev) {
		const r = ev.target.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;

		for (let d = 0; d < g.rows.length; d++) {
			const y0 = g.yOf(d);

			if (y < y0 || y >= y0 + ROW || !g.rows[d])
				continue;
			const row = g.rows[d];
			let lo = 0, hi = row.length - 1;

			while (lo < hi) {
				const mid = (lo + hi + 1) >> 1;

				if (row[mid][0] <= x)
					lo = mid;
				else
					hi = mid - 1;
			}
			if (row[lo] && row[lo][0] <= x && x < row[lo][0] + row[lo][1])
				return row[lo][2];
		}
		return -1;
	}

	function nodeTip(ev, agg, n, zoom) {
		const p = S.prof, t = agg.tree, total = agg.total[0];

		if (n === 0)
			return showTip(ev, [h("b", null, "all"), h("div", null, amount(total))]);
		const f = t.func[n], kids = [h("b", null, fname(p, f) + (p.funcInlined[f] ? " [inlined]" : ""))];
		const src = where(p, f, t === S.prof.tree ? linesOf(n) : null);

		if (fmodule(p, f))
			kids.push(h("div", { class: "muted" }, fmodule(p, f) + " \u00b7 " + kindName(p, f)));
		if (src)
			kids.push(h("div", { class: "muted" }, src));
		kids.push(h("div", null, amount(agg.total[n]) + ", " + fmtPct(pct(agg.total[n], total)) + " of the selection" +
			    (zoom && zoom !== n ? ", " + fmtPct(pct(agg.total[n], agg.total[zoom])) + " of the zoom" : "")));
		if (agg.self[n])
			kids.push(h("div", null, "self " + amount(agg.self[n]) + " (" + fmtPct(pct(agg.self[n], total)) + ")"));
		if (S.diff && agg === AGG) {
			const c = change(n);

			kids.push(h("div", null, "base " + fmtPct(c.base) + ", " + (c.change >= 0 ? "+" : "") + c.change.toFixed(2) + " points"));
		}
		showTip(ev, kids);
	}

	// A flame graph in HOST: canvas, mouse, zoom by click.
	function flameWidget(host, getAgg, opt) {
		const cv = h("canvas", { class: "flame" });
		const hl = h("div", { class: "hl", hidden: "" });
		let g = null;

		host.replaceChildren(h("div", { class: "flame-box" }, cv, hl));
		const w = {
			root: 0,
			draw() {
				const agg = getAgg();

				if (w.root && !agg.total[w.root])
					w.root = 0;
				g = drawFlame(cv, agg, Object.assign({ root: w.root }, opt));
				hl.hidden = true;
				return g;
			},
			graph: () => g,
		};

		cv.addEventListener("mousemove", (ev) => {
			const n = nodeAt(g, ev);

			if (n < 0) {
				el.tip.hidden = true;
				hl.hidden = true;
				return;
			}
			nodeTip(ev, g.agg, n, w.root);
			for (let d = 0; d < g.rows.length; d++)
				for (const r of g.rows[d] || [])
					if (r[2] === n) {
						hl.hidden = false;
						hl.style.left = r[0] + "px";
						hl.style.top = g.yOf(d) + "px";
						hl.style.width = Math.max(1, r[1] - 1) + "px";
						hl.style.height = (ROW - 1) + "px";
					}
		});
		cv.addEventListener("mouseleave", () => { el.tip.hidden = true; hl.hidden = true; });
		cv.addEventListener("click", (ev) => {
			const n = nodeAt(g, ev);

			if (n < 0)
				return;
			if (opt.onzoom)
				return opt.onzoom(n);	// it draws again
			w.root = n;
			w.draw();
		});
		cv.addEventListener("contextmenu", (ev) => {
			const n = nodeAt(g, ev);

			if (n > 0)
				funcMenu(ev, g.agg.tree.func[n]);
		});
		return w;
	}

	// ---- the views ------------------------------------------------------

	let flame = null;

	function flameAgg() {
		return S.inverted ? callers() : AGG;
	}

	function renderView() {
		for (const v of ["flame", "tree", "functions"]) {
			el["view-" + v].hidden = S.view !== v;
			el["tab-" + v].classList.toggle("on", S.view === v);
		}
		put(el.opts, 
			S.view !== "functions" ? h("label", null, h("input", Object.assign({ type: "checkbox", id: "opt-inverted",
				onchange: (ev) => { S.inverted = S.icicle = ev.target.checked; S.zoom = 0; renderView(); } },
				S.inverted ? { checked: "" } : {})),
				S.view === "tree" ? " bottom-up (callers)" : " inverted (callers)") : null,
			S.view === "flame" ? h("label", null, h("input", Object.assign({ type: "checkbox", id: "opt-icicle",
				onchange: (ev) => { S.icicle = ev.target.checked; flame = null; renderView(); } }, S.icicle ? { checked: "" } : {})),
				" icicle (roots at the top)") : null,
			S.view === "flame" && S.zoom ? h("button", { class: "link", onclick: () => { S.zoom = 0; renderView(); } }, "reset zoom") : null);
		if (S.view === "flame") {
			if (flame && flame.icicle !== S.icicle)
				flame = null;
			if (!flame) {
				flame = flameWidget(el.flameHost, flameAgg, { icicle: S.icicle, diff: S.diff,
									     onzoom: (n) => { S.zoom = n; renderView(); } });
				flame.icicle = S.icicle;
			}
			flame.root = S.zoom;
			flame.draw();
		} else if (S.view === "tree") {
			renderTree();
		} else {
			renderFunctions();
		}
		renderMatched();
	}

	// The call tree: rows of expandable nodes, children by total.
	function renderTree() {
		const p = S.prof, agg = S.inverted ? callers() : AGG, t = agg.tree;
		const kids = M.sortedChildren(p, t), expanded = S.inverted ? S.expandedCallers : S.expanded;
		const total = agg.total[0];
		const byTotal = (n) => kids[n].filter((c) => agg.total[c])
			.sort((a, b) => agg.total[b] - agg.total[a] || M.funcCmp(p, t.func[a], t.func[b]));

		// the heaviest path open at first
		if (!expanded.size) {
			for (let n = 0, d = 0; d < 60; d++) {
				expanded.add(n);
				const c = byTotal(n);

				if (!c.length || agg.total[c[0]] < total * 0.05)
					break;
				n = c[0];
			}
		}
		const rows = [h("div", { class: "tr head" }, h("span", { class: "num" }, "total"), h("span", { class: "num" }, S.inverted ? "" : "self"),
				h("span", { class: "num wide" }, S.weight === "cpu" ? "samples" : "time"), h("span", { class: "fn" }, S.inverted ? "function, then its callers" : "function"))];
		const todo = byTotal(0).reverse();
		let count = 0;

		while (todo.length && count < MAX_ROWS) {
			const n = todo.pop(), f = t.func[n], open = expanded.has(n), ch = byTotal(n);

			count++;
			const row = h("div", { class: "tr", "data-node": n },
				h("span", { class: "num" }, fmtPct(pct(agg.total[n], total))),
				h("span", { class: "num" }, S.inverted ? "" : fmtPct(pct(agg.self[n], total))),
				h("span", { class: "num wide" }, amount(agg.total[n]).replace(/ samples?$/, "")),
				h("span", { class: "fn", style: "padding-left:" + (Math.min(t.depth[n], 60) - 1) * 14 + "px" },
				  h("span", { class: "tw" }, ch.length ? (open ? "\u25be" : "\u25b8") : ""),
				  h("span", { class: "sw", style: "background:" + fill(p, f) }),
				  fname(p, f), p.funcInlined[f] ? h("span", { class: "tag" }, "inlined") : null,
				  h("span", { class: "mod" }, fmodule(p, f))));

			row.addEventListener("click", () => {
				if (open)
					expanded.delete(n);
				else
					expanded.add(n);
				renderTree();
			});
			row.addEventListener("contextmenu", (ev) => funcMenu(ev, f));
			row.addEventListener("mousemove", (ev) => nodeTip(ev, agg, n, 0));
			row.addEventListener("mouseleave", () => { el.tip.hidden = true; });
			rows.push(row);
			if (open)
				for (let i = ch.length - 1; i >= 0; i--)
					todo.push(ch[i]);
		}
		if (todo.length)
			rows.push(h("div", { class: "tr more" }, "... " + todo.length + " more rows not shown: close some"));
		el["view-tree"].replaceChildren(h("div", { class: "treebox" }, ...rows));
	}

	// The functions: self and total, sortable; a row opens its sandwich.
	function renderFunctions() {
		const p = S.prof, agg = AGG, total = agg.total[0];
		const fs = [];

		for (let f = 0; f < p.nfuncs; f++)
			if (agg.funcTotal[f])
				fs.push(f);
		const key = S.sort.key, dir = S.sort.desc ? -1 : 1;
		const val = { self: (f) => agg.funcSelf[f], total: (f) => agg.funcTotal[f],
			      name: (f) => fname(p, f), module: (f) => fmodule(p, f) }[key];

		fs.sort((a, b) => {
			const x = val(a), y = val(b);

			if (x !== y)
				return (x < y ? -1 : 1) * dir;
			return agg.funcSelf[b] - agg.funcSelf[a] || agg.funcTotal[b] - agg.funcTotal[a] || M.funcCmp(p, a, b);
		});
		const head = (k, label, cls) => h("th", { class: cls + (key === k ? " sorted" : ""), "data-key": k,
			onclick: () => { S.sort = { key: k, desc: key === k ? !S.sort.desc : k === "self" || k === "total" }; renderFunctions(); } },
			label + (key === k ? (S.sort.desc ? " \u25be" : " \u25b4") : ""));
		const diffCols = S.diff ? [h("th", { class: "num" }, "base self"), h("th", { class: "num" }, "change")] : [];
		const table = h("table", { class: "funcs" }, h("thead", null, h("tr", null,
			head("self", "self", "num"), h("th", { class: "num" }, "self%"), head("total", "total", "num"),
			h("th", { class: "num" }, "total%"), ...diffCols, head("name", "function", ""), head("module", "module", ""), h("th", null, "source"))));
		const body = h("tbody");
		let baseSelf = null;

		if (S.diff) {
			baseSelf = new Map();
			const b = S.base;

			for (let f = 0; f < b.nfuncs; f++)
				if (BASE.funcSelf[f])
					baseSelf.set(funcKey(b, f), pct(BASE.funcSelf[f], BASE.total[0]));
		}
		for (const f of fs.slice(0, S.funcRows)) {
			const cells = [h("td", { class: "num" }, amount(agg.funcSelf[f]).replace(/ samples?$/, "")),
				h("td", { class: "num" }, fmtPct(pct(agg.funcSelf[f], total))),
				h("td", { class: "num" }, amount(agg.funcTotal[f]).replace(/ samples?$/, "")),
				h("td", { class: "num" }, fmtPct(pct(agg.funcTotal[f], total)))];

			if (S.diff) {
				const b = baseSelf.get(funcKey(p, f)) || 0, c = pct(agg.funcSelf[f], total) - b;

				cells.push(h("td", { class: "num" }, fmtPct(b)),
					   h("td", { class: "num " + (c > 0.005 ? "grew" : c < -0.005 ? "shrank" : "") }, (c >= 0 ? "+" : "") + c.toFixed(2)));
			}
			const tr = h("tr", { class: f === S.func ? "on" : "", "data-func": f }, ...cells,
				h("td", { class: "fn" }, h("span", { class: "sw", style: "background:" + fill(p, f) }), fname(p, f),
				  p.funcInlined[f] ? h("span", { class: "tag" }, "inlined") : null),
				h("td", { class: "mod" }, fmodule(p, f)), h("td", { class: "mod" }, where(p, f, null)));

			tr.addEventListener("click", () => openSandwich(f));
			tr.addEventListener("contextmenu", (ev) => funcMenu(ev, f));
			body.append(tr);
		}
		table.append(body);
		const note = fs.length > S.funcRows ? h("div", { class: "muted" }, (fs.length - S.funcRows) + " more functions ",
			h("button", { class: "link", onclick: () => { S.funcRows += 1000; renderFunctions(); } }, "show 1000 more")) : null;

		put(el["view-functions"], h("div", { class: "funcbox" }, table, note), el.sandwich);
		renderSandwich();
	}

	function openSandwich(f) {
		S.func = f;
		if (S.view !== "functions") {
			S.view = "functions";
			renderView();
		} else {
			renderFunctions();
		}
		el.sandwich.scrollIntoView({ block: "nearest" });
	}

	function renderSandwich() {
		const p = S.prof, f = S.func;

		if (f < 0 || !AGG.funcTotal[f]) {
			el.sandwich.replaceChildren(h("p", { class: "hint" }, "Click a function for its callers and callees."));
			return;
		}
		const sw = M.sandwich(p, W.stack, f);
		const up = h("div"), down = h("div");

		el.sandwich.replaceChildren(
			h("h3", null, "Callers of ", h("b", null, fname(p, f)), " (", amount(AGG.funcTotal[f]), ", ",
			  fmtPct(pct(AGG.funcTotal[f], AGG.total[0])), ")"), up,
			h("h3", null, "Callees of ", h("b", null, fname(p, f))), down);
		flameWidget(up, () => sw.callers, { noRoot: true }).draw();
		flameWidget(down, () => sw.callees, { icicle: true, noRoot: true }).draw();
	}

	// ---- search -----------------------------------------------------------

	function setSearch(term) {
		el.search.value = term;
		try {
			S.re = M.searchRegExp(term);
			el.search.classList.remove("bad");
		} catch {
			S.re = null;
			el.search.classList.add("bad");
		}
		S.flags = S.re ? M.matchFuncs(S.prof, S.re) : null;
		renderView();
		drawTimeline();
	}

	// What the search matches: of the selection, and of the zoomed frame.
	function searchShares() {
		if (!S.flags)
			return null;
		const agg = flameAgg(), kids = M.sortedChildren(S.prof, agg.tree);
		const all = M.matchedUnder(agg, kids, S.flags, 0);
		const zoom = S.view === "flame" && S.zoom ? S.zoom : 0;
		const inZoom = zoom ? M.matchedUnder(agg, kids, S.flags, zoom) : all;

		return { matched: all, total: agg.total[0], share: pct(all, agg.total[0]),
			 zoomMatched: inZoom, zoomTotal: agg.total[zoom], zoomShare: pct(inZoom, agg.total[zoom]) };
	}

	function renderMatched() {
		const m = searchShares();

		el.matched.textContent = m ? "matched " + amount(m.matched) + ", " + fmtPct(m.share) + " of the selection" +
			(S.view === "flame" && S.zoom ? ", " + fmtPct(m.zoomShare) + " of the zoom" : "") : "";
	}

	// ---- it all together ----------------------------------------------------

	function update(transformsChanged) {
		const t0 = performance.now();

		reaggregate(transformsChanged);
		const t1 = performance.now();

		if (el.weight)
			el.weight.value = S.weight;
		renderBar();
		renderView();
		const t2 = performance.now();

		drawTimeline();
		if (window.profViewer)
			window.profViewer.timings.update = { aggregate: t1 - t0, view: t2 - t1, timeline: performance.now() - t2 };
		for (const row of el.timeline.children) {
			const r = row.rowInfo;

			if (!r)
				continue;
			row.classList.toggle("focused", !!S.focus && (r.kind === "process" ? S.focus.kind === "process" && S.focus.id === r.pr.index
								 : S.focus.kind === "thread" && S.focus.id === r.th.index));
		}
	}

	// What the colours mean, those of the frames as of the timeline.
	function legend() {
		const key = (color, label, title) => h("span", { class: "key", title: title },
			h("span", { class: "sw", style: "background:" + color }), label);
		const off = S.prof.facts.offcpu;

		return h("span", { class: "legend" },
			key("rgb(230,90,80)", "user", "a function of a program or library"),
			key("rgb(240,160,20)", "kernel", "a function of the kernel"),
			key("rgb(110,210,210)", "inlined", "a function inlined into its caller (framed)"),
			key("rgb(90,215,90)", "JIT", "code without a file"),
			off ? key("rgb(80,130,210)", "blocked", "off CPU, waiting for something") : null,
			off ? key("rgb(200,80,160)", "runnable", "off CPU, waiting for a CPU") : null);
	}

	function layout() {
		const app = document.getElementById("app");
		const tab = (v, label) => el["tab-" + v] = h("button", { class: "tab", id: "tab-" + v,
			onclick: () => { S.view = v; renderView(); } }, label);

		el.header = h("header");
		el.bar = h("div", { class: "bar", id: "bar" });
		el.totals = h("span", { class: "totals", id: "totals" });
		el.timeline = h("div", { class: "timeline", id: "timeline" });
		el.search = h("input", { type: "search", id: "search", placeholder: "search functions (regex; Ctrl-F)",
					 oninput: (ev) => setSearch(ev.target.value) });
		el.matched = h("span", { class: "matched", id: "matched" });
		el.opts = h("span", { class: "opts" });
		el.flameHost = h("div");
		el["view-flame"] = h("section", { id: "view-flame" }, el.flameHost);
		el["view-tree"] = h("section", { id: "view-tree" });
		el["view-functions"] = h("section", { id: "view-functions" });
		el.sandwich = h("div", { class: "sandwich", id: "sandwich" });
		el.tip = h("div", { class: "tip", hidden: "" });
		el.menu = h("div", { class: "menu", hidden: "" });
		const weights = el.weight = S.prof.weights.length > 1 ? h("select", { id: "weight", title: "what the views weigh",
			onchange: (ev) => { S.weight = ev.target.value; update(); } },
			...S.prof.weights.map((w) => h("option", Object.assign({ value: w }, w === S.weight ? { selected: "" } : {}),
				{ cpu: "CPU samples", "off-cpu": "off-CPU time", wall: "wall time" }[w]))) : null;

		put(app, el.header,
			h("div", { class: "controls" }, h("span", { class: "sel-label" }, "Selection"), el.bar,
			  h("span", { class: "spacer" }), weights, el.search),
			el.timeline,
			h("nav", null, tab("flame", "Flame graph"), tab("tree", "Call tree"), tab("functions", "Functions"),
			  el.opts, legend(), h("span", { class: "spacer" }), el.matched, el.totals),
			el["view-flame"], el["view-tree"], el["view-functions"], el.tip, el.menu);
		document.addEventListener("keydown", (ev) => {
			if ((ev.ctrlKey || ev.metaKey) && ev.key === "f" || ev.key === "/" && ev.target === document.body) {
				ev.preventDefault();
				el.search.focus();
				el.search.select();
			} else if (ev.key === "Escape") {
				el.menu.hidden = true;
				if (document.activeElement === el.search)
					setSearch("");
			} else if ((ev.ctrlKey || ev.metaKey) && ev.key === "z" && ev.target === document.body) {
				undo();
			}
		});
		document.addEventListener("click", (ev) => {
			if (!el.menu.contains(ev.target))
				el.menu.hidden = true;
		});
		let resizing = null;

		window.addEventListener("resize", () => {
			clearTimeout(resizing);
			resizing = setTimeout(() => { drawTimeline(); renderView(); }, 100);
		});
		timelineMouse();
	}

	// ---- for the tests and the benchmark ------------------------------------

	function api() {
		const p = () => S.prof;
		const findThread = (tid) => p().threads.find((t) => t.tid === tid);

		return {
			timings: {},
			setRange(from, to) {
				const t0 = performance.now();

				remember();
				setRange(from, to);
				return performance.now() - t0;
			},
			range: () => S.range,
			focusThread(tid) {
				const th = findThread(tid);

				if (th)
					focusRow({ kind: "thread", th: th });
				return !!th;
			},
			focusProcess(pid) {
				const pr = p().processes.find((x) => x.pid === pid);

				if (pr)
					focusRow({ kind: "process", pr: pr });
				return !!pr;
			},
			setWeight(w) {
				S.weight = w;
				update();
			},
			show(view) {
				S.view = view;
				renderView();
			},
			setInverted(on) {
				S.inverted = S.icicle = on;
				S.zoom = 0;
				renderView();
			},
			zoom(name) {
				const t = AGG.tree;
				let best = 0;

				for (let n = 1; n < t.n; n++)
					if (fname(p(), t.func[n]) === name && AGG.total[n] > AGG.total[best] - (best ? 0 : Infinity))
						best = n;
				S.zoom = best;
				renderView();
				return best;
			},
			search(term) {
				setSearch(term);
				return searchShares();
			},
			totals: () => ({ weight: S.weight, total: W.total, events: W.events, all: allTotal() }),
			// the share of NAME in the flame graph as drawn: the widths of
			// its outermost frames over the width of the root
			flameShare(name) {
				const g = flame.graph(), t = g.agg.tree;
				let w = 0;

				for (const [n, , width] of g.drawn) {
					if (!n || fname(p(), t.func[n]) !== name)
						continue;
					let up = t.parent[n];

					while (up > 0 && fname(p(), t.func[up]) !== name)
						up = t.parent[up];
					if (up <= 0)
						w += width;
				}
				return 100 * w / g.wpx;
			},
			functions: () => {
				const out = [];

				for (let f = 0; f < p().nfuncs; f++)
					if (AGG.funcTotal[f])
						out.push({ name: fname(p(), f), module: fmodule(p(), f), inlined: !!p().funcInlined[f],
							   self: AGG.funcSelf[f], total: AGG.funcTotal[f] });
				return out;
			},
			// the call tree as `prof report --format=tree --min-percent=0`
			// prints its lines (cpu weight): total%, self%, indent, name, module
			treeLines(inverted) {
				const agg = inverted ? callers() : AGG, t = agg.tree, kids = M.sortedChildren(p(), t);
				const out = [], total = agg.total[0];
				const todo = kids[0].filter((c) => agg.total[c]);
				const order = (a, b) => agg.total[b] - agg.total[a] || M.funcCmp(p(), t.func[a], t.func[b]);

				todo.sort(order).reverse();
				while (todo.length) {
					const n = todo.pop(), f = t.func[n], mod = fmodule(p(), f);

					out.push({ total: pct(agg.total[n], total), self: inverted ? null : pct(agg.self[n], total),
						   depth: t.depth[n], name: fname(p(), f) + (p().funcInlined[f] ? " [inlined]" : ""),
						   module: mod });
					const ch = kids[n].filter((c) => agg.total[c]).sort(order);

					for (let i = ch.length - 1; i >= 0; i--)
						todo.push(ch[i]);
				}
				return out;
			},
			sandwich(name) {
				for (let f = 0; f < p().nfuncs; f++)
					if (fname(p(), f) === name && AGG.funcTotal[f]) {
						openSandwich(f);
						return true;
					}
				return false;
			},
			transform(type, name) {
				for (let f = 0; f < p().nfuncs; f++)
					if (fname(p(), f) === name) {
						addTransform(type, f);
						return true;
					}
				return false;
			},
			undo: undo,
			barText: () => el.bar.textContent,
			threads: () => p().threads.map((t) => ({ tid: t.tid, name: t.name, pid: t.process.pid })),
		};
	}

	// The page's data: JSON, gzip'd, in base64 (atob skips the line breaks).
	async function load() {
		const bin = atob(document.getElementById("prof-data").textContent);
		const bytes = new Uint8Array(bin.length);

		for (let i = 0; i < bin.length; i++)
			bytes[i] = bin.charCodeAt(i);
		const text = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));

		return JSON.parse(await new Response(text).text());
	}

	async function start() {
		const t0 = performance.now();
		const data = await load();

		if (data.format !== "prof-viewer/1")
			throw new Error("this page holds data of format " + data.format + ", not prof-viewer/1");
		S.diff = data.diff;
		S.prof = M.decode(data.profiles[data.profiles.length - 1]);
		S.base = S.diff ? M.decode(data.profiles[0]) : null;
		S.weight = S.prof.weight;
		window.profViewer = api();
		const tm = window.profViewer.timings;

		tm.decode = performance.now() - t0;
		layout();
		renderHeader();
		tm.header = performance.now() - t0;
		renderTimeline();
		tm.timeline = performance.now() - t0;
		update(true);
		tm.render = performance.now() - t0;
		requestAnimationFrame(() => {
			window.profViewer.timings.firstPaint = performance.now();
			window.profViewer.ready = true;
		});
	}

	start().catch((e) => {
		document.getElementById("app").replaceChildren(h("p", { class: "error" }, "The profile cannot be shown: " + e.message));
		throw e;
	});
})();
