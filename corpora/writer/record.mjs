#!/usr/bin/env node
// Records cases.jsonl, migrations.jsonl and cuts.jsonl from Pi 1.6: node record.mjs RECORDER_DIR
// [CASES], from this folder (CASES defaults to 160).
//
// cases.jsonl: random scripts of SessionManager operations (seeded, so the same scripts come
// back), each run by Pi 1.6's own SessionManager in an empty folder: every append type, branch,
// reset, branch with summary, labels, names, context edits, branched sessions, forks, new
// sessions with a parent, reopening and continuing. Each operation runs at a time of its own;
// randomUUID() and the random bytes of session ids are counted (recording.mjs), so the script
// gives the same ids on every run and in our replay. Recorded: the operations (values as JSON
// text), each one's result or error, the leaf and file after it (files it wrote get its time as
// their mtime), the session ids Pi drew in order, every file left in the folder (the folder
// written as <dir>), and how Pi loads each of them (record.mjs tree and context).
//
// migrations.jsonl: every version 1 or 2 session of the edge and hostile corpora, opened by Pi
// (which rewrites it whole), with the count of randomUUID() started again: the bytes Pi wrote, or
// why it failed.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const recorder = resolve(process.argv[2] ?? "");
const { piModule, sessionFiles, settableClock, countedRandomness } = await import(pathToFileURL(join(recorder, "recording.mjs")).href);
const setClock = settableClock("2026-03-01T10:00:00.000Z");
const restartUuids = await countedRandomness();
const { SessionManager } = await piModule("core/session-manager.js");

const CASES = Number(process.argv[3] ?? 160);
const CWD = "/work/project";
const OTHER_CWD = "/work/other";

/** mulberry32: a small seeded generator. */
function rng(seed) {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

const TEXTS = ["hi", "", "quotes \" and \\ backslash", "ünïcødé 名前 😀", "line\nbreak\r\n", "ctrl \u0001\u001f and \u2028\u2029", "  padded  "];
const NUMBERS = [0, 1, 0.1, 0.30000000000000004, 1e21, 5e-7, 123456789012, -2.5];

function message(r, now, counter) {
	const pick = (xs) => xs[Math.floor(r() * xs.length)];
	const text = () => pick(TEXTS);
	const kind = pick(["user", "user", "assistant", "assistant", "toolResult", "system", "bashExecution", "custom", "odd"]);
	switch (kind) {
		case "user":
			return { role: "user", content: r() < 0.5 ? text() : [{ type: "text", text: text() }, { type: "image", data: "aGVsbG8=", mimeType: "image/png" }], timestamp: now };
		case "assistant":
			return {
				role: "assistant",
				content: [
					{ type: "thinking", thinking: text() },
					{ type: "text", text: text() },
					{ type: "toolCall", id: `call_${counter}`, name: "bash", arguments: { command: "ls -la", n: pick(NUMBERS) } },
				],
				api: "anthropic-messages",
				provider: "anthropic",
				model: "claude-sonnet-4-5",
				usage: { input: 10, output: 5, cacheRead: pick(NUMBERS), cacheWrite: 0, totalTokens: 15, cost: { input: 0.1, output: 0.2, cacheRead: 0, cacheWrite: 0, total: 0.30000000000000004 } },
				stopReason: "toolUse",
				timestamp: now,
			};
		case "toolResult":
			return { role: "toolResult", toolCallId: `call_${counter}`, toolName: "bash", content: [{ type: "text", text: text() }], isError: r() < 0.3, timestamp: now };
		case "system": {
			const m = { role: "system", content: pick(["base prompt", "", [{ type: "text", text: "a" }, { type: "image", data: "x", mimeType: "image/png" }, { type: "text", text: "b" }], "more rules"]) };
			if (r() < 0.6) m.sections = pick([{ rules: "be brief", style: "plain" }, { style: null }, { rules: "be thorough", "2": "numbered" }]);
			if (r() < 0.6) m.toolsAdded = pick([[{ name: "read", description: "Read a file", parameters: { type: "object" } }], [{ name: "bash", description: "Run", parameters: {} }, { name: "read", description: "Read again", parameters: {} }]]);
			if (r() < 0.3) m.toolsRemoved = [{ name: pick(["read", "bash", "edit"]) }];
			if (r() < 0.9) m.timestamp = now;
			return m;
		}
		case "bashExecution":
			return { role: "bashExecution", command: "ls", output: text(), exitCode: 0, cancelled: false, truncated: false, timestamp: now };
		case "custom":
			return { role: "custom", customType: "ext", content: text(), display: r() < 0.5, timestamp: now };
		default:
			return { role: "user", z: 1, a: [1, { b: null }], content: text(), timestamp: now, "10": "ten", "2": "two" };
	}
}

/** The files under `dir`, by path relative to it. */
function filesOf(dir) {
	const out = {};
	const walk = (d) => {
		if (!existsSync(d)) return;
		for (const name of readdirSync(d).sort()) {
			const p = join(d, name);
			if (statSync(p).isDirectory()) walk(p);
			else out[relative(dir, p)] = readFileSync(p, "utf8").split(dir).join("<dir>");
		}
	};
	walk(dir);
	return out;
}

function runCase(seed) {
	const r = rng(seed);
	const pick = (xs) => xs[Math.floor(r() * xs.length)];
	const dir = mkdtempSync(join(tmpdir(), "pi-writer-"));
	const sessions = join(dir, "sessions");
	const shown = (v) => (typeof v === "string" ? v.split(dir).join("<dir>") : v);
	const ops = [];
	const sessionIds = [];
	let sm = null;
	let ids = [];
	let time = Date.parse("2026-03-01T10:00:00.000Z") + seed * 3_600_000;
	const steps = 10 + Math.floor(r() * 40);
	const known = () => Object.keys(filesOf(dir)).filter((f) => f.endsWith(".jsonl"));
	const target = () => (r() < 0.08 || ids.length === 0 ? "nope" : pick(ids));
	for (let step = 0; step < steps; step++) {
		time += 1000 + Math.floor(r() * 5000);
		setClock(time);
		const now = time;
		let op;
		if (sm === null || r() < 0.05) {
			const files = known();
			const choice = sm === null ? pick(["create", "create", "inMemory", "continueRecent"]) : pick(["create", "open", "continueRecent", "forkFrom", "inMemory"]);
			if (choice === "create") {
				op = { op: "create", options: r() < 0.3 ? { id: pick(["fixed-id", "bad id", `s${seed}.${step}`]) } : {} };
			} else if ((choice === "open" || choice === "forkFrom") && files.length > 0) {
				op = { op: choice, file: r() < 0.1 ? "sessions/missing.jsonl" : pick(files) };
			} else if (choice === "open" || choice === "forkFrom") {
				op = { op: "create", options: {} };
			} else {
				op = { op: choice };
			}
		} else {
			const k = r();
			if (k < 0.4) op = { op: "message", message: message(r, now, step) };
			else if (k < 0.44) op = { op: "thinking", level: pick(["off", "low", "high"]) };
			else if (k < 0.48) op = { op: "model", provider: pick(["anthropic", "openai"]), modelId: pick(["claude-sonnet-4-5", "gpt-5"]) };
			else if (k < 0.52) op = { op: "usage", kind: pick(["cache_warm", "title"]), provider: "anthropic", model: "claude-haiku", usage: { input: 3, output: 1, cost: { total: pick(NUMBERS) } }, note: pick([undefined, "", "warm"]) };
			else if (k < 0.57) op = { op: "compaction", summary: pick(TEXTS), firstKept: r() < 0.3 ? null : target(), tokensBefore: pick([1000, 0.5, 1e21]), details: r() < 0.3 ? { readFiles: ["a.ts"] } : undefined, fromHook: pick([undefined, true, false]), usage: r() < 0.3 ? { input: 5, output: 2 } : undefined };
			else if (k < 0.6) op = { op: "custom", customType: "ext-state", data: pick([undefined, null, { count: 3, list: [1, "two"] }]) };
			else if (k < 0.64) op = { op: "customMessage", customType: "ext-note", content: pick(["note", [{ type: "text", text: "block note" }]]), display: r() < 0.5, details: pick([undefined, { k: 1 }]) };
			else if (k < 0.68) op = { op: "sessionInfo", name: pick(TEXTS) };
			else if (k < 0.73) op = { op: "label", target: target(), label: pick(["bookmark", "", undefined, "✓ done"]) };
			else if (k < 0.79) op = { op: "contextEdit", target: target(), replacement: pick([null, { content: "edited" }, { content: [{ type: "text", text: "edited block" }] }, { content: 5 }, "bad", { content: "x", extra: true }]) };
			else if (k < 0.84) op = { op: "branch", target: target() };
			else if (k < 0.86) op = { op: "resetLeaf" };
			else if (k < 0.9) op = { op: "branchWithSummary", target: r() < 0.15 ? null : target(), summary: pick(TEXTS), details: pick([undefined, { files: [] }]), fromHook: pick([undefined, false]), usage: pick([undefined, { input: 1 }]) };
			else if (k < 0.94) op = { op: "createBranchedSession", target: r() < 0.4 ? undefined : target() };
			else if (k < 0.97) op = { op: "newSession", options: pick([{}, { parentSession: "/elsewhere/parent.jsonl" }, { id: `n${seed}x${step}` }]) };
			else {
				const files = known();
				op = files.length > 0 ? { op: "setSessionFile", file: pick(files) } : { op: "resetLeaf" };
			}
		}
		op.time = new Date(now).toISOString();
		const before = filesOf(dir);
		let result;
		try {
			const v = run(op);
			result = { ok: shown(v ?? null) };
		} catch (err) {
			result = { error: shown(String(err?.message ?? err)) };
		}
		// Files written by this operation get its time, so that "most recent" is the same in
		// the replay whatever the file system's clock granularity.
		for (const [f, text] of Object.entries(filesOf(dir))) {
			if (before[f] !== text) utimesSync(join(dir, f), now / 1000, now / 1000);
		}
		op.result = result;
		op.leaf = sm === null ? null : shown(sm.getLeafId() ?? null);
		op.sessionFile = sm === null ? null : shown(sm.getSessionFile() ?? null);
		ops.push(op);
	}
	const files = filesOf(dir);
	// How Pi loads each file left: its tree and its context (record.mjs, from the folder).
	const loaded = {};
	const names = Object.keys(files).filter((f) => f.endsWith(".jsonl"));
	if (sm !== null && names.length > 0) {
		for (const what of ["tree", "context"]) {
			const run = spawnSync("node", [join(recorder, "record.mjs"), what, ...names], { cwd: dir, encoding: "utf8", maxBuffer: 1 << 28 });
			loaded[what] = run.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l.split(dir).join("<dir>")));
		}
	}
	rmSync(dir, { recursive: true, force: true });
	return { seed, ops: ops.map(encode), sessionIds: drawn.splice(0), files, loaded };

	function run(op) {
		const path = (f) => join(dir, f);
		switch (op.op) {
			case "create":
				sm = SessionManager.create(CWD, sessions, op.options);
				ids = [];
				return sm.getSessionFile();
			case "inMemory":
				sm = SessionManager.inMemory(CWD);
				ids = [];
				return null;
			case "open":
				sm = SessionManager.open(path(op.file));
				ids = sm.getEntries().map((e) => e.id);
				return sm.getSessionFile();
			case "continueRecent":
				sm = SessionManager.continueRecent(CWD, sessions);
				ids = sm.getEntries().map((e) => e.id);
				return sm.getSessionFile();
			case "forkFrom":
				sm = SessionManager.forkFrom(path(op.file), OTHER_CWD, join(dir, "forks"));
				ids = sm.getEntries().map((e) => e.id);
				return sm.getSessionFile();
			case "setSessionFile":
				sm.setSessionFile(path(op.file));
				ids = sm.getEntries().map((e) => e.id);
				return sm.getSessionFile();
			case "newSession":
				ids = [];
				return sm.newSession(op.options) ?? null;
			case "message":
				return push(sm.appendMessage(op.message));
			case "thinking":
				return push(sm.appendThinkingLevelChange(op.level));
			case "model":
				return push(sm.appendModelChange(op.provider, op.modelId));
			case "usage":
				return push(sm.appendUsage(op.kind, op.provider, op.model, op.usage, op.note).id);
			case "compaction":
				return push(sm.appendCompaction(op.summary, op.firstKept ?? undefined, op.tokensBefore, op.details, op.fromHook, op.usage));
			case "custom":
				return push(sm.appendCustomEntry(op.customType, op.data));
			case "customMessage":
				return push(sm.appendCustomMessageEntry(op.customType, op.content, op.display, op.details));
			case "sessionInfo":
				return push(sm.appendSessionInfo(op.name));
			case "label":
				return push(sm.appendLabelChange(op.target, op.label));
			case "contextEdit":
				return push(sm.appendContextEdit(op.target, op.replacement));
			case "branch":
				sm.branch(op.target);
				return null;
			case "resetLeaf":
				sm.resetLeaf();
				return null;
			case "branchWithSummary":
				return push(sm.branchWithSummary(op.target, op.summary, op.details, op.fromHook, op.usage));
			case "createBranchedSession": {
				const file = sm.createBranchedSession(op.target);
				ids = sm.getEntries().map((e) => e.id);
				return file ?? null;
			}
		}
		throw new Error(`unknown op ${op.op}`);
	}
	function push(id) {
		ids.push(id);
		return id;
	}
}

/** Values as JSON text, so that the replay reads them with its own parser, keys in order. */
function encode(op) {
	const out = {};
	for (const [k, v] of Object.entries(op)) {
		if (["message", "usage", "details", "data", "content", "replacement", "options"].includes(k)) {
			out[k] = v === undefined ? undefined : JSON.stringify(v);
		} else {
			out[k] = v;
		}
	}
	if ("label" in op && op.label === undefined) out.label = null;
	if ("note" in op && op.note === undefined) out.note = null;
	if ("target" in op && op.target === undefined) out.target = null;
	if ("fromHook" in op && op.fromHook === undefined) out.fromHook = null;
	return out;
}

// Session ids as Pi draws them: uuidv7() reads the fixed random bytes; the ids are taken from
// the sessions made, in the order they were made.
const drawn = [];
{
	const proto = SessionManager.prototype;
	const newSession = proto.newSession;
	proto.newSession = function (options) {
		const file = newSession.call(this, options);
		if (options?.id === undefined) drawn.push(this.getSessionId());
		return file;
	};
	const branched = proto.createBranchedSession;
	proto.createBranchedSession = function (leafId) {
		const before = this.getSessionId();
		const file = branched.call(this, leafId);
		if (this.getSessionId() !== before) drawn.push(this.getSessionId());
		return file;
	};
	const forkFrom = SessionManager.forkFrom;
	SessionManager.forkFrom = function (source, cwd, dir, options) {
		const sm = forkFrom.call(this, source, cwd, dir, options);
		if (options?.id === undefined) drawn.push(sm.getSessionId());
		return sm;
	};
}

const lines = [];
for (let seed = 1; seed <= CASES; seed++) {
	restartUuids();
	lines.push(JSON.stringify(runCase(seed)));
}
writeFileSync("cases.jsonl", `${lines.join("\n")}\n`);

// Migrations.
const corpora = resolve("..");
const migrations = [];
for (const corpus of ["edge/sessions", "hostile/sessions", "sample-16/sessions"]) {
	for (const file of sessionFiles(join(corpora, corpus))) {
		const text = readFileSync(file, "utf8");
		const first = text.split("\n").find((l) => l.trim().startsWith("{"));
		let version = 3;
		try {
			const h = JSON.parse(first ?? "{}");
			version = h.type === "session" ? (h.version ?? 1) : 3;
		} catch {
			continue;
		}
		if (!(version < 3)) continue;
		const tmp = mkdtempSync(join(tmpdir(), "pi-migrate-"));
		const copy = join(tmp, "s.jsonl");
		copyFileSync(file, copy);
		restartUuids();
		const rec = { file: relative(corpora, file) };
		try {
			SessionManager.open(copy);
			rec.rewritten = readFileSync(copy, "utf8");
		} catch (err) {
			rec.error = String(err?.message ?? err).split(copy).join("<file>");
		}
		rmSync(tmp, { recursive: true, force: true });
		migrations.push(JSON.stringify(rec));
	}
}
writeFileSync("migrations.jsonl", `${migrations.join("\n")}\n`);

// Cuts: the case file with the most entry types (under 16 KiB) is cut at every byte offset and
// each prefix opened by Pi (`cut.jsonl` is the file; `cuts.jsonl` one line per run of offsets
// with the same outcome: the entries Pi loaded, its leaf, or its error).
{
	let best = null;
	for (const line of lines) {
		for (const text of Object.values(JSON.parse(line).files)) {
			const bytes = Buffer.byteLength(text);
			if (bytes > 16384) continue;
			const types = new Set(text.split("\n").filter(Boolean).map((l) => JSON.parse(l).type)).size;
			if (best === null || types > best.types || (types === best.types && bytes > best.bytes)) best = { text, types, bytes };
		}
	}
	const bytes = Buffer.from(best.text);
	writeFileSync("cut.jsonl", bytes);
	const tmp = mkdtempSync(join(tmpdir(), "pi-cut-"));
	const runs = [];
	for (let at = 0; at <= bytes.length; at++) {
		const copy = join(tmp, `${at}.jsonl`);
		writeFileSync(copy, bytes.subarray(0, at));
		let outcome;
		try {
			const sm = SessionManager.open(copy);
			outcome = { entries: sm.getEntries().length, leaf: sm.getLeafId() ?? null };
		} catch (err) {
			outcome = { error: String(err?.message ?? err).split(copy).join("<file>") };
		}
		rmSync(copy);
		const last = runs[runs.length - 1];
		if (last && JSON.stringify(last.outcome) === JSON.stringify(outcome)) last.to = at;
		else runs.push({ from: at, to: at, outcome });
	}
	rmSync(tmp, { recursive: true, force: true });
	writeFileSync("cuts.jsonl", `${runs.map((r) => JSON.stringify(r)).join("\n")}\n`);
}
