#!/usr/bin/env node
// Records expected/orders.json from Pi 1.6: node record.mjs RECORDER_DIR (the folder `cargo xtask
// recorder` prints), from this folder. The 500 names of names.json become session files of one
// store folder, all with the same content and the same mtime, so that `listAll()` orders them by
// its tie-break alone: the names by `localeCompare` in Node's default locale. Node takes that
// locale from LC_ALL, LC_MESSAGES or LANG when its process starts, so each LANG is listed by a
// child process started with it (LC_ALL and LC_MESSAGES unset).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

export const LANGS = ["en_US.UTF-8", "sv_SE.UTF-8", "de_DE.UTF-8", "ja_JP.UTF-8", "C.UTF-8"];
export const CONTENT =
	'{"type":"session","version":3,"id":"c0ffee00-0000-4000-8000-000000000000","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/proj"}\n' +
	'{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1767225601000}}\n';
export const MTIME_S = 1767225600;

const [recorder, child] = process.argv.slice(2);
if (child) {
	// In the child: list the store at `child` through a temporary agent folder.
	const { SessionManager } = await import(pathToFileURL(join(resolve(recorder), "node_modules/pi16/dist/core/session-manager.js")).href);
	const agent = mkdtempSync(join(tmpdir(), "pi-collation-agent-"));
	symlinkSync(child, join(agent, "sessions"), "dir");
	process.env.PI_CODING_AGENT_DIR = agent;
	const infos = await SessionManager.listAll();
	rmSync(agent, { recursive: true, force: true });
	process.stdout.write(JSON.stringify({ locale: new Intl.Collator().resolvedOptions().locale, names: infos.map((i) => basename(i.path)) }));
} else {
	const names = JSON.parse(readFileSync("names.json", "utf8"));
	const store = mkdtempSync(join(tmpdir(), "pi-collation-"));
	mkdirSync(join(store, "--home-u-proj--"));
	for (const name of names) {
		const path = join(store, "--home-u-proj--", name);
		writeFileSync(path, CONTENT);
		utimesSync(path, MTIME_S, MTIME_S);
	}
	const orders = {};
	for (const lang of LANGS) {
		const env = { ...process.env, LANG: lang };
		delete env.LC_ALL;
		delete env.LC_MESSAGES;
		const run = spawnSync(process.execPath, [process.argv[1], recorder, store], { env, encoding: "utf8" });
		if (run.status !== 0) throw new Error(run.stderr);
		orders[lang] = JSON.parse(run.stdout);
	}
	rmSync(store, { recursive: true, force: true });
	mkdirSync("expected", { recursive: true });
	writeFileSync("expected/orders.json", `${JSON.stringify(orders, null, 1)}\n`);
}
