#!/usr/bin/env node
// Records expected/resolve.json from Pi 1.6: node record.mjs RECORDER_DIR (the folder `cargo xtask
// recorder` prints), from this folder (or from a folder laid out the same way: `cargo xtask
// differential --shape resolve`). The store (sessions/ and flat/) is copied into a temporary
// agent folder (PI_CODING_AGENT_DIR; HOME is /home/tester), each file's mtime set from mtimes.json,
// and each case of cases.json answered by Pi's own code: `SessionManager.continueRecent(cwd, dir)`
// for a case with "continue" (the file it opens, if it exists: else Pi starts a new session), and
// for a case with "session", main.js's `resolveSessionPath(arg, cwd, dir)` (not exported; its body
// is repeated below, calling Pi's `resolvePath`, `findById`, `list` and `listAll`). Where Pi throws,
// the error is recorded, and so is what it gives with the sessions whose id is not a string left
// out of the two listings (what `session-scan resolve` does). Paths are recorded relative to the
// agent folder.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const pkg = join(resolve(process.argv[2] ?? ""), "node_modules/pi16/dist");
const agent = mkdtempSync(join(tmpdir(), "pi-resolve-"));
const mtimes = Object.entries(JSON.parse(readFileSync("mtimes.json", "utf8")));
// A fresh copy for every case: opening a session (`pi -c`) rewrites a file of an older version or
// one without a final newline, and creates the cwd's folder.
function freshStore() {
	for (const part of ["sessions", "flat"]) {
		rmSync(join(agent, part), { recursive: true, force: true });
		if (existsSync(part)) cpSync(part, join(agent, part), { recursive: true });
	}
	for (const [rel, secs] of mtimes) utimesSync(join(agent, rel), secs, secs);
}
process.env.PI_CODING_AGENT_DIR = agent;
process.env.HOME = "/home/tester";
delete process.env.PI_CODING_AGENT_SESSION_DIR;
const { SessionManager } = await import(pathToFileURL(join(pkg, "core/session-manager.js")).href);
const { resolvePath } = await import(pathToFileURL(join(pkg, "utils/paths.js")).href);

async function resolveSessionPath(sessionArg, cwd, sessionDir, stringIdsOnly) {
	if (sessionArg.includes("/") || sessionArg.includes("\\") || sessionArg.endsWith(".jsonl")) {
		return { type: "path", path: resolvePath(sessionArg, cwd) };
	}
	const exact = SessionManager.findById(cwd, sessionArg, sessionDir);
	if (exact) return { type: "local", path: exact };
	const keep = (sessions) => (stringIdsOnly ? sessions.filter((s) => typeof s.id === "string") : sessions);
	const localSessions = keep(await SessionManager.list(cwd, sessionDir));
	const localMatch = localSessions.find((s) => s.id.startsWith(sessionArg));
	if (localMatch) return { type: "local", path: localMatch.path };
	const allSessions = keep(await SessionManager.listAll(sessionDir));
	const globalMatch = allSessions.find((s) => s.id === sessionArg) ?? allSessions.find((s) => s.id.startsWith(sessionArg));
	if (globalMatch) return { type: "global", path: globalMatch.path, cwd: globalMatch.cwd };
	return { type: "not_found" };
}

const rel = (r) => (r.path && r.path.startsWith(agent + "/") ? { ...r, path: relative(agent, r.path) } : r);
const cases = JSON.parse(readFileSync("cases.json", "utf8"));
const results = [];
for (const c of cases) {
	freshStore();
	const dir = c.dir === undefined ? undefined : join(agent, c.dir);
	if (c.continue) {
		const file = SessionManager.continueRecent(c.cwd, dir).getSessionFile();
		results.push(existsSync(file) ? rel({ type: "recent", path: file }) : { type: "new" });
		continue;
	}
	try {
		results.push(rel(await resolveSessionPath(c.session, c.cwd, dir, false)));
	} catch (e) {
		freshStore();
		const skipping = rel(await resolveSessionPath(c.session, c.cwd, dir, true));
		results.push({ throws: `${e.name}: ${e.message}`, skipping });
	}
}
mkdirSync("expected", { recursive: true });
writeFileSync("expected/resolve.json", `[\n${results.map((r) => JSON.stringify(r)).join(",\n")}\n]\n`);
rmSync(agent, { recursive: true, force: true });
