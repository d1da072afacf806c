#!/usr/bin/env node
// Runs Pi 1.6's own session code over session files and prints what it gives, as the corpora's
// expected outputs hold it. Installed with its pinned packages by `cargo xtask reference`.
//
//   node record.mjs list ROOT [CWD]      SessionManager.listAll() over a store ROOT, or list(CWD)
//   node record.mjs list --flat-all DIR  SessionManager.listAll(DIR) of one flat folder
//   node record.mjs tree PATH...         getTree() of each file, one JSON line per file
//   node record.mjs stats PATH...        getSessionStats() and getUsageCostBreakdown()
//   node record.mjs context PATH...      header, leaf, name, buildSessionContext(), projection
//
// Folders are read for their *.jsonl files, recursively, in byte order. Each file is opened from a
// private copy, because opening a session may rewrite it; `rewritten` says whether it did.

import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "node_modules/pi16/dist");
const load = (rel) => import(pathToFileURL(join(dist, rel)).href);
const { SessionManager } = await load("core/session-manager.js");

/** What a caught error was, without the temporary paths it may name. */
function errorOf(err, renames) {
	let message = err !== null && typeof err === "object" && "message" in err ? String(err.message) : String(err);
	for (const [from, to] of renames) message = message.split(from).join(to);
	const out = { name: err !== null && typeof err === "object" && err.constructor ? err.constructor.name : typeof err, message };
	if (err !== null && typeof err === "object" && err.code !== undefined) out.code = err.code;
	return out;
}

const orNull = (v) => (v === undefined ? null : v);
const iso = (d) => (d instanceof Date ? (Number.isNaN(d.getTime()) ? null : d.toISOString()) : orNull(d));

function sessionFiles(args) {
	const files = [];
	const byBytes = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
	const walk = (dir) => {
		for (const name of readdirSync(dir).sort(byBytes)) {
			const path = join(dir, name);
			if (statSync(path).isDirectory()) walk(path);
			else if (name.endsWith(".jsonl")) files.push(path);
		}
	};
	for (const a of args) {
		if (existsSync(a) && statSync(a).isDirectory()) walk(a);
		else files.push(a);
	}
	return files;
}

/** Runs `read` on a private copy of each file and prints its record, with `rewritten`. */
function eachFile(args, read) {
	for (const file of sessionFiles(args)) {
		const tmp = mkdtempSync(join(tmpdir(), "pi-reference-"));
		const copy = join(tmp, file.split("/").pop());
		const original = resolve(file);
		if (existsSync(original)) copyFileSync(original, copy);
		const before = existsSync(copy) ? readFileSync(copy) : null;
		const renames = [[copy, file], [tmp, "<tmp>"], [original, file]];
		let rec;
		try {
			rec = read(file, copy, renames);
		} catch (err) {
			rec = { file, error: { stage: "unknown", ...errorOf(err, renames) } };
		}
		const after = existsSync(copy) ? readFileSync(copy) : null;
		rec.rewritten = !(before === null ? after === null : after !== null && before.equals(after));
		rmSync(tmp, { recursive: true, force: true });
		process.stdout.write(`${JSON.stringify(rec)}\n`);
	}
}

/** Opens a copy as Pi does, or gives the record of its refusal. */
function open(file, copy, renames) {
	try {
		return { sm: SessionManager.open(copy) };
	} catch (err) {
		return { refused: { file, error: { stage: "open", ...errorOf(err, renames) } } };
	}
}

function tree(args) {
	eachFile(args, (file, copy, renames) => {
		const { sm, refused } = open(file, copy, renames);
		if (refused) return refused;
		const rec = { file };
		let roots;
		try {
			roots = sm.getTree();
		} catch (err) {
			rec.error = { stage: "getTree", ...errorOf(err, renames) };
			return rec;
		}
		// Depth first, in getTree()'s order; a node placed twice (duplicate ids) is listed twice.
		rec.roots = roots.map((n) => n.entry.id);
		const nodes = [];
		const todo = [...roots].reverse();
		while (todo.length > 0) {
			const n = todo.pop();
			const node = { id: n.entry.id, parentId: n.entry.parentId, type: n.entry.type, timestamp: n.entry.timestamp };
			if (n.label !== undefined) node.label = n.label;
			if (n.labelTimestamp !== undefined) node.labelTimestamp = n.labelTimestamp;
			node.children = n.children.map((c) => c.entry.id);
			nodes.push(node);
			if (nodes.length > 5_000_000) {
				rec.error = { stage: "serialize", name: "Error", message: "tree walk exceeded node limit (cyclic tree)" };
				return rec;
			}
			for (let i = n.children.length - 1; i >= 0; i--) todo.push(n.children[i]);
		}
		rec.nodes = nodes;
		return rec;
	});
}

/**
 * AgentSession's getSessionStats(), taken from its compiled source and bound to a stand-in that
 * has only what it reads: the agent module itself does not load on Node 20.
 */
async function sessionStats() {
	const totals = await load("core/usage-totals.js");
	const source = readFileSync(join(dist, "core/agent-session.js"), "utf8");
	const head = "\n    getSessionStats() {";
	const start = source.indexOf(head);
	if (start < 0 || source.indexOf(head, start + 1) >= 0) throw new Error("getSessionStats() is not found once in agent-session.js");
	const end = source.indexOf("\n    }\n", start + head.length);
	const body = source.slice(start + head.length, end);
	const method = new Function("createUsageTotals", "addUsageToTotals", `"use strict";\nreturn function getSessionStats() {${body}\n};`)(
		totals.createUsageTotals,
		totals.addUsageToTotals,
	);
	return {
		of(sm, file) {
			const self = {
				sessionManager: sm,
				sessionFile: file,
				sessionId: sm.getSessionId(),
				get state() {
					return { messages: sm.buildSessionContext().messages };
				},
				getContextUsage: () => undefined,
			};
			return method.call(self);
		},
		breakdown: totals.getUsageCostBreakdown,
	};
}

async function stats(args) {
	const acc = await sessionStats();
	eachFile(args, (file, copy, renames) => {
		const { sm, refused } = open(file, copy, renames);
		if (refused) return refused;
		const rec = { file, sessionId: orNull(sm.getSessionId()) };
		try {
			const { sessionFile: _f, sessionId: _i, contextUsage: _c, ...rest } = acc.of(sm, file);
			rec.stats = rest;
		} catch (err) {
			rec.error = { stage: "getSessionStats", ...errorOf(err, renames) };
			return rec;
		}
		try {
			rec.breakdown = acc.breakdown(sm.getEntries());
		} catch (err) {
			rec.error = { stage: "getUsageCostBreakdown", ...errorOf(err, renames) };
		}
		return rec;
	});
}

function context(args) {
	eachFile(args, (file, copy, renames) => {
		const { sm, refused } = open(file, copy, renames);
		if (refused) return refused;
		const rec = { file };
		const steps = [
			["header", () => orNull(sm.getHeader())],
			["leafId", () => orNull(sm.getLeafId())],
			["entryCount", () => sm.getEntries().length],
			["sessionName", () => orNull(sm.getSessionName())],
			["context", () => sm.buildSessionContext(), "buildSessionContext"],
			[
				"projection",
				() => sm.buildSessionProjection().entries.map((e) => ({ id: orNull(e.sourceEntry?.id), type: orNull(e.sourceEntry?.type), messages: e.messages.length })),
				"buildSessionProjection",
			],
			["branch", () => sm.getBranch().map((e) => e.id), "getBranch"],
		];
		for (const [key, step, stage] of steps) {
			try {
				rec[key] = step();
			} catch (err) {
				rec.error = { stage: stage ?? key, ...errorOf(err, renames) };
				break;
			}
		}
		return rec;
	});
}

/** The folder name Pi gives a cwd's sessions in its store. */
const cwdFolder = (cwd) => `--${resolve(cwd).replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;

async function list(args) {
	let infos;
	let shown = (p) => p;
	if (args[0] === "--flat-all") {
		infos = await SessionManager.listAll(args[1]);
	} else if (args.length === 2) {
		infos = await SessionManager.list(args[1], join(args[0], cwdFolder(args[1])));
	} else {
		// listAll() reads the agent folder's `sessions`: a temporary agent folder links it to ROOT.
		const agent = mkdtempSync(join(tmpdir(), "pi-reference-agent-"));
		const sessions = join(agent, "sessions");
		symlinkSync(resolve(args[0]), sessions, "dir");
		const before = process.env.PI_CODING_AGENT_DIR;
		process.env.PI_CODING_AGENT_DIR = agent;
		try {
			infos = await SessionManager.listAll();
		} finally {
			if (before === undefined) delete process.env.PI_CODING_AGENT_DIR;
			else process.env.PI_CODING_AGENT_DIR = before;
			rmSync(agent, { recursive: true, force: true });
		}
		shown = (p) => {
			const rel = relative(sessions, p);
			return rel.startsWith("..") ? p : join(args[0], rel);
		};
	}
	const out = infos.map((info) => {
		const row = {};
		for (const [k, v] of Object.entries(info)) row[k] = k === "created" || k === "modified" ? iso(v) : k === "path" ? shown(v) : v;
		return row;
	});
	process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
}

const [command, ...rest] = process.argv.slice(2);
const commands = { list, tree, stats, context };
if (!(command in commands) || rest.length === 0) {
	process.stderr.write("usage: node record.mjs list|tree|stats|context PATH...\n");
	process.exit(2);
}
await commands[command](rest);
