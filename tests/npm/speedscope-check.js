// SPDX-License-Identifier: MIT
// speedscope-check.js FILE - validate FILE against the file-format schema
// that the speedscope package ships (the one its importer is written to).
// Prints each violation and exits 1, or exits 0 in silence.
"use strict";
const fs = require("fs");
const Ajv = require("ajv");

const schema = require("speedscope/dist/release/file-format-schema.json");
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
const doc = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));

if (!validate(doc)) {
	for (const e of validate.errors)
		console.log(`${e.instancePath || "/"}: ${e.message}`);
	process.exit(1);
}
