#!/usr/bin/env node
// Reads the JSON lines bench.sh collected (bench.mjs or llamabench.mjs for
// llama.cpp, `churon bench --json` for churon, each tagged with "engine",
// "round" and, for llama.cpp, "reference") and prints one table with the
// ratios churon ÷ llama.cpp, one row per model, thread count, KV depth and
// batch (sequences decoded together, bench.sh --batch), or one JSON object
// with --json. Batched rows also say how each engine's aggregate compares
// with its own one-sequence figure in the same run.
//
//   node compare.mjs RUNS.jsonl [--reference prebuilt|native|avx2|best] [--json]
//
// With --reference best (or when the file holds several references and no
// --reference is given) each cell's reference is the faster of them, and
// the cell says which; with one named reference every row must have it.

import { readFileSync } from "node:fs";
import { basename } from "node:path";

const args = process.argv.slice(2);
const asJSON = args.includes("--json");
let mode = null;
const files = [];
for (let i = 0; i < args.length; i++) {
    if (args[i] === "--json") continue;
    if (args[i] === "--reference") { mode = args[++i]; continue; }
    files.push(args[i]);
}
if (files.length !== 1 || (mode != null && !["prebuilt", "native", "avx2", "best"].includes(mode))) {
    console.error("usage: compare.mjs RUNS.jsonl [--reference prebuilt|native|avx2|best] [--json]");
    process.exit(2);
}
const die = (msg) => {
    console.error(`compare.mjs: ${msg}`);
    process.exit(1);
};

const rows = [];
// bench.sh's first and last lines: the command, the machine, the load.
const meta = {};
for (const [i, line] of readFileSync(files[0], "utf8").split("\n").entries()) {
    if (line.trim() === "") continue;
    let r;
    try {
        r = JSON.parse(line);
    } catch (err) {
        die(`${files[0]}:${i + 1}: ${err.message}`);
    }
    if (r.meta) Object.assign(meta, r.meta);
    else rows.push(r);
}
// Lines from before references existed came from the prebuilt binaries.
for (const r of rows) if (r.engine === "llama.cpp") r.reference ??= "prebuilt";
const refsSeen = [...new Set(rows.filter((r) => r.engine === "llama.cpp").map((r) => r.reference))];
mode ??= meta.reference ?? (refsSeen.length > 1 ? "best" : refsSeen[0] ?? "prebuilt");

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
    // null: a run without --batch (llama-bench, or churon bench's default).
    const batch = r.api === "llama-batched-bench" || r.batch > 1 || meta.command?.includes("--batch") ? r.batch ?? 1 : null;
    const key = `${r.model}\u0000${r.threads}\u0000${depth}\u0000${batch}`;
    if (!groups.has(key)) groups.set(key, { model: r.model, threads: r.threads, depth, batch, "llama.cpp": [], churon: [] });
    const g = groups.get(key);
    if (!(r.engine in g)) die(`unknown engine ${r.engine}`);
    g[r.engine].push(r);
}

// The reference of one cell: the named one, or the faster of all there.
function reference(byRef, which) {
    const have = Object.entries(byRef).filter(([, v]) => v[which]);
    if (mode !== "best") {
        const v = byRef[mode]?.[which];
        return v ? { ref: mode, ...v } : null;
    }
    if (have.length === 0) return null;
    const [ref, v] = have.reduce((a, b) => (b[1][which].mean > a[1][which].mean ? b : a));
    return { ref, ...v[which] };
}

// The machine's read bandwidth at each thread count: the best that any of
// churon's probes measured in the whole run. Each churon run probes before
// its tests, and one probe swings by 1.5× on a shared host (40 to 60 GB/s
// at two threads within the hour here), so a per-cell mean made the same
// GB/s read as 53 % in one cell and 80 % in the next. The best is the
// nearest this run came to the ceiling the share is of.
const ceiling = new Map();
for (const r of rows) {
    if (r.engine === "churon" && r.read_gbps > 0) ceiling.set(r.threads, Math.max(ceiling.get(r.threads) ?? 0, r.read_gbps));
}

const out = [];
for (const g of groups.values()) {
    const L = g["llama.cpp"], C = g.churon;
    const np = (L[0] ?? C[0])?.n_prompt, ng = (L[0] ?? C[0])?.n_gen;
    const byRef = {};
    for (const ref of new Set(L.map((r) => r.reference))) {
        const runs = L.filter((r) => r.reference === ref);
        byRef[ref] = {
            pp: pool(runs, "pp_tps", "pp_std"), tg: pool(runs, "tg_tps", "tg_std"), rounds: runs.length,
            version: runs[0].llama_cpp ?? null, cpu_variant: runs[0].cpu_variant ?? null, api: runs[0].api ?? null,
        };
    }
    const want = mode === "best" ? ["prebuilt", "native"] : [mode];
    for (const ref of want) {
        if (!byRef[ref]) die(`${basename(g.model)} t=${g.threads} depth ${g.depth}: no ${ref} run of llama.cpp (the reference ${mode} needs it)`);
        if ((np > 0 && !byRef[ref].pp) || (ng > 0 && !byRef[ref].tg)) die(`${basename(g.model)} t=${g.threads} depth ${g.depth}: the ${ref} run has no result`);
    }
    const lpp = reference(byRef, "pp"), ltg = reference(byRef, "tg");
    const cpp = pool(C, "pp_tps", "pp_std"), ctg = pool(C, "tg_tps", "tg_std");
    // Bytes read per decoded token and the machine's read bandwidth come from
    // churon's report; the file is the same, so llama.cpp reads as much.
    const wb = C.find((r) => r.weights_bytes > 0)?.weights_bytes ?? 0;
    const bw = ceiling.get(g.threads) ?? 0;
    // A batch's sequences share each step's weight reads.
    const gbps = (tg) => (tg && wb ? (wb * tg.mean) / (g.batch ?? 1) / 1e9 : null);
    const pct = (tg) => (gbps(tg) && bw ? (100 * gbps(tg)) / bw : null);
    const ratio = (c, l) => (c && l ? c.mean / l.mean : null);
    // How much of the machine other processes used during the runs (bench.sh).
    const busy = [...L, ...C].map((r) => r.foreign_cpu_pct).filter((x) => typeof x === "number");
    out.push({
        model: basename(g.model), path: g.model, threads: g.threads, depth: g.depth, batch: g.batch, n_prompt: np, n_gen: ng,
        rounds: Math.max(C.length, ...Object.values(byRef).map((v) => v.rounds)),
        reference: mode,
        llama_cpp: { pp: lpp, tg: ltg, tg_gbps: gbps(ltg), bw_pct: pct(ltg), by_reference: byRef },
        churon: { pp: cpp, tg: ctg, tg_gbps: gbps(ctg), bw_pct: pct(ctg) },
        pp_ratio: ratio(cpp, lpp), tg_ratio: ratio(ctg, ltg),
        weights_bytes: wb, read_gbps: bw,
        others_cpu_pct: busy.length ? { mean: busy.reduce((a, b) => a + b, 0) / busy.length, max: Math.max(...busy) } : null,
        churon_backend: C[0]?.backend?.replace(/ \(\d+ threads?(; ([^)]*))?\)$/, (_, _s, note) => (note ? ` (${note})` : "")) ?? null,
    });
}

// Each engine's batched aggregate over its own one-sequence figure of the
// same model, threads and depth (both in this run), where there is one.
for (const o of out) {
    if (o.batch == null) continue;
    const one = out.find((x) => x.path === o.path && x.threads === o.threads && x.depth === o.depth && x.batch === 1);
    const over = (a, b) => (a && b ? a.mean / b.mean : null);
    o.over_batch1 = { llama_cpp: over(o.llama_cpp.tg, one?.llama_cpp.tg), churon: over(o.churon.tg, one?.churon.tg) };
}

if (asJSON) {
    console.log(JSON.stringify({ meta, results: out }, null, 1));
} else {
    const f = (x) => (x ? `${x.mean.toFixed(1)} ± ${x.std.toFixed(1)}` : "—");
    const r = (x) => (x == null ? "—" : `${x.toFixed(2)}×`);
    const p = (x) => (x == null ? "—" : `${x.toFixed(0)} %`);
    // A llama.cpp cell names its reference when there is a choice, and the
    // other references' means beside it.
    const lc = (o, which) => {
        const x = o.llama_cpp[which];
        if (!x) return "—";
        if (mode !== "best") return f(x);
        const others = Object.entries(o.llama_cpp.by_reference).filter(([k, v]) => k !== x.ref && v[which])
            .map(([k, v]) => `${k} ${v[which].mean.toFixed(1)}`);
        return `${f(x)} ${x.ref}${others.length ? ` (${others.join(", ")})` : ""}`;
    };
    const np = out[0]?.n_prompt ?? "", ng = out[0]?.n_gen ?? "";
    // Columns for tests that did not run (-p 0 or -n 0 everywhere) are left out.
    const hasPP = out.some((o) => o.n_prompt > 0), hasTG = out.some((o) => o.n_gen > 0);
    const ref = mode === "best" ? "best" : mode;
    const hasBatch = out.some((o) => o.batch != null);
    const head = ["model", "t", "depth"], align = ["---", "---:", "---:"];
    if (hasBatch) head.push("batch"), align.push("---:");
    if (hasPP) head.push(`pp${np} llama.cpp ${ref}`, `pp${np} churon`, "pp ratio");
    if (hasTG) head.push(`tg${ng} llama.cpp ${ref}`, `tg${ng} churon`, "tg ratio", "bw % llama.cpp", "bw % churon");
    if (hasBatch) head.push("llama.cpp ÷ batch 1", "churon ÷ batch 1");
    head.push("others' CPU %");
    while (align.length < head.length) align.push("---:");
    console.log(`| ${head.join(" | ")} |`);
    console.log(`|${align.join("|")}|`);
    for (const o of out) {
        const cells = [o.model, o.threads, o.depth];
        if (hasBatch) cells.push(o.batch ?? 1);
        if (hasPP) cells.push(lc(o, "pp"), f(o.churon.pp), r(o.pp_ratio));
        if (hasTG) cells.push(lc(o, "tg"), f(o.churon.tg), r(o.tg_ratio), p(o.llama_cpp.bw_pct), p(o.churon.bw_pct));
        if (hasBatch) cells.push(r(o.over_batch1?.llama_cpp), r(o.over_batch1?.churon));
        cells.push(o.others_cpu_pct ? `${o.others_cpu_pct.mean.toFixed(0)} (max ${o.others_cpu_pct.max.toFixed(0)})` : "—");
        console.log(`| ${cells.join(" | ")} |`);
    }
    const refs = new Map();
    for (const o of out) for (const [k, v] of Object.entries(o.llama_cpp.by_reference)) refs.set(k, v);
    const refText = [...refs].map(([k, v]) => `${k} = llama.cpp ${v.version} ${k === "prebuilt" ? `CPU variant ${v.cpu_variant} via node-llama-cpp` : `${hasBatch ? "llama-batched-bench" : "llama-bench"} built for this CPU (build.sh ${v.cpu_variant})`}`).join("; ");
    // The backend's name says which weight types it holds interleaved, and
    // that differs between files: one name when all cells agree, else the
    // level once and each model's own note.
    const named = out.filter((o) => o.churon_backend);
    const distinct = [...new Set(named.map((o) => o.churon_backend))];
    let backend = distinct[0];
    if (distinct.length > 1) {
        const level = (b) => b.replace(/ \(.*\)$/, "");
        const perModel = new Map(named.map((o) => [o.model, (o.churon_backend.match(/ \((.*)\)$/)?.[1] ?? "nothing interleaved").replaceAll("; ", ", ")]));
        backend = `${[...new Set(named.map((o) => level(o.churon_backend)))].join(", ")} (${[...perModel].map(([m, n]) => `${m}: ${n}`).join("; ")})`;
    }
    if (meta.command) console.log(`\n\`${meta.command}\` on ${meta.cpu}, ${meta.date}; load average before ${meta.load_before}, after ${meta.load_after ?? "?"}`);
    console.log(`reference ${mode}${mode === "best" ? " (the faster of prebuilt and native, per cell; the other's mean in brackets)" : ""}: ${refText}; ` +
        `churon ${backend ?? "not run"}${meta.churon_cpu ? ` (CHURON_CPU=${meta.churon_cpu})` : ""}; ratio = churon ÷ llama.cpp; ± = sample stddev over all repetitions of all rounds; ` +
        `depth = tokens already in the KV cache before each timed test; ` +
        `bw % = weights read per token × tg ÷ the best read bandwidth churon's probes measured at that thread count in this run (${[...ceiling].sort((a, b) => a[0] - b[0]).map(([t, v]) => `t=${t} ${v.toFixed(1)} GB/s`).join(", ") || "none"}; the KV cache's reads, which grow with depth, not counted); ` +
        `others' CPU % = share of all CPUs used by other processes during the runs (mean, max)`);
}
