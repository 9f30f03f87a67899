#!/usr/bin/env node
// Benchmarks llama.cpp's CPU backend (the prebuilt binaries that the npm
// package node-llama-cpp ships) the way `llama-bench -p P -n N -r R -mmp 0`
// does, so that it can be compared with `churon bench` on the same file.
// With -d D (llama-bench's -d) every timed test runs after D tokens already
// in the KV cache.
// See README.md for what is measured and how it maps to llama-bench.
//
//   node bench.mjs -m FILE [-m FILE…] [-p 128] [-n 64] [-r 3] [-t 1,2] [-d 0,2048]
//                  [--fa auto|on|off] [--api direct|public] [--json]
//   node bench.mjs -m FILE --generate "Once upon a time" [-n 32] [-t 1] [--top 5]
//
// It never downloads or builds anything: getLlama is told build "never" and
// skipDownload, and NODE_LLAMA_CPP_SKIP_DOWNLOAD is set before the import.

import { statSync } from "node:fs";
import { loadBinding, vocabSize } from "./binding.mjs";
import { meanStd } from "./stats.mjs";

const USAGE = `usage: bench.mjs -m FILE [-m FILE...] [-p 128] [-n 64] [-r 3] [-t 1,2] [-d 0]
                [--ctx 0] [--ubatch 512] [--fa auto|on|off] [--api direct|public]
                [--no-warmup] [--seed 1] [--json] [--verbose]
       bench.mjs -m FILE --generate TEXT [-n 32] [-t 1] [--top 5] [--no-bos] [--fa off]
modules are looked up in $LLAMACPP_BENCH_DIR/node_modules
(default \${XDG_CACHE_HOME:-~/.cache}/churon/llamacpp-bench)`;

function parseArgs(argv) {
    const o = {
        models: [], p: 128, n: 64, r: 3, threads: [1, 2], depths: [0], ctx: 0, ubatch: 512, fa: "auto",
        api: "direct", warmup: true, seed: 1, json: false, verbose: false,
        generate: null, top: 5, bos: true,
    };
    const int = (name, v) => {
        const x = Number(v);
        if (!Number.isInteger(x) || x < 0) throw new Error(`${name}: not a non-negative integer: ${v}`);
        return x;
    };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const next = () => {
            if (i + 1 >= argv.length) throw new Error(`${a}: missing value`);
            return argv[++i];
        };
        switch (a) {
            case "-m": case "--model": o.models.push(next()); break;
            case "-p": case "--n-prompt": o.p = int(a, next()); break;
            case "-n": case "--n-gen": o.n = int(a, next()); break;
            case "-r": case "--repetitions": o.r = int(a, next()); break;
            case "-t": case "--threads":
                o.threads = next().split(",").map((s) => int(a, s));
                if (o.threads.some((t) => t < 1)) throw new Error(`${a}: threads must be ≥ 1`);
                break;
            case "-d": case "--n-depth": case "--depth": {
                const list = next();
                o.depths = list.split(",").map((s) => {
                    if (s.trim() === "") throw new Error(`${a}: empty entry in ${list}`);
                    return int(a, s);
                });
                break;
            }
            case "--ctx": o.ctx = int(a, next()); break;
            case "--ubatch": case "-ub": o.ubatch = int(a, next()); break;
            case "--fa": o.fa = next(); break;
            case "--api": o.api = next(); break;
            case "--no-warmup": o.warmup = false; break;
            case "--seed": o.seed = int(a, next()); break;
            case "--json": o.json = true; break;
            case "--verbose": case "-v": o.verbose = true; break;
            case "--generate": o.generate = next(); break;
            case "--top": o.top = int(a, next()); break;
            case "--no-bos": o.bos = false; break;
            case "-h": case "--help": console.log(USAGE); process.exit(0);
            default: throw new Error(`unknown argument ${a}`);
        }
    }
    if (o.models.length === 0) throw new Error("no model (-m FILE)");
    if (!["auto", "on", "off"].includes(o.fa)) throw new Error(`--fa: want auto, on or off, got ${o.fa}`);
    if (!["direct", "public"].includes(o.api)) throw new Error(`--api: want direct or public, got ${o.api}`);
    if (o.r < 1) throw new Error("-r must be ≥ 1");
    const need = Math.max(...o.depths) + o.p + o.n;
    if (o.ctx > 0 && o.generate == null && o.ctx < need) {
        throw new Error(`--ctx ${o.ctx}: too small for depth ${Math.max(...o.depths)} + ${o.p} prompt + ${o.n} generated tokens (want ≥ ${need}, or leave it out)`);
    }
    return o;
}

// A small deterministic generator, so runs are repeatable (llama-bench uses
// an unseeded std::rand(); only the ids' spread matters, not their values).
function makeRng(seed) {
    let s = BigInt(seed) * 0x9E3779B97F4A7C15n + 1n;
    const mask = (1n << 64n) - 1n;
    return (mod) => {
        s = (s * 6364136223846793005n + 1442695040888963407n) & mask;
        return Number((s >> 33n) % BigInt(mod));
    };
}

// Direct driver: the same llama_decode calls llama-bench makes, through the
// addon context that node-llama-cpp wraps (an internal field, pinned by the
// exact version in package.json). Every batch asks for logits of its last
// token only — what llama_batch_get_one does — so the output matrix is
// computed on every step, and nothing is sampled.
function directDriver(context) {
    const a = context._ctx;
    for (const f of ["initBatch", "addToBatch", "decodeBatch", "disposeSequence", "setThreads"]) {
        if (typeof a?.[f] !== "function") {
            throw new Error(`node-llama-cpp internals changed (no _ctx.${f}); use --api public or pin 3.22.1`);
        }
    }
    let pos = 0;
    return {
        name: "direct",
        clear() { a.disposeSequence(0); pos = 0; },
        async decode(tokens) {
            a.initBatch(tokens.length);
            a.addToBatch(0, pos, Uint32Array.from(tokens), Uint32Array.of(tokens.length - 1));
            await a.decodeBatch(); // runs llama_decode then llama_synchronize
            pos += tokens.length;
        },
    };
}

// Public driver: the documented API. It cannot ask for logits without also
// sampling a token, so each batch's last token is sampled greedily (an
// argmax over the vocabulary, a few tens of µs); used to cross-check direct.
function publicDriver(context) {
    const seq = context.getSequence();
    return {
        name: "public",
        async clear() { await seq.clearHistory(); },
        async decode(tokens) {
            const input = tokens.map((t, i) => (i === tokens.length - 1
                ? [t, { generateNext: { token: true, options: { temperature: 0 } } }] : t));
            await seq.controlledEvaluate(input);
        },
    };
}

const now = () => Number(process.hrtime.bigint()) / 1e9;

async function benchModel(L, llama, file, o, logs, out) {
    const { LlamaLogLevel } = L.mod;
    llama.logLevel = LlamaLogLevel.debug;
    logs.length = 0;
    const t0 = now();
    const model = await llama.loadModel({ modelPath: file, useMmap: false, useMlock: false, gpuLayers: 0 });
    const loadS = now() - t0;
    const buffers = {};
    for (const l of logs) {
        const m = /load_tensors:\s+(\S+) model buffer size =\s+([\d.]+) MiB/.exec(l);
        if (m) buffers[m[1]] = Number(m[2]);
    }
    const loadLog = logs.filter((l) => /load_mode|cannot be used with preferred buffer|model buffer size/.test(l));
    llama.logLevel = o.verbose ? LlamaLogLevel.info : LlamaLogLevel.warn;
    const nVocab = vocabSize(model);
    const addBos = model.tokens.shouldPrependBosToken && model.tokens.bos != null;
    const meta = model.fileInfo.metadata;
    try {
        for (const t of o.threads) for (const depth of o.depths) {
            // llama-bench sizes the context to depth + p + n; 512 at least, as before.
            const nCtx = o.ctx || Math.max(512, depth + o.p + o.n);
            const batch = Math.max(o.ubatch, o.p, 1);
            const context = await model.createContext({
                contextSize: nCtx, batchSize: batch, sequences: 1, threads: t,
                flashAttention: o.fa === "auto" ? "auto" : o.fa === "on",
            });
            try {
                const d = o.api === "direct" ? directDriver(context) : publicDriver(context);
                if (o.api === "direct") context._ctx.setThreads(t);
                const rnd = makeRng(o.seed);
                const prompt = (k) => Array.from({ length: k }, (_, i) => (i === 0 && addBos ? model.tokens.bos : rnd(nVocab)));
                const pp = async () => { await d.decode(prompt(o.p)); };
                // llama-bench's depth: a prompt of `depth` tokens (BOS, then random
                // ids) decoded in batches of at most the batch size, untimed.
                const fill = async () => {
                    for (let done = 0; done < depth; done += batch) {
                        const k = Math.min(batch, depth - done);
                        await d.decode(Array.from({ length: k }, (_, i) => (done === 0 && i === 0 && addBos ? model.tokens.bos : rnd(nVocab))));
                    }
                };
                const tg = async (k) => {
                    let tok = addBos ? model.tokens.bos : rnd(nVocab);
                    for (let i = 0; i < k; i++) {
                        await d.decode([tok]);
                        tok = rnd(nVocab);
                    }
                };
                // llama-bench: one untimed prompt run and one generated token (at
                // depth 0), then every repetition starts from an empty cache filled
                // to the depth.
                if (o.warmup) {
                    await d.clear();
                    if (o.p > 0) await pp();
                    if (o.n > 0) await tg(1);
                }
                const ppRates = [], tgRates = [];
                for (let i = 0; i < o.r; i++) {
                    if (o.p > 0) {
                        await d.clear();
                        await fill();
                        const s = now();
                        await pp();
                        ppRates.push(o.p / (now() - s));
                    }
                    if (o.n > 0) {
                        await d.clear();
                        await fill();
                        const s = now();
                        await tg(o.n);
                        tgRates.push(o.n / (now() - s));
                    }
                }
                const [ppM, ppS] = meanStd(ppRates);
                const [tgM, tgS] = meanStd(tgRates);
                out({
                    engine: "llama.cpp",
                    llama_cpp: L.release, node_llama_cpp: L.version, prebuilt: L.prebuilt,
                    cpu_variant: L.cpuVariant, api: d.name,
                    model: file, model_name: meta?.general?.name ?? null,
                    arch: meta?.general?.architecture ?? null, file_type: meta?.general?.file_type ?? null,
                    model_bytes: statSync(file).size, n_vocab: nVocab, add_bos: addBos,
                    threads: context.currentThreads ?? t, mmap: false, flash_attn: o.fa, n_ctx: context.contextSize,
                    n_prompt: o.p, n_gen: o.n, depth, reps: o.r,
                    pp_tps: ppM, pp_std: ppS, tg_tps: tgM, tg_std: tgS,
                    pp_samples: ppRates, tg_samples: tgRates,
                    load_s: loadS, weight_buffers_mib: buffers,
                    ...(o.verbose ? { load_log: loadLog } : {}),
                });
            } finally {
                await context.dispose();
            }
        }
    } finally {
        await model.dispose();
    }
}

// Greedy continuation of TEXT, with the top logits at each step, for checking
// that this harness drives llama.cpp correctly (compare with churon generate
// --temp 0 --raw --json and the reference files in shared/testdata).
async function generate(L, llama, file, o) {
    const model = await llama.loadModel({ modelPath: file, useMmap: false, gpuLayers: 0 });
    try {
        const context = await model.createContext({
            contextSize: Math.max(512, o.n + 64), threads: o.threads[0],
            flashAttention: o.fa === "auto" ? "auto" : o.fa === "on",
        });
        const seq = context.getSequence();
        const body = model.tokenize(o.generate, false);
        const promptIds = o.bos && model.tokens.bos != null ? [model.tokens.bos, ...body] : body;
        const step = { generateNext: { token: true, logits: { filter: { tokens: [], includeTop: o.top } }, options: { temperature: 0 } } };
        let input = promptIds.map((t, i) => (i === promptIds.length - 1 ? [t, step] : t));
        const ids = [], tops = [];
        for (let k = 0; k < o.n; k++) {
            const res = await seq.controlledEvaluate(input);
            const next = res[input.length - 1]?.next;
            if (next?.token == null) throw new Error(`no token at step ${k}`);
            ids.push(next.token);
            const top = [...(next.logits ?? new Map())].sort((x, y) => y[1] - x[1]).slice(0, o.top);
            tops.push(top.map(([id, v]) => [id, Number(v.toFixed(5))]));
            input = [[next.token, step]];
        }
        console.log(JSON.stringify({
            engine: "llama.cpp", llama_cpp: L.release, node_llama_cpp: L.version, cpu_variant: L.cpuVariant,
            model: file, prompt: o.generate, prompt_tokens: promptIds, tokens: ids,
            text: model.detokenize(ids), top_logits: tops, threads: o.threads[0], flash_attn: o.fa,
        }));
        await context.dispose();
    } finally {
        await model.dispose();
    }
}

async function main() {
    const o = parseArgs(process.argv.slice(2));
    const L = await loadBinding();
    const { getLlama, LlamaLogLevel } = L.mod;
    const logs = [];
    const llama = await getLlama({
        gpu: false, build: "never", usePrebuiltBinaries: true, skipDownload: true, progressLogs: false,
        maxThreads: 0, logLevel: LlamaLogLevel.debug,
        logger: (level, msg) => {
            logs.push(msg);
            if (o.verbose && level !== LlamaLogLevel.debug) process.stderr.write(`[llama.cpp ${level}] ${msg}\n`);
        },
    });
    if (llama.gpu !== false) throw new Error(`expected the CPU build, got gpu=${llama.gpu}`);
    // The addon delivers log lines asynchronously: wait for the backend line.
    const findVariant = () => logs.map((l) => /loaded CPU backend from .*libggml-cpu-([\w-]+)\.so/.exec(l)).find(Boolean);
    for (let i = 0; i < 50 && !findVariant(); i++) await new Promise((r) => setTimeout(r, 10));
    const variant = findVariant();
    L.cpuVariant = variant ? variant[1] : null;
    L.release = llama.llamaCppRelease?.release ?? null;
    const sys = llama.systemInfo;
    if (!o.json && !o.generate) {
        console.log(`llama.cpp ${L.release} via node-llama-cpp ${L.version} (prebuilt ${L.prebuilt}, ${llama.buildType}), CPU variant ${L.cpuVariant}`);
        console.log(`system_info: ${sys.trim()}`);
        console.log(`| model | threads | test | t/s |`);
    }
    try {
        for (const file of o.models) {
            if (o.generate != null) {
                await generate(L, llama, file, o);
                continue;
            }
            await benchModel(L, llama, file, o, logs, (r) => {
                if (o.json) {
                    console.log(JSON.stringify({ ...r, system_info: sys.trim() }));
                    return;
                }
                const name = file.split("/").pop();
                const at = r.depth > 0 ? ` @ d${r.depth}` : "";
                if (r.n_prompt > 0) console.log(`| ${name} | ${r.threads} | pp${r.n_prompt}${at} | ${r.pp_tps.toFixed(2)} ± ${r.pp_std.toFixed(2)} |`);
                if (r.n_gen > 0) console.log(`| ${name} | ${r.threads} | tg${r.n_gen}${at} | ${r.tg_tps.toFixed(2)} ± ${r.tg_std.toFixed(2)} |`);
            });
        }
    } finally {
        await llama.dispose();
    }
}

main().catch((err) => {
    console.error(`bench.mjs: ${err?.message ?? err}`);
    process.exit(1);
});
