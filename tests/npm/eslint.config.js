// SPDX-License-Identifier: MIT
// eslint.config.js - the rules the html viewer's script (lib/report/
// viewer_model.js, viewer.js) is held to by tests/cli/26-report-html.bats:
// eslint's recommended set, and what keeps a script that runs in every
// current browser from file:// plain: strict mode, no var, ===, no eval,
// no global but the page's own and ProfModel (viewer_model.js's).
"use strict";
const js = require("@eslint/js");

const browser = Object.fromEntries(["window", "document", "performance", "requestAnimationFrame",
	"setTimeout", "clearTimeout", "Node", "console", "atob", "Blob", "Response", "DecompressionStream"].map((g) => [g, "readonly"]));

module.exports = [
	js.configs.recommended,
	{
		files: ["**/*.js"],
		languageOptions: {
			ecmaVersion: 2020,
			sourceType: "script",
			globals: Object.assign({ module: "readonly" }, browser),
		},
		rules: {
			"strict": ["error", "global"],
			"no-var": "error",
			"prefer-const": "error",
			"eqeqeq": "error",
			"no-eval": "error",
			"no-implied-eval": "error",
			"no-new-func": "error",
			"no-shadow": "error",
			"no-unused-vars": ["error", { args: "none" }],
			"no-use-before-define": ["error", { functions: false, classes: false, variables: false }],
			"no-implicit-globals": "error",
			"no-restricted-globals": ["error", "fetch", "XMLHttpRequest", "WebSocket", "EventSource", "importScripts"],
		},
	},
	{
		// viewer.js comes after viewer_model.js in the page
		files: ["**/viewer.js"],
		languageOptions: { globals: { ProfModel: "readonly" } },
	},
];
