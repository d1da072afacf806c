#!/usr/bin/env node
// Records expected.jsonl from Pi 1.6: node record.mjs RECORDER_DIR (the folder `cargo xtask
// recorder` prints), from this folder. For every session file of sample-16, real, files, edge, escapes,
// hostile and adversarial, a copy is loaded with Pi's `loadEntriesFromFile` (which may append a
// newline, hence the copy) and `migrateSessionEntries`; every `message` entry whose message is an object goes through Pi's
// `extractFileOpsFromMessage` (its throws counted, the calls taken in before a throw kept), and
// the lists are Pi's `computeFileLists`. Paths are relative to corpora/. Files Pi does not load as
// sessions are left out.
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const pkg = join(resolve(process.argv[2] ?? ""), "node_modules/pi16/dist/core");
const { loadEntriesFromFile, migrateSessionEntries } = await import(pathToFileURL(join(pkg, "session-manager.js")));
const { createFileOps, extractFileOpsFromMessage, computeFileLists } = await import(
	pathToFileURL(join(pkg, "compaction/utils.js"))
);

function jsonlFiles(dir) {
	const out = [];
	for (const name of readdirSync(dir).sort()) {
		const path = join(dir, name);
		if (statSync(path).isDirectory()) out.push(...jsonlFiles(path));
		else if (name.endsWith(".jsonl")) out.push(path);
	}
	return out;
}

const corpora = resolve("..");
const parts = ["sample-16", "real", "files", "edge", "escapes", "hostile", "adversarial"].map((c) => `${c}/sessions`);
const scratch = mkdtempSync(join(tmpdir(), "pi-files-"));
const lines = [];
for (const part of parts) {
	for (const path of jsonlFiles(join(corpora, part))) {
		const copy = join(scratch, "s.jsonl");
		copyFileSync(path, copy);
		const entries = loadEntriesFromFile(copy);
		if (entries.length === 0) continue;
		migrateSessionEntries(entries);
		const ops = createFileOps();
		let throws = 0;
		for (const entry of entries) {
			if (entry?.type !== "message" || !entry.message || typeof entry.message !== "object") continue;
			try {
				extractFileOpsFromMessage(entry.message, ops);
			} catch {
				throws += 1;
			}
		}
		const { readFiles, modifiedFiles } = computeFileLists(ops);
		lines.push(JSON.stringify({ file: relative(corpora, path), readFiles, modifiedFiles, throws }));
	}
}
rmSync(scratch, { recursive: true, force: true });
writeFileSync("expected.jsonl", `${lines.join("\n")}\n`);
console.log(`${lines.length} sessions recorded`);
