// zarrita side of zcube's Zarr v3 interop tests (node, ES module).
//
//   node zarrita_driver.mjs read  MANIFEST.json RESULTS.json
//   node zarrita_driver.mjs write MANIFEST.json RESULTS.json
//
// read: for each case {id, path, region} open the array at `path` with zarrita,
//   read it whole and read `region` (a list with, per dimension, null for all,
//   an integer index, or [start, stop, step]); write the raw bytes of both
//   results to `${path}.whole.bin` / `${path}.region.bin` and report dtype,
//   shape, element strides and fill value. The Python side compares.
// write: for each case {id, path, dtype, shape, chunk_shape, codecs, fill_value,
//   separator, key_encoding, writes: [{region, input, shape}]} create the array
//   with zarrita and write each region from the raw C-order little-endian
//   bytes in `input`. zarrita cannot write sharded arrays (set() refuses).
//
// Every case is independent: a failure is reported in RESULTS.json with the
// error text, the other cases still run. Exit status 0 unless the driver
// itself breaks.
import * as fs from "node:fs";
import FileSystemStore from "@zarrita/storage/fs";
import * as zarr from "zarrita";

const BIG = new Set(["int64", "uint64"]);

function ctorFor(dtype) {
	switch (dtype) {
		case "int8": return Int8Array;
		case "int16": return Int16Array;
		case "int32": return Int32Array;
		case "int64": return BigInt64Array;
		case "uint8": return Uint8Array;
		case "uint16": return Uint16Array;
		case "uint32": return Uint32Array;
		case "uint64": return BigUint64Array;
		case "float32": return Float32Array;
		case "float64": return Float64Array;
		case "bool": return zarr.BoolArray;
		default: throw new Error(`driver: no typed array for ${dtype}`);
	}
}

function selection(region) {
	if (region === null || region === undefined) return null;
	return region.map((r) =>
		r === null ? null : typeof r === "number" ? r : zarr.slice(r[0], r[1], r[2]),
	);
}

function jsonScalar(v) {
	if (typeof v === "bigint") return v.toString();
	if (typeof v === "number" && !Number.isFinite(v)) return String(v);
	if (Object.is(v, -0)) return "-0.0"; // JSON.stringify(-0) would give "0"
	return v;
}

function dump(result, file) {
	// A chunk {data, shape, stride}, or a scalar for 0-d selections.
	if (result === null || typeof result !== "object" || !("data" in result)) {
		return { scalar: jsonScalar(result) };
	}
	const d = result.data;
	fs.writeFileSync(file, new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
	return { file, shape: result.shape, stride: result.stride, length: d.length };
}

async function readCase(c) {
	const store = new FileSystemStore(c.path);
	const arr = await zarr.open(store, { kind: "array" });
	const out = {
		id: c.id,
		ok: true,
		dtype: arr.dtype,
		shape: arr.shape,
		chunks: arr.chunks,
		fill_value: jsonScalar(arr.fillValue),
	};
	out.whole = dump(await zarr.get(arr), `${c.path}.whole.bin`);
	if (c.region !== undefined) {
		out.region = dump(await zarr.get(arr, selection(c.region)), `${c.path}.region.bin`);
	}
	return out;
}

function fillFromJson(dtype, v) {
	if (v === null || v === undefined) return v;
	if (BIG.has(dtype)) return BigInt(v);
	if (v === "NaN") return NaN;
	if (v === "Infinity") return Infinity;
	if (v === "-Infinity") return -Infinity;
	return v;
}

async function writeCase(c) {
	const store = new FileSystemStore(c.path);
	const big = BIG.has(c.dtype) && c.fill_value !== null && c.fill_value !== undefined;
	await zarr.create(store, {
		shape: c.shape,
		chunkShape: c.chunk_shape,
		dtype: c.dtype,
		codecs: c.codecs,
		// zarrita.create cannot serialize a BigInt fill value: written below
		fillValue: big ? null : fillFromJson(c.dtype, c.fill_value),
		chunkSeparator: c.separator,
		dimensionNames: c.dimension_names,
		attributes: c.attributes,
	});
	if (c.key_encoding === "v2" || big) {
		// Patch the metadata zarrita wrote (codecs and key encoder are taken from
		// it when the array is reopened below): the "v2" chunk key encoding, which
		// zarrita.create cannot write, and 64-bit integer fill values as exact
		// JSON integers.
		const file = `${c.path}/zarr.json`;
		const meta = JSON.parse(fs.readFileSync(file, "utf8"));
		if (c.key_encoding === "v2") {
			meta.chunk_key_encoding = { name: "v2", configuration: { separator: c.separator } };
		}
		let text = JSON.stringify(meta, null, 2);
		if (big) {
			meta.fill_value = "@@FILL@@";
			text = JSON.stringify(meta, null, 2).replace('"@@FILL@@"', String(BigInt(c.fill_value)));
		}
		fs.writeFileSync(file, text);
	}
	const reopened = await zarr.open(new FileSystemStore(c.path), { kind: "array" });
	const Ctor = ctorFor(c.dtype);
	for (const w of c.writes) {
		if ("scalar" in w) {
			await zarr.set(reopened, selection(w.region), fillFromJson(c.dtype, w.scalar));
			continue;
		}
		const bytes = fs.readFileSync(w.input);
		const copy = new Uint8Array(bytes.byteLength);
		copy.set(bytes);
		const n = w.shape.reduce((a, b) => a * b, 1);
		const data = new Ctor(copy.buffer, 0, n);
		const stride = [];
		let s = 1;
		for (let i = w.shape.length - 1; i >= 0; i--) {
			stride[i] = s;
			s *= w.shape[i];
		}
		await zarr.set(reopened, selection(w.region), { data, shape: w.shape, stride });
	}
	return { id: c.id, ok: true };
}

async function main() {
	const [mode, manifestPath, resultsPath] = process.argv.slice(2);
	if (!["read", "write"].includes(mode) || !manifestPath || !resultsPath) {
		console.error("usage: node zarrita_driver.mjs read|write MANIFEST.json RESULTS.json");
		process.exit(2);
	}
	const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
	const results = [];
	for (const c of manifest.cases) {
		try {
			results.push(mode === "read" ? await readCase(c) : await writeCase(c));
		} catch (e) {
			const cause = e && e.cause ? ` (cause: ${e.cause})` : "";
			results.push({ id: c.id, ok: false, error: `${e && e.name}: ${e && e.message}${cause}` });
		}
	}
	fs.writeFileSync(resultsPath, JSON.stringify({ zarrita: manifest.zarrita, results }, null, 1));
}

await main();
