// What the corpora's recorders share: Pi 1.6's modules from the recorder's folder, a clock stopped
// at one instant (the time Pi gives new entries and files), and a folder's session files in order.
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/** A module of Pi 1.6's `dist/`, e.g. `core/session-manager.js`. */
export function piModule(rel) {
	return import(pathToFileURL(join(here, "node_modules/pi16/dist", rel)).href);
}

/** From now on `new Date()` and `Date.now()` give `iso`; dates built from values are as before. */
export function stopClockAt(iso) {
	settableClock(iso);
}

/** The `*.jsonl` files under `dir`, recursively, in name order. */
export function sessionFiles(dir) {
	const out = [];
	for (const name of readdirSync(dir).sort()) {
		const path = join(dir, name);
		if (statSync(path).isDirectory()) out.push(...sessionFiles(path));
		else if (name.endsWith(".jsonl")) out.push(path);
	}
	return out;
}

/** A clock the caller sets: `new Date()` and `Date.now()` give the last time set. */
export function settableClock(iso) {
	let now = Date.parse(iso);
	const RealDate = Date;
	globalThis.Date = class extends RealDate {
		constructor(...args) {
			if (args.length === 0) super(now);
			else super(...args);
		}
		static now() {
			return now;
		}
	};
	return (next) => {
		now = typeof next === "number" ? next : Date.parse(next);
	};
}

/**
 * `crypto.randomUUID()` made countable: the k-th call (from 1) gives `countedUuid(k)`, whose
 * first eight characters take one of 97 values, so that Pi's id collision checks are exercised.
 * `crypto.getRandomValues` gives a fixed byte sequence, so that session ids (UUIDv7) repeat from
 * run to run. Returns a function that starts the count again.
 */
export async function countedRandomness() {
	const { createRequire, syncBuiltinESMExports } = await import("node:module");
	const require = createRequire(import.meta.url);
	const crypto = require("node:crypto");
	let k = 0;
	crypto.randomUUID = () => countedUuid(++k);
	syncBuiltinESMExports();
	let byte = 0;
	globalThis.crypto.getRandomValues = (array) => {
		for (let i = 0; i < array.length; i++) array[i] = (byte = (byte * 73 + 41) & 0xff);
		return array;
	};
	return () => {
		k = 0;
	};
}

/** The k-th counted UUID. */
export function countedUuid(k) {
	const short = ((Math.imul(k, 2654435761) >>> 0) % 97).toString(16).padStart(8, "0");
	return `${short}-0000-4000-8000-${k.toString(16).padStart(12, "0")}`;
}
