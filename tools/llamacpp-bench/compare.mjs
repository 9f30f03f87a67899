#!/usr/bin/env node
// Reads the JSON lines bench.sh collected (bench.mjs for llama.cpp, `churon
// bench --json` for churon, each tagged with "engine" and "round") and
// prints one table with the ratios churon ÷ llama.cpp, one row per model,
// thread count and KV depth, or one JSON object with --json.
//
//   node compare.mjs RUNS.jsonl [--json]

import { readFileSync } from "node:fs";
import { basename } from "node:path";

const args = process.argv.slice(2);
const asJSON = args.includes("--json");
const files = args.filter((a) => a !== "--json");
if (files.length !== 1) {
    console.error("usage: compare.mjs RUNS.jsonl [--json]");
    process.exit(2);
}

const rows = [];
for (const [i, line] of readFileSync(files[0], "utf8").split("\n").entries()) {
    if (line.trim() === "") continue;
    try {
        rows.push(JSON.parse(line));
    } catch (err) {
        console.error(`compare.mjs: ${files[0]}:${i + 1}: ${err.message}`);
        process.exit(1);
    }
}

// Runs of r repetitions each, reported as mean and sample stddev: merge them
// into the mean and sample stddev of all repetitions together.
function pool(runs, mKey, sKey) {
    const ok = runs.filter((r) => r[mKey] > 0);
    if (ok.length === 0) return null;
    const n = ok.reduce((a, r) => a + r.reps, 0);
    const mean = ok.reduce((a, r) => a + r.reps * r[mKey], 0) / n;
    const ss = ok.reduce((a, r) => a + (r.reps - 1) * r[sKey] ** 2 + r.reps * (r[mKey] - mean) ** 2, 0);
    return { mean, std: n > 1 ? Math.sqrt(ss / (n - 1)) : 0, runs: ok.map((r) => r[mKey]), n };
}

const groups = new Map();
for (const r of rows) {
    // Lines from before depth existed have none: they ran on an empty cache.
    const depth = r.depth ?? 0;
    const key = `${r.model}\u0000${r.threads}\u0000${depth}`;
    if (!groups.has(key)) groups.set(key, { model: r.model, threads: r.threads, depth, "llama.cpp": [], churon: [] });
    const g = groups.get(key);
    if (!(r.engine in g)) {
        console.error(`compare.mjs: unknown engine ${r.engine}`);
        process.exit(1);
    }
    g[r.engine].push(r);
}

const out = [];
for (const g of groups.values()) {
    const L = g["llama.cpp"], C = g.churon;
    const np = (L[0] ?? C[0])?.n_prompt, ng = (L[0] ?? C[0])?.n_gen;
    const lpp = pool(L, "pp_tps", "pp_std"), ltg = pool(L, "tg_tps", "tg_std");
    const cpp = pool(C, "pp_tps", "pp_std"), ctg = pool(C, "tg_tps", "tg_std");
    // Bytes read per decoded token and the machine's read bandwidth come from
    // churon's report; the file is the same, so llama.cpp reads as much.
    const wb = C.find((r) => r.weights_bytes > 0)?.weights_bytes ?? 0;
    const bwRuns = C.filter((r) => r.read_gbps > 0).map((r) => r.read_gbps);
    const bw = bwRuns.length ? bwRuns.reduce((a, b) => a + b, 0) / bwRuns.length : 0;
    const pct = (tg) => (tg && wb && bw ? 100 * (wb * tg.mean / 1e9) / bw : null);
    const ratio = (c, l) => (c && l ? c.mean / l.mean : null);
    // How much of the machine other processes used during the runs (bench.sh).
    const busy = [...L, ...C].map((r) => r.foreign_cpu_pct).filter((x) => typeof x === "number");
    out.push({
        model: basename(g.model), path: g.model, threads: g.threads, depth: g.depth, n_prompt: np, n_gen: ng,
        rounds: Math.max(L.length, C.length),
        llama_cpp: { pp: lpp, tg: ltg, bw_pct: pct(ltg) },
        churon: { pp: cpp, tg: ctg, bw_pct: pct(ctg) },
        pp_ratio: ratio(cpp, lpp), tg_ratio: ratio(ctg, ltg),
        weights_bytes: wb, read_gbps: bw,
        others_cpu_pct: busy.length ? { mean: busy.reduce((a, b) => a + b, 0) / busy.length, max: Math.max(...busy) } : null,
        llama_cpp_version: L[0]?.llama_cpp ?? null, cpu_variant: L[0]?.cpu_variant ?? null,
        churon_backend: C[0]?.backend?.replace(/ \(\d+ threads?\)$/, "") ?? null,
    });
}

if (asJSON) {
    console.log(JSON.stringify({ results: out }, null, 1));
} else {
    const f = (x) => (x ? `${x.mean.toFixed(1)} ± ${x.std.toFixed(1)}` : "—");
    const r = (x) => (x == null ? "—" : `${x.toFixed(2)}×`);
    const p = (x) => (x == null ? "—" : `${x.toFixed(0)} %`);
    const np = out[0]?.n_prompt ?? "", ng = out[0]?.n_gen ?? "";
    // Columns for tests that did not run (-p 0 or -n 0 everywhere) are left out.
    const hasPP = out.some((o) => o.n_prompt > 0), hasTG = out.some((o) => o.n_gen > 0);
    const head = ["model", "t", "depth"], align = ["---", "---:", "---:"];
    if (hasPP) head.push(`pp${np} llama.cpp`, `pp${np} churon`, "pp ratio");
    if (hasTG) head.push(`tg${ng} llama.cpp`, `tg${ng} churon`, "tg ratio", "bw % llama.cpp", "bw % churon");
    head.push("others' CPU %");
    while (align.length < head.length) align.push("---:");
    console.log(`| ${head.join(" | ")} |`);
    console.log(`|${align.join("|")}|`);
    for (const o of out) {
        const cells = [o.model, o.threads, o.depth];
        if (hasPP) cells.push(f(o.llama_cpp.pp), f(o.churon.pp), r(o.pp_ratio));
        if (hasTG) cells.push(f(o.llama_cpp.tg), f(o.churon.tg), r(o.tg_ratio), p(o.llama_cpp.bw_pct), p(o.churon.bw_pct));
        cells.push(o.others_cpu_pct ? `${o.others_cpu_pct.mean.toFixed(0)} (max ${o.others_cpu_pct.max.toFixed(0)})` : "—");
        console.log(`| ${cells.join(" | ")} |`);
    }
    const v = out.find((o) => o.llama_cpp_version);
    if (v) console.log(`llama.cpp ${v.llama_cpp_version}, CPU variant ${v.cpu_variant}; churon backend ${v.churon_backend}; ratio = churon ÷ llama.cpp; ± = sample stddev over all repetitions of all rounds; ` +
        `depth = tokens already in the KV cache before each timed test; ` +
        `bw % = weights read per token × tg ÷ churon's measured read bandwidth at that thread count (the KV cache's reads, which grow with depth, not counted); ` +
        `others' CPU % = share of all CPUs used by other processes during the runs (mean, max)`);
}
