// SPDX-License-Identifier: MIT
// viewer-check.js PAGE ACTION... - open the page of `prof report
// --format=html` from file:// in the machine's chromium (headless, driven by
// playwright-core), do what each ACTION says through the page's
// window.profViewer (as the mouse and keyboard would) or with the mouse,
// and print what the page then shows, a line each.  The first line is
// "errors N": the console errors and uncaught exceptions of the page, each
// printed after it as "error TEXT"; a request the page tried to make
// (there must be none) is an error too.  CHROMIUM names the browser
// (default /usr/bin/chromium).  Actions:
//   totals              "totals WEIGHT TOTAL EVENTS ALL"
//   range:FROM,TO       brush FROM..TO s; "range-ms MS" (the re-aggregation)
//   drag:A,B            drag the mouse over the first thread's track from
//                       fraction A of its width to B; "range FROM TO"
//                       (every digit of the doubles chosen)
//   click-thread:TID    click the track of thread TID
//   thread:TID          focus on thread TID; process:PID on a process
//   weight:W            cpu, off-cpu or wall
//   search:TERM         "search MATCHED TOTAL SHARE ZOOMSHARE"
//   key-search:TERM     Ctrl-F, then type TERM; "search ..." as above
//   zoom:NAME           click the widest frame of NAME in the flame graph
//   flame-share:NAME    "flame-share NAME PCT": NAME's outermost frames'
//                       width as drawn, in percent of the graph's
//   tree, tree-inverted "tree TOTAL SELF DEPTH NAME\tMODULE" per node
//   functions           "func SELF TOTAL NAME\tMODULE" per function
//   show:VIEW           flame, tree or functions
//   inverted:on|off     the flame graph and tree inverted (callers)
//   sandwich:NAME       open NAME's callers and callees
//   transform:T:NAME    T focus or exclude; undo undoes the last choice
//   bar                 "bar TEXT": what the selection bar lists
//   timings             "timings DECODE RENDER FIRSTPAINT" (ms)
//   shot:FILE           a screenshot of the whole page
"use strict";
const path = require("path");
const { chromium } = require("playwright-core");

const page_path = path.resolve(process.argv[2]);
const actions = process.argv.slice(3);

function fmt(x) {
	return typeof x === "number" ? String(Math.round(x * 1e4) / 1e4) : String(x);
}

async function main() {
	const browser = await chromium.launch({
		executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
		args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
	});
	const errors = [];
	const out = [];
	try {
		const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
		const page = await context.newPage();

		page.on("console", (m) => {
			if (m.type() === "error")
				errors.push(m.text());
		});
		page.on("pageerror", (e) => errors.push(String(e)));
		page.on("request", (r) => {
			if (!r.url().startsWith("file://") && !r.url().startsWith("data:"))
				errors.push("request " + r.url());
		});
		await page.goto("file://" + page_path);
		await page.waitForFunction(() => window.profViewer && window.profViewer.ready, null, { timeout: 30000 });
		for (const action of actions) {
			const colon = action.indexOf(":");
			const verb = colon < 0 ? action : action.slice(0, colon);
			const arg = colon < 0 ? "" : action.slice(colon + 1);

			if (verb === "totals") {
				const t = await page.evaluate(() => window.profViewer.totals());
				out.push(["totals", t.weight, fmt(t.total), t.events, fmt(t.all)].join(" "));
			} else if (verb === "range") {
				const [a, b] = arg.split(",").map(Number);
				const ms = await page.evaluate(([x, y]) => window.profViewer.setRange(x, y), [a, b]);
				const u = await page.evaluate(() => window.profViewer.timings.update);
				out.push("range-ms " + fmt(ms) + " " + ["aggregate", "view", "timeline"].map((k) => k + " " + fmt(u[k])).join(" "));
			} else if (verb === "drag") {
				const [a, b] = arg.split(",").map(Number);
				const box = await page.locator(".tl-row.thread canvas").first().boundingBox();
				const y = box.y + box.height / 2;
				await page.mouse.move(box.x + a * box.width, y);
				await page.mouse.down();
				await page.mouse.move(box.x + (a + b) / 2 * box.width, y, { steps: 4 });
				await page.mouse.move(box.x + b * box.width, y, { steps: 4 });
				await page.mouse.up();
				const r = await page.evaluate(() => window.profViewer.range());
				// all the digits: --time must get the same doubles
				out.push("range " + (r ? r.map(String).join(" ") : "none"));
			} else if (verb === "click-thread") {
				const rows = page.locator(".tl-row.thread");
				const n = await rows.count();
				let done = false;
				for (let i = 0; i < n && !done; i++) {
					const title = await rows.nth(i).getAttribute("title");
					if (title.endsWith("(tid " + arg + ")")) {
						await rows.nth(i).locator("canvas").click();
						done = true;
					}
				}
				out.push("clicked " + done);
			} else if (verb === "thread") {
				out.push("thread " + await page.evaluate((t) => window.profViewer.focusThread(t), Number(arg)));
			} else if (verb === "process") {
				out.push("process " + await page.evaluate((t) => window.profViewer.focusProcess(t), Number(arg)));
			} else if (verb === "weight") {
				await page.evaluate((w) => window.profViewer.setWeight(w), arg);
			} else if (verb === "search" || verb === "key-search") {
				let m;
				if (verb === "search") {
					m = await page.evaluate((t) => window.profViewer.search(t), arg);
				} else {
					await page.keyboard.press("Control+f");
					await page.keyboard.type(arg);
					m = await page.evaluate((t) => window.profViewer.search(t), arg);
					const focused = await page.evaluate(() => document.activeElement.id);
					out.push("focused " + focused);
				}
				out.push(m ? ["search", fmt(m.matched), fmt(m.total), fmt(m.share), fmt(m.zoomShare)].join(" ")
					 : "search none");
			} else if (verb === "zoom") {
				out.push("zoom " + await page.evaluate((n) => window.profViewer.zoom(n), arg));
			} else if (verb === "flame-share") {
				const v = await page.evaluate((n) => window.profViewer.flameShare(n), arg);
				out.push("flame-share " + arg + " " + fmt(v));
			} else if (verb === "tree" || verb === "tree-inverted") {
				const lines = await page.evaluate((inv) => window.profViewer.treeLines(inv), verb !== "tree");
				for (const l of lines)
					out.push([verb, l.total.toFixed(2), l.self === null ? "-" : l.self.toFixed(2), l.depth,
						  l.name + "\t" + l.module].join(" "));
			} else if (verb === "functions") {
				const fs = await page.evaluate(() => window.profViewer.functions());
				for (const f of fs)
					out.push(["func", fmt(f.self), fmt(f.total), f.name + (f.inlined ? " [inlined]" : "") + "\t" + f.module].join(" "));
			} else if (verb === "show") {
				await page.evaluate((v) => window.profViewer.show(v), arg);
			} else if (verb === "inverted") {
				await page.evaluate((v) => window.profViewer.setInverted(v), arg === "on");
			} else if (verb === "sandwich") {
				out.push("sandwich " + await page.evaluate((n) => window.profViewer.sandwich(n), arg));
			} else if (verb === "transform") {
				const [type, ...name] = arg.split(":");
				out.push("transform " + await page.evaluate(([t, n]) => window.profViewer.transform(t, n), [type, name.join(":")]));
			} else if (verb === "undo") {
				await page.evaluate(() => window.profViewer.undo());
			} else if (verb === "bar") {
				out.push("bar " + await page.evaluate(() => window.profViewer.barText()));
			} else if (verb === "timings") {
				const t = await page.evaluate(() => window.profViewer.timings);
				out.push(["timings", fmt(t.decode), fmt(t.render), fmt(t.firstPaint)].join(" "));
			} else if (verb === "shot") {
				await page.waitForTimeout(50);
				await page.screenshot({ path: arg, fullPage: true });
			} else {
				throw new Error("unknown action " + action);
			}
		}
	} finally {
		await browser.close();
	}
	console.log("errors " + errors.length);
	for (const e of errors)
		console.log("error " + e.replace(/\n/g, " "));
	for (const l of out)
		console.log(l);
}

main().catch((e) => {
	console.log("failed " + String(e.stack || e).replace(/\n/g, " "));
	process.exit(2);
});
