// SPDX-License-Identifier: MIT
// viewer_model.js - the data of the html viewer (`prof report --format=html`)
// and what it is aggregated into, without a page: the tables output_html.c
// writes decoded into typed arrays, and for a selection (a weight, a time
// range, threads, transforms) the weight of each stack, the call tree of
// functions, the functions' self and total, the callers tree, a function's
// callers and callees (its sandwich), and what a search matches.  viewer.js
// draws them.  Built into prof and written into each page, after this
// file; it also runs under node, for the tests.
//
// The trees that do not depend on the selection are built once: the call
// tree of functions (every stack of the page placed in it, so that a
// selection only sums weights up it) and, when first asked for, the callers
// tree.  A selection then costs a pass over its events and one over the
// nodes, whatever it is.  Numbers are those of prof report: functions are
// told apart by name, module and inlining; a function's total counts a
// stack once however often it recurses; a time range keeps the samples and
// the intervals that begin in it, times counted as --time counts them.
"use strict";

const ProfModel = (function () {
	const KIND_USER = 0, KIND_INLINED = 1, KIND_KERNEL = 2, KIND_ANON = 3, KIND_OTHER = 4;

	// Undo the delta coding of A (times or periods): running sums, as doubles.
	function undelta(a, scale, base) {
		const out = new Float64Array(a.length);
		let v = 0;

		for (let i = 0; i < a.length; i++) {
			v += a[i];
			out[i] = v * scale - base;
		}
		return out;
	}

	// A Map of number pairs: what a (parent, function) pair names.
	function pairKey(a, b, n) {
		return a * n + b;
	}

	// A tree grown node by node: parents before their children, node 0 the
	// invisible top.  FUNC of node 0 is -1.
	class Tree {
		constructor(nfuncs) {
			this.nfuncs = nfuncs;
			this.n = 1;
			this.parent = new Int32Array(1024);
			this.func = new Int32Array(1024);
			this.depth = new Int32Array(1024);
			this.parent[0] = -1;
			this.func[0] = -1;
			this.ids = new Map();
			this.kids = null;	// children by name, made by sortedChildren()
		}

		child(parent, func) {
			const key = pairKey(parent, func, this.nfuncs);
			let id = this.ids.get(key);

			if (id !== undefined)
				return id;
			if (this.n === this.parent.length) {
				for (const k of ["parent", "func", "depth"]) {
					const a = new Int32Array(this.n * 2);

					a.set(this[k]);
					this[k] = a;
				}
			}
			id = this.n++;
			this.parent[id] = parent;
			this.func[id] = func;
			this.depth[id] = this.depth[parent] + 1;
			this.ids.set(key, id);
			this.kids = null;
			return id;
		}

		find(parent, func) {
			const id = this.ids.get(pairKey(parent, func, this.nfuncs));

			return id === undefined ? -1 : id;
		}
	}

	// Order of functions as the tree format orders equal totals: by
	// name, then module, then the inlined one after.
	function funcCmp(p, a, b) {
		const na = p.funcNames[a], nb = p.funcNames[b];

		if (na !== nb)
			return na < nb ? -1 : 1;
		const ma = p.strings[p.funcModule[a]], mb = p.strings[p.funcModule[b]];

		if (ma !== mb)
			return ma < mb ? -1 : 1;
		return p.funcInlined[a] - p.funcInlined[b];
	}

	// The children of every node of T, each list by name (flamegraph.pl's order).
	function sortedChildren(p, t) {
		if (t.kids)
			return t.kids;
		const kids = new Array(t.n);

		for (let i = 0; i < t.n; i++)
			kids[i] = [];
		for (let i = 1; i < t.n; i++)
			kids[t.parent[i]].push(i);
		for (const k of kids)
			if (k.length > 1)
				k.sort((a, b) => funcCmp(p, t.func[a], t.func[b]));
		t.kids = kids;
		return kids;
	}

	// Whether node N of T is the outermost of its function on its path:
	// a function's total is the total of those nodes (a stack counted once).
	function outerNodes(t) {
		const outer = new Uint8Array(t.n);

		for (let i = 1; i < t.n; i++) {
			let a = t.parent[i];

			while (a > 0 && t.func[a] !== t.func[i])
				a = t.parent[a];
			outer[i] = a <= 0 ? 1 : 0;
		}
		return outer;
	}

	// Running sums of A (stack deltas), as ints.
	function undeltaInt(a) {
		const out = new Int32Array(a.length);
		let v = 0;

		for (let i = 0; i < a.length; i++)
			out[i] = v += a[i];
		return out;
	}

	function decodeTrack(tr, unit, start, periods) {
		const rel = (a) => {
			const t = undelta(a, unit, start);

			// before time 0 is at 0, as --time counts it
			for (let i = 0; i < t.length; i++)
				if (t[i] < 0)
					t[i] = 0;
			return t;
		};
		const od = new Float64Array(tr.od.length);

		for (let i = 0; i < od.length; i++)
			od[i] = tr.od[i] * unit;
		return {
			thread: tr.thread,
			t: rel(tr.t),
			s: undeltaInt(tr.s),
			p: periods && tr.p ? undelta(tr.p, 1, 0) : null,
			ot: rel(tr.ot),
			od: od,
			os: undeltaInt(tr.os),
			ok: Uint8Array.from(tr.ok),
		};
	}

	// One profile of the page's data, ready to aggregate.
	function decode(d) {
		const p = {
			title: d.title, header: d.header, warnings: d.warnings, facts: d.facts,
			weights: d.weights, weight: d.weight, kept: d.kept,
			strings: d.strings,
			nfuncs: d.funcs.name.length,
			funcNames: d.funcs.name,
			funcModule: Int32Array.from(d.funcs.module),
			funcFile: Int32Array.from(d.funcs.file, (x) => x - 1),
			funcKind: Uint8Array.from(d.funcs.kind, (k) => k & 7),
			funcInlined: Uint8Array.from(d.funcs.kind, (k) => k >> 3),
			frameFunc: Int32Array.from(d.frames.func),
			frameLine: Int32Array.from(d.frames.line),
			nstacks: d.stacks.frame.length,
		};
		const n = p.nstacks;

		p.stackParent = new Int32Array(n);
		p.stackFunc = new Int32Array(n);
		p.stackLine = new Int32Array(n);
		// stacks come depth first: a parent is UP calls above the stack before
		const chain = [-1];

		for (let i = 0; i < n; i++) {
			const up = d.stacks.up[i], fr = d.stacks.frame[i];

			if (up >= chain.length)
				throw new Error("stack " + i + " has no parent " + up + " calls up");
			chain.length -= up;
			p.stackParent[i] = chain[chain.length - 1];
			chain.push(i);
			p.stackFunc[i] = p.frameFunc[fr];
			p.stackLine[i] = p.frameLine[fr];
		}
		p.processes = d.processes.pid.map((pid, i) => ({
			index: i, pid: pid, name: d.strings[d.processes.name[i]], threads: [],
		}));
		p.threads = d.threads.tid.map((tid, i) => ({
			index: i, tid: tid, name: d.strings[d.threads.name[i]],
			process: p.processes[d.threads.process[i]], track: null,
		}));
		for (const th of p.threads)
			th.process.threads.push(th);
		const wall = d.weights.indexOf("wall") >= 0;

		p.tracks = d.tracks.map((tr) => decodeTrack(tr, d.unit_ns, d.start_ns, wall));
		p.end = 0;
		for (const tr of p.tracks) {
			p.threads[tr.thread].track = tr;
			if (tr.t.length)
				p.end = Math.max(p.end, tr.t[tr.t.length - 1]);
			for (let i = 0; i < tr.ot.length; i++)
				p.end = Math.max(p.end, tr.ot[i] + tr.od[i]);
		}
		if (d.facts.duration_ns)
			p.end = Math.max(p.end, d.facts.duration_ns);
		buildTree(p);
		return p;
	}

	// The call tree of functions: every stack placed, its node kept.
	function buildTree(p) {
		const t = new Tree(p.nfuncs);

		p.stackNode = new Int32Array(p.nstacks);
		for (let s = 0; s < p.nstacks; s++) {
			const parent = p.stackParent[s] < 0 ? 0 : p.stackNode[p.stackParent[s]];

			p.stackNode[s] = t.child(parent, p.stackFunc[s]);
		}
		p.tree = t;
		p.outer = outerNodes(t);
		p.callers = null;
	}

	// The callers tree of every stack that is some event's leaf: the node of
	// each such stack's whole path, from its leaf out.
	function callersTree(p) {
		if (p.callers)
			return p.callers;
		const t = new Tree(p.nfuncs), leaf = new Int32Array(p.nstacks).fill(-1);

		for (const tr of p.tracks) {
			for (const a of [tr.s, tr.os]) {
				for (let i = 0; i < a.length; i++) {
					const s0 = a[i];

					if (leaf[s0] >= 0)
						continue;
					let node = 0;

					for (let s = s0; s >= 0; s = p.stackParent[s])
						node = t.child(node, p.stackFunc[s]);
					leaf[s0] = node;
				}
			}
		}
		p.callers = { tree: t, leaf: leaf, outer: outerNodes(t) };
		return p.callers;
	}

	// The first index of sorted times T at or after FROM seconds; the
	// comparison is --time's, (ns since time 0) / 1e9 as a double.
	function lowerBound(t, from) {
		let lo = 0, hi = t.length;

		while (lo < hi) {
			const mid = (lo + hi) >> 1;

			if (t[mid] / 1e9 < from)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo;
	}

	// The first index after TO seconds.
	function upperBound(t, to) {
		let lo = 0, hi = t.length;

		while (lo < hi) {
			const mid = (lo + hi) >> 1;

			if (t[mid] / 1e9 <= to)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo;
	}

	// Whether each stack has, on its path, a function FLAGS marks.
	function stacksThrough(p, flags) {
		const has = new Uint8Array(p.nstacks);

		for (let s = 0; s < p.nstacks; s++) {
			const parent = p.stackParent[s];

			has[s] = flags[p.stackFunc[s]] || (parent >= 0 && has[parent]) ? 1 : 0;
		}
		return has;
	}

	// The functions whose name matches RE, as flags.
	function matchFuncs(p, re) {
		const flags = new Uint8Array(p.nfuncs);

		for (let f = 0; f < p.nfuncs; f++)
			flags[f] = re.test(p.funcNames[f]) ? 1 : 0;
		return flags;
	}

	// The stacks the transforms keep: through every focused function and
	// through none excluded (--focus and --exclude, a function at a time).
	function keptStacks(p, transforms) {
		let keep = null;

		for (const tf of transforms) {
			const flags = new Uint8Array(p.nfuncs);

			for (const f of tf.funcs)
				flags[f] = 1;
			const has = stacksThrough(p, flags);

			if (!keep)
				keep = new Uint8Array(p.nstacks).fill(1);
			for (let s = 0; s < p.nstacks; s++)
				if ((tf.type === "focus") !== (has[s] === 1))
					keep[s] = 0;
		}
		return keep;
	}

	// The weight of each stack in selection SEL: {weight, range: [from, to]
	// in s or null, threads: a Set of thread indices or null, keep: the
	// stacks kept or null}.  Also the events counted and their weight.
	function weigh(p, sel) {
		const w = new Float64Array(p.nstacks);
		const cpu = sel.weight !== "off-cpu", off = sel.weight !== "cpu";
		const wall = sel.weight === "wall";
		const from = sel.range ? sel.range[0] : -Infinity, to = sel.range ? sel.range[1] : Infinity;
		let events = 0, total = 0;

		for (const tr of p.tracks) {
			if (sel.threads && !sel.threads.has(tr.thread))
				continue;
			if (cpu) {
				const end = upperBound(tr.t, to);

				for (let i = lowerBound(tr.t, from); i < end; i++) {
					const s = tr.s[i], v = wall ? tr.p[i] : 1;

					if (v === 0 || (sel.keep && !sel.keep[s]))
						continue;
					w[s] += v;
					events++;
					total += v;
				}
			}
			if (off) {
				const end = upperBound(tr.ot, to);

				for (let i = lowerBound(tr.ot, from); i < end; i++) {
					const s = tr.os[i], v = tr.od[i];

					if (v === 0 || (sel.keep && !sel.keep[s]))
						continue;
					w[s] += v;
					events++;
					total += v;
				}
			}
		}
		return { stack: w, events: events, total: total };
	}

	// Sum stack weights W up tree T whose node of stack s is NODE_OF(s):
	// self and total of each node, self and total of each function.
	function sumTree(p, t, outer, w, nodeOf) {
		const self = new Float64Array(t.n), total = new Float64Array(t.n);
		const fself = new Float64Array(p.nfuncs), ftotal = new Float64Array(p.nfuncs);

		for (let s = 0; s < w.length; s++)
			if (w[s])
				self[nodeOf(s)] += w[s];
		for (let i = t.n - 1; i > 0; i--) {
			total[i] += self[i];
			total[t.parent[i]] += total[i];
			fself[t.func[i]] += self[i];
			if (outer[i])
				ftotal[t.func[i]] += total[i];
		}
		return { tree: t, self: self, total: total, funcSelf: fself, funcTotal: ftotal };
	}

	// The call tree of the weights W of each stack.
	function aggregate(p, w) {
		return sumTree(p, p.tree, p.outer, w, (s) => p.stackNode[s]);
	}

	// The callers tree (bottom-up) of the same weights: roots are the
	// functions that ran, their children the callers.  A node's self is
	// only that of whole paths: its total is what counts.
	function aggregateCallers(p, w) {
		const c = callersTree(p);
		const agg = sumTree(p, c.tree, c.outer, w, (s) => c.leaf[s]);

		// a function's self is where it is the leaf: the roots' totals
		agg.funcSelf.fill(0);
		for (const r of sortedChildren(p, c.tree)[0])
			agg.funcSelf[c.tree.func[r]] += agg.total[r];
		return agg;
	}

	// The sandwich of function F: the callers tree of the paths from the
	// root to F (outermost F), F its root, and the call tree from F to the
	// leaves.  Each stack through F counts once in both.
	function sandwich(p, w, f) {
		const callers = new Tree(p.nfuncs), callees = new Tree(p.nfuncs);
		const flags = new Uint8Array(p.nfuncs);
		const cw = [], ew = [];
		const path = [];

		flags[f] = 1;
		const has = stacksThrough(p, flags);

		for (let s = 0; s < p.nstacks; s++) {
			if (!w[s] || !has[s])
				continue;
			path.length = 0;
			for (let a = s; a >= 0; a = p.stackParent[a])
				path.push(p.stackFunc[a]);
			// path is leaf first: the outermost F is the last
			const at = path.lastIndexOf(f);
			let node = 0;

			for (let k = at; k < path.length; k++)
				node = callers.child(node, path[k]);
			cw.push(node, w[s]);
			node = 0;
			for (let k = at; k >= 0; k--)
				node = callees.child(node, path[k]);
			ew.push(node, w[s]);
		}
		const sum = (t, pairs) => {
			const self = new Float64Array(t.n), total = new Float64Array(t.n);

			for (let i = 0; i < pairs.length; i += 2)
				self[pairs[i]] += pairs[i + 1];
			for (let i = t.n - 1; i > 0; i--) {
				total[i] += self[i];
				total[t.parent[i]] += total[i];
			}
			return { tree: t, self: self, total: total };
		};
		return { callers: sum(callers, cw), callees: sum(callees, ew) };
	}

	// The weight under node N of AGG (whose children, by KIDS, are listed)
	// whose stacks go through a function FLAGS marks, N and those above
	// it included: the samples of N's subtree a search finds.
	function matchedUnder(agg, kids, flags, n) {
		const t = agg.tree;
		let sum = 0;

		for (let a = n; a > 0; a = t.parent[a])
			if (flags[t.func[a]])
				return agg.total[n];
		const todo = kids[n].slice();

		while (todo.length) {
			const k = todo.pop();

			if (!agg.total[k])
				continue;
			if (flags[t.func[k]]) {
				sum += agg.total[k];
				continue;
			}
			for (const c of kids[k])
				todo.push(c);
		}
		return sum;
	}

	// A search term as a regular expression: case matters only if it has a
	// capital letter, as in the svg.  Null for no term; throws if invalid.
	function searchRegExp(term) {
		if (term === null || term === "")
			return null;
		return new RegExp(term, term.toLowerCase() === term ? "i" : "");
	}

	return {
		KIND_USER, KIND_INLINED, KIND_KERNEL, KIND_ANON, KIND_OTHER,
		Tree, decode, weigh, aggregate, aggregateCallers, sandwich, keptStacks,
		matchFuncs, stacksThrough, matchedUnder, sortedChildren,
		searchRegExp, funcCmp, lowerBound, upperBound,
	};
})();

if (typeof module !== "undefined")
	module.exports = ProfModel;
