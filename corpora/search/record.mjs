#!/usr/bin/env node
// Records expected/ from Pi 1.6's picker search: node record.mjs RECORDER_DIR [LIST_JSON OUT_JSON]
// (RECORDER_DIR the folder `cargo xtask recorder` prints), from this folder. The sessions are Pi's own listings of
// the corpora (their expected/list.json); for each query of queries.json, each sort mode and
// each name filter, it writes the sessions filterAndSortSessions keeps, in its order, and
// matchSession's score for each (as [position in the listing, score]). A session whose id is not
// a string can make Pi's search throw: such sessions are listed under "throws", and the order is
// the one Pi gives the others.
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [recorderDir, listJson, outJson] = process.argv.slice(2);
const recorder = resolve(recorderDir ?? "");
const search = await import(
	pathToFileURL(
		join(recorder, "node_modules/pi16/dist/modes/interactive/components/session-selector-search.js"),
	).href
);
const queries = JSON.parse(readFileSync("queries.json", "utf8"));

// Either the committed corpora, or one listing given as LIST_JSON and written to OUT_JSON.
const jobs = listJson
	? [[listJson, outJson]]
	: ["sample-16", "hostile"].map((c) => [`../${c}/expected/list.json`, `expected/${c}.json`]);
for (const [listPath, outPath] of jobs) {
	const listed = JSON.parse(readFileSync(listPath, "utf8"));
	const sessions = listed.map((s) => ({
		...s,
		created: new Date(s.created ?? NaN),
		modified: new Date(s.modified ?? NaN),
	}));
	const cases = [];
	for (const query of queries) {
		const parsed = search.parseSearchQuery(query);
		for (const sort of ["relevance", "recent"]) {
			for (const names of ["all", "named"]) {
				const matched = [];
				const throws = [];
				sessions.forEach((s, k) => {
					if (names === "named" && !search.hasSessionName(s)) return;
					try {
						const m = search.matchSession(s, parsed);
						if (m.matches) matched.push([k, m.score]);
					} catch (e) {
						throws.push(k);
					}
				});
				// The order Pi gives the sessions it does not throw on.
				const kept = sessions.filter((_, k) => !throws.includes(k));
				const order = search.filterAndSortSessions(kept, query, sort, names).map((s) => sessions.indexOf(s));
				const c = { query, sort, names, error: parsed.error ?? null, matched, throws, order };
				cases.push(c);
			}
		}
	}
	const paths = sessions.map((s) => s.path);
	const lines = cases.map((c) => JSON.stringify(c));
	writeFileSync(outPath, `{"paths":${JSON.stringify(paths)},"cases":[\n${lines.join(",\n")}\n]}\n`);
}
