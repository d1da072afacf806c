#!/usr/bin/env node
// Records expected/threaded.json from Pi 1.6's picker: node record.mjs RECORDER_DIR (the folder
// `cargo xtask recorder` prints), from this folder. The store is copied to a temporary
// root, each file's mtime set to 1767225600 + 60 * k (k its place in name order, as the test sets
// them), listed by `listAll()` with the working folder at the root (the parent paths are relative
// to it), and threaded by the picker's own session list in its "threaded" mode without a query.
// Each row: the session's path under the root and its depth.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const pkg = join(resolve(process.argv[2] ?? ""), "node_modules/pi16/dist");
const root = mkdtempSync(join(tmpdir(), "pi-threads-"));
cpSync("sessions", root, { recursive: true });
const files = readdirSync(root)
	.flatMap((d) => readdirSync(join(root, d)).map((f) => `${d}/${f}`))
	.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
files.forEach((f, k) => utimesSync(join(root, f), 1767225600 + 60 * k, 1767225600 + 60 * k));
const agent = mkdtempSync(join(tmpdir(), "pi-agent-"));
symlinkSync(root, join(agent, "sessions"), "dir");
process.env.PI_CODING_AGENT_DIR = agent;
const here = process.cwd();
process.chdir(root);
const { SessionManager } = await import(pathToFileURL(join(pkg, "core/session-manager.js")).href);
const { SessionSelectorComponent } = await import(
	pathToFileURL(join(pkg, "modes/interactive/components/session-selector.js")).href
);
const sessions = await SessionManager.listAll();
const selector = new SessionSelectorComponent(
	async () => [],
	async () => [],
	() => {},
	() => {},
	() => {},
	() => {},
	{},
	undefined,
);
const SessionList = selector.sessionList.constructor;
const view = new SessionList(sessions, false, "threaded", "all", selector.keybindings);
const rows = view.filteredSessions.map((n) => [relative(join(agent, "sessions"), n.session.path), n.depth]);
process.chdir(here);
mkdirSync("expected", { recursive: true });
writeFileSync(
	"expected/threaded.json",
	`{"listed":${sessions.length},"rows":[\n${rows.map((r) => JSON.stringify(r)).join(",\n")}\n]}\n`,
);
rmSync(root, { recursive: true, force: true });
rmSync(agent, { recursive: true, force: true });
