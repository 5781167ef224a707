// SPDX-License-Identifier: MIT
// flamegraph-check.js SVG ACTION... - drive the script of a flame graph
// written by `prof report --format=svg` in a DOM (jsdom), as a user would
// with the mouse and keyboard, and print what is then on the screen.
// jsdom does not run the scripts of an SVG document by itself, so the
// script is taken from the file and run in the page, then init() as the
// SVG's onload does.  Actions:
//   hover:NAME     mouse over the first frame named NAME; prints "details TEXT"
//   click:NAME     click on the first frame named NAME (zoom)
//   search:TERM    click Search and answer TERM to its prompt; prints
//                  "matched TEXT", "button TEXT" and "details TEXT"
//   key:KEY        press KEY (with ctrl- for Control): ctrl-f, /, Escape
//   unzoom         click Reset Zoom
//   frames         print every frame shown: "DEPTH NAME X WIDTH [parent] [hit]"
"use strict";
const fs = require("fs");
const { JSDOM } = require("jsdom");

const text = fs.readFileSync(process.argv[2], "utf8");
const dom = new JSDOM(text, { contentType: "image/svg+xml", runScripts: "outside-only" });
const win = dom.window, doc = win.document;
const HIT = "rgb(230,0,230)";
let answer = null;

win.prompt = () => answer;
// a strict script's declarations stay inside eval(): hand init() out
win.eval(doc.getElementsByTagName("script")[0].textContent + "\nwindow.fgInit = init;");
win.fgInit();

function nameOf(g) {
	return g.getElementsByTagName("title")[0].textContent.split("\n")[0]
		.replace(/ \(([0-9,]+ samples?|[0-9.]+ ms), [0-9.]+%(; base [0-9.]+%, [-+][0-9.]+ points)?\)$/, "");
}

function frame(name) {
	for (const g of doc.getElementById("frames").getElementsByTagName("g"))
		if (nameOf(g) === name)
			return g;
	console.log(`no frame named ${name}`);
	process.exit(2);
}

function mouse(el, type) {
	el.dispatchEvent(new win.MouseEvent(type, { bubbles: true }));
}

for (const action of process.argv.slice(3)) {
	const colon = action.indexOf(":");
	const verb = colon < 0 ? action : action.slice(0, colon);
	const arg = colon < 0 ? "" : action.slice(colon + 1);

	if (verb === "hover") {
		mouse(frame(arg).getElementsByTagName("rect")[0], "mouseover");
		console.log(`details ${doc.getElementById("details").textContent}`);
	} else if (verb === "click") {
		mouse(frame(arg).getElementsByTagName("rect")[0], "click");
	} else if (verb === "search") {
		answer = arg;
		mouse(doc.getElementById("search"), "click");
		console.log(`matched ${doc.getElementById("matched").textContent}`);
		console.log(`button ${doc.getElementById("search").textContent}`);
		console.log(`details ${doc.getElementById("details").textContent}`);
	} else if (verb === "key") {
		const ctrl = arg.startsWith("ctrl-");
		win.dispatchEvent(new win.KeyboardEvent("keydown",
			{ key: ctrl ? arg.slice(5) : arg, ctrlKey: ctrl, bubbles: true }));
	} else if (verb === "unzoom") {
		mouse(doc.getElementById("unzoom"), "click");
	} else if (verb === "frames") {
		for (const g of doc.getElementById("frames").getElementsByTagName("g")) {
			if (g.style.display === "none")
				continue;
			const r = g.getElementsByTagName("rect")[0];
			console.log([g.getAttribute("data-d"), nameOf(g), r.getAttribute("x"),
				     r.getAttribute("width"),
				     g.getAttribute("class") === "parent" ? "parent" : "",
				     r.getAttribute("fill") === HIT ? "hit" : ""].join(" ").trim());
		}
	} else {
		console.log(`unknown action ${action}`);
		process.exit(2);
	}
}
