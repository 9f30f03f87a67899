#!/usr/bin/env node
// Compares two engines' logits on one synthetic file, or two files' tensor
// types, for shapecheck.sh: is a `churon dev synth` shape one llama.cpp
// loads and computes as Churon does?
//
//   node shapecheck.mjs logits REF.json CHURON.bin [--min-cos 0.999]
//   node shapecheck.mjs types A.gguf B.gguf
//
// logits: REF.json is logits.mjs's output (full_logits_prompt), CHURON.bin
// `churon logits --all --out` (little-endian float32, one row of n_vocab per
// position). Every row must reach the cosine bar, and wherever llama.cpp's
// top two logits are more than 0.05 apart (random weights leave near ties)
// both must pick the same token — the rule of tools/archref. Exit 1 if not.
//
// types: every tensor of A must be in B with the same ggml type and shape
// (A: synth's file, B: llama-quantize's from synth's F16 file). Exit 1 if not.

import { readFileSync } from "node:fs";
import { loadBinding } from "./binding.mjs";

function die(msg) {
    console.error(`shapecheck.mjs: ${msg}`);
    process.exit(1);
}

function logits(refPath, binPath, minCos) {
    const ref = JSON.parse(readFileSync(refPath, "utf8"));
    const rows = ref.full_logits_prompt;
    if (!Array.isArray(rows) || rows.length === 0) die(`${refPath}: no full_logits_prompt`);
    const buf = readFileSync(binPath);
    const nVocab = ref.n_vocab;
    const got = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
    if (got.length !== rows.length * nVocab) {
        die(`${binPath}: ${got.length} floats, want ${rows.length} positions × ${nVocab}`);
    }
    const argmax = (a, off = 0) => {
        let best = 0;
        for (let i = 1; i < nVocab; i++) if (a[off + i] > a[off + best]) best = i;
        return best;
    };
    let worst = 1, fails = 0, checked = 0, agreed = 0, maxAbs = 0;
    rows.forEach((r, pos) => {
        const off = pos * nVocab;
        let dot = 0, na = 0, nb = 0;
        for (let i = 0; i < nVocab; i++) {
            const a = r[i], b = got[off + i];
            dot += a * b; na += a * a; nb += b * b;
            maxAbs = Math.max(maxAbs, Math.abs(a - b));
        }
        const cos = dot / Math.sqrt(na * nb);
        worst = Math.min(worst, cos);
        const top = argmax(r);
        let second = -Infinity;
        for (let i = 0; i < nVocab; i++) if (i !== top && r[i] > second) second = r[i];
        const clear = r[top] - second > 0.05;
        const mine = argmax(got, off);
        if (clear) {
            checked++;
            if (mine === top) agreed++;
        }
        const bad = !(cos >= minCos) || (clear && mine !== top);
        if (bad) fails++;
        console.log(`pos ${String(pos).padStart(3)}: cosine ${cos.toFixed(7)}, llama.cpp top ${top} (${r[top].toFixed(4)}, gap ${(r[top] - second).toFixed(4)}), churon top ${mine} (${got[off + mine].toFixed(4)})${bad ? "  FAIL" : ""}`);
    });
    console.log(`${rows.length} positions × ${nVocab}: worst cosine ${worst.toFixed(7)} (bar ${minCos}), ` +
        `same argmax at ${agreed} of ${checked} positions with a clear top, largest |difference| ${maxAbs.toExponential(2)}; ` +
        `llama.cpp ${ref.llama_cpp} (${ref.cpu_variant}), KV ${ref.kv_cache_type}`);
    if (fails > 0) die(`${fails} position(s) disagree`);
}

async function types(a, b) {
    const L = await loadBinding();
    const info = async (p) => {
        const fi = await L.mod.readGgufFileInfo(p, { readTensorInfo: true });
        return new Map(fi.fullTensorInfo.map((t) => [t.name, { type: t.ggmlType, shape: t.dimensions.map(Number).join("×") }]));
    };
    const [ta, tb] = [await info(a), await info(b)];
    let diff = 0;
    for (const [name, x] of ta) {
        const y = tb.get(name);
        if (!y) { console.log(`${name}: missing in ${b}`); diff++; continue; }
        if (x.type !== y.type || x.shape !== y.shape) {
            console.log(`${name}: ${x.shape} type ${x.type} here, ${y.shape} type ${y.type} there`);
            diff++;
        }
    }
    for (const name of tb.keys()) if (!ta.has(name)) { console.log(`${name}: only in ${b}`); diff++; }
    console.log(`${ta.size} tensors, ${diff} differ`);
    if (diff > 0) die("the tensor types differ");
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === "logits") {
    const i = rest.indexOf("--min-cos");
    const minCos = i >= 0 ? Number(rest.splice(i, 2)[1]) : 0.999;
    if (rest.length !== 2 || !(minCos > 0 && minCos <= 1)) die("usage: shapecheck.mjs logits REF.json CHURON.bin [--min-cos X]");
    logits(rest[0], rest[1], minCos);
} else if (mode === "types" && rest.length === 2) {
    types(rest[0], rest[1]).catch((err) => die(err?.message ?? err));
} else {
    die("usage: shapecheck.mjs logits REF.json CHURON.bin [--min-cos X] | types A.gguf B.gguf");
}
