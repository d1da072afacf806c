// Times Pi 1.6's own SessionManager on a sessions root, in one Node process:
//   node time-pi.mjs PACKAGE_DIR ROOT list|context|search [QUERY]
// list:    SessionManager.listAll() over ROOT (laid out as ROOT/--<cwd>--/*.jsonl);
// context: SessionManager.open(file) + buildSessionContext() for every file;
// search:  listAll(), then the picker's filterAndSortSessions(sessions, QUERY, "threaded").
// Prints {"ms": <best of 3>, "count": <sessions, messages or sessions found>} (search adds
// "filterMs", the filter alone). Files are opened on a copy because open() may rewrite them.
import { cpSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkg, root, mode, query] = process.argv.slice(2);
const agent = mkdtempSync(join(tmpdir(), "pi-agent-"));
let copy;
let sessions = root;
if (mode === "context") {
	copy = mkdtempSync(join(tmpdir(), "pi-copy-"));
	cpSync(root, copy, { recursive: true });
	sessions = copy;
}
symlinkSync(sessions, join(agent, "sessions"), "dir");
process.env.PI_CODING_AGENT_DIR = agent;
const { SessionManager } = await import(pathToFileURL(join(pkg, "dist/core/session-manager.js")).href);
const { filterAndSortSessions } = await import(
	pathToFileURL(join(pkg, "dist/modes/interactive/components/session-selector-search.js")).href
);
const files = [];
for (const d of readdirSync(sessions)) {
	try {
		for (const f of readdirSync(join(sessions, d))) if (f.endsWith(".jsonl")) files.push(join(sessions, d, f));
	} catch {}
}
let best = Infinity;
let bestFilter = Infinity;
let count = 0;
for (let rep = 0; rep < 3; rep++) {
	const t = process.hrtime.bigint();
	if (mode === "list") {
		count = (await SessionManager.listAll()).length;
	} else if (mode === "search") {
		const sessions = await SessionManager.listAll();
		const f = process.hrtime.bigint();
		count = filterAndSortSessions(sessions, query, "threaded").length;
		bestFilter = Math.min(bestFilter, Number(process.hrtime.bigint() - f) / 1e6);
	} else {
		count = 0;
		for (const f of files) count += SessionManager.open(f).buildSessionContext().messages.length;
	}
	best = Math.min(best, Number(process.hrtime.bigint() - t) / 1e6);
}
rmSync(agent, { recursive: true, force: true });
if (copy) rmSync(copy, { recursive: true, force: true });
console.log(JSON.stringify(mode === "search" ? { ms: best, count, filterMs: bestFilter } : { ms: best, count }));
