#!/usr/bin/env node
// Runs a llama-bench that build.sh made (llama.cpp v0.5.0 built for this
// CPU) and prints its results as bench.mjs's JSON lines, one per model ×
// threads × depth, so bench.sh and compare.mjs treat both alike.
//
//   node llamabench.mjs --build DIR -m FILE [-p 128] [-n 64] [-r 3] [-t 1] [-d 0] [--fa auto] [--batch B]
//
// DIR is a build.sh build (DIR/bin/llama-bench, DIR/build-info.txt). The
// command is llama-bench's own, weights read into memory (`-lm none`, what
// `-mmp 0` was), output as JSON lines; its stderr goes to ours. A failed
// load or a missing test is an error, never a missing row.
//
// --batch B (with -p 0) times B sequences decoded together with
// llama.cpp's llama-batched-bench instead (B = 1 too, so that every batch
// size is timed alike), what `churon bench -p 0 --batch B` times: each
// sequence first gets d prompt tokens (the depth), then n steps of one
// token per sequence, every token's logits asked for; tg_tps is the
// aggregate, B·n per second. It runs the case r + 1 times in one process
// and drops the first (the warm-up). It maps the weights (the tool has no
// flag against that); the warm-up reads them into memory.

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { meanStd } from "./stats.mjs";

function parseArgs(argv) {
    const o = { build: null, model: null, p: 128, n: 64, r: 3, t: 1, d: 0, fa: "auto", batch: null };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const next = () => {
            if (i + 1 >= argv.length) throw new Error(`${a}: missing value`);
            return argv[++i];
        };
        const int = () => {
            const v = next(), x = Number(v);
            if (!Number.isInteger(x) || x < 0) throw new Error(`${a}: not a non-negative integer: ${v}`);
            return x;
        };
        switch (a) {
            case "--build": o.build = next(); break;
            case "-m": o.model = next(); break;
            case "-p": o.p = int(); break;
            case "-n": o.n = int(); break;
            case "-r": o.r = int(); break;
            case "-t": o.t = int(); break;
            case "-d": case "--depth": o.d = int(); break;
            case "--fa": o.fa = next(); break;
            case "--batch": o.batch = int(); break;
            default: throw new Error(`unknown argument ${a}`);
        }
    }
    if (!o.build || !o.model) throw new Error("usage: llamabench.mjs --build DIR -m FILE [-p N] [-n N] [-r N] [-t N] [-d N] [--fa auto|on|off] [--batch B]");
    if (o.r < 1 || o.t < 1 || o.batch === 0) throw new Error("-r, -t and --batch must be ≥ 1");
    if (o.batch != null && (o.p !== 0 || o.n === 0)) throw new Error("--batch times decode only: give -p 0 and -n > 0");
    if (o.p === 0 && o.n === 0) throw new Error("-p and -n are both 0: nothing to measure");
    if (!["auto", "on", "off"].includes(o.fa)) throw new Error(`--fa: want auto, on or off, got ${o.fa}`);
    return o;
}

// buildInfo reads build.sh's build-info.txt: field(key) is the rest of the
// line that starts with key.
function buildInfo(dir) {
    const info = readFileSync(join(dir, "build-info.txt"), "utf8");
    return (k) => (new RegExp(`^${k} (.*)$`, "m").exec(info) ?? [])[1] ?? null;
}

// release is llama.cpp's release as build-info.txt names it.
const release = (field) => field("source")?.replace(/^llama\.cpp ([^,\s]+).*/, "$1") ?? null;

function batched(o) {
    const bin = join(o.build, "bin", "llama-batched-bench");
    const field = buildInfo(o.build);
    const runs = Array(o.r + 1).fill(o.batch).join(",");
    const args = ["-m", o.model, "-t", String(o.t), "-tb", String(o.t), "-c", String(o.batch * (o.d + o.n) + 16),
        "-b", "2048", "-ub", "512", "-npp", String(o.d), "-ntg", String(o.n), "-npl", runs, "-fa", o.fa,
        "--output-format", "jsonl"];
    if (!existsSync(bin)) throw new Error(`no ${bin} (run tools/llamacpp-bench/build.sh ${basename(o.build)})`);
    const out = execFileSync(bin, args, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 26 });
    // Its log lines share stdout with the JSON; a prompt of 0 tokens makes
    // its prompt speed "-nan".
    const lines = out.split("\n").filter((l) => l.startsWith("{\"n_kv_max\""));
    const tests = lines.map((l) => JSON.parse(l.replace(/-?nan/g, "null")));
    if (tests.length !== o.r + 1) throw new Error(`llama-batched-bench printed ${tests.length} results, want ${o.r + 1}`);
    for (const x of tests) {
        if (x.pl !== o.batch || x.tg !== o.n || x.pp !== o.d || x.n_threads !== o.t) {
            throw new Error(`llama-batched-bench ran pl=${x.pl} tg=${x.tg} pp=${x.pp} t=${x.n_threads}, asked ${o.batch}, ${o.n}, ${o.d}, ${o.t}`);
        }
    }
    const samples = tests.slice(1).map((x) => x.speed_tg);
    const [tg, sd] = meanStd(samples);
    console.log(JSON.stringify({
        engine: "llama.cpp", llama_cpp: release(field), cpu_variant: basename(o.build), build_flags: field("cmake"),
        build_arch_flags: field("ggml-cpu arch flags"), api: "llama-batched-bench",
        model: o.model, model_bytes: statSync(o.model).size, threads: o.t, mmap: true, flash_attn: o.fa,
        n_prompt: 0, n_gen: o.n, depth: o.d, batch: o.batch, reps: o.r,
        pp_tps: 0, pp_std: 0, tg_tps: tg, tg_std: sd, pp_samples: [], tg_samples: samples,
        command: [bin, ...args].join(" "),
    }));
}

function main() {
    const o = parseArgs(process.argv.slice(2));
    if (o.batch != null) return batched(o);
    const bin = join(o.build, "bin", "llama-bench");
    const field = buildInfo(o.build);
    const args = ["-m", o.model, "-t", String(o.t), "-r", String(o.r), "-d", String(o.d),
        "-lm", "none", "-fa", o.fa, "-o", "jsonl"];
    // llama-bench runs every -p and every -n as its own test; "-p 0" or
    // "-n 0" alone skips that kind (an empty list would mean its default).
    args.push("-p", String(o.p), "-n", String(o.n));
    const out = execFileSync(bin, args, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 26 });
    const tests = out.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
    const pick = (pp) => tests.find((x) => (pp ? x.n_prompt === o.p && x.n_gen === 0 : x.n_prompt === 0 && x.n_gen === o.n));
    const pp = o.p > 0 ? pick(true) : null, tg = o.n > 0 ? pick(false) : null;
    if ((o.p > 0 && !pp) || (o.n > 0 && !tg)) throw new Error(`llama-bench printed no ${!pp && o.p > 0 ? `pp${o.p}` : `tg${o.n}`} result for ${o.model}`);
    for (const x of [pp, tg].filter(Boolean)) {
        if (x.load_mode !== "none") throw new Error(`llama-bench ran with load_mode ${x.load_mode}, not none`);
        if (x.n_threads !== o.t || x.n_depth !== o.d) throw new Error(`llama-bench ran t=${x.n_threads} d=${x.n_depth}, asked t=${o.t} d=${o.d}`);
    }
    const any = pp ?? tg;
    console.log(JSON.stringify({
        engine: "llama.cpp",
        llama_cpp: release(field),
        build_commit: any.build_commit, cpu_variant: basename(o.build), build_flags: field("cmake"),
        build_arch_flags: field("ggml-cpu arch flags"), api: "llama-bench", backends: any.backends, cpu_info: any.cpu_info,
        model: o.model, model_type: any.model_type, model_bytes: statSync(o.model).size, model_size: any.model_size,
        threads: o.t, mmap: false, flash_attn: o.fa, n_batch: any.n_batch, n_ubatch: any.n_ubatch,
        n_prompt: o.p, n_gen: o.n, depth: o.d, reps: o.r,
        pp_tps: pp?.avg_ts ?? 0, pp_std: pp?.stddev_ts ?? 0, tg_tps: tg?.avg_ts ?? 0, tg_std: tg?.stddev_ts ?? 0,
        pp_samples: pp?.samples_ts ?? [], tg_samples: tg?.samples_ts ?? [],
        command: [bin, ...args].join(" "),
    }));
}

try {
    main();
} catch (err) {
    console.error(`llamabench.mjs: ${err?.message ?? err}`);
    process.exit(1);
}
