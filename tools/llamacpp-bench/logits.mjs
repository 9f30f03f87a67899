#!/usr/bin/env node
// Dumps llama.cpp's logits at every position of a prompt, for conformance
// tests of the architectures Churon adds (issue 20): the same file and the
// same token ids in both engines, every row compared.
//
//   node logits.mjs -m FILE (--ids 1,2,3 | --text TEXT [--bos]) [--kv f16|f32]
//                   [-t 1] [--fa off|on|auto] [--top 20] [--no-full] [--greedy N] [--out FILE]
//
// The output is one JSON object in the shape of shared/testdata's reference
// files: prompt_ids, full_logits_prompt (one row of n_vocab logits per
// position), prompt_top ([id, logit] pairs, best first), plus what produced
// it (llama.cpp release, CPU variant, threads, KV type, flash attention).
// --greedy N then decodes N tokens greedily after the prompt, one at a time
// as in use: generated_ids, and generated_gaps, each step's gap between
// its top two logits (a near tie there makes any later difference moot).
// Each position is evaluated with generateNext.logits, in one
// controlledEvaluate call, so llama.cpp decodes the prompt as one batch, as
// a prompt is decoded in use.
//
// It never downloads or builds anything: modules come from
// $LLAMACPP_BENCH_DIR/node_modules (installed by bench.sh --install).

import { writeFileSync } from "node:fs";
import { basename } from "node:path";
import { loadBinding, vocabSize } from "./binding.mjs";

const USAGE = `usage: logits.mjs -m FILE (--ids 1,2,3 | --text TEXT [--bos]) [--kv f16|f32]
                 [-t 1] [--fa off|on|auto] [--top 20] [--no-full] [--greedy N] [--out FILE]`;

function parseArgs(argv) {
    const o = { model: null, ids: null, text: null, bos: false, kv: "f16", threads: 1, fa: "off", top: 20, full: true, out: null, greedy: 0 };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const next = () => {
            if (i + 1 >= argv.length) throw new Error(`${a}: missing value`);
            return argv[++i];
        };
        switch (a) {
            case "-m": case "--model": o.model = next(); break;
            case "--ids":
                o.ids = next().split(",").map((s) => {
                    const x = Number(s);
                    if (!Number.isInteger(x) || x < 0) throw new Error(`--ids: not a token id: ${s}`);
                    return x;
                });
                break;
            case "--text": o.text = next(); break;
            case "--bos": o.bos = true; break;
            case "--kv": o.kv = next(); break;
            case "-t": case "--threads": o.threads = Number(next()); break;
            case "--fa": o.fa = next(); break;
            case "--top": o.top = Number(next()); break;
            case "--no-full": o.full = false; break;
            case "--out": o.out = next(); break;
            case "--greedy": o.greedy = Number(next()); break;
            case "-h": case "--help": console.log(USAGE); process.exit(0);
            default: throw new Error(`unknown argument ${a}\n${USAGE}`);
        }
    }
    if (!o.model) throw new Error(`no model (-m FILE)\n${USAGE}`);
    if ((o.ids == null) === (o.text == null)) throw new Error("give exactly one of --ids and --text");
    if (!["f16", "f32"].includes(o.kv)) throw new Error(`--kv: want f16 or f32, got ${o.kv}`);
    if (!["auto", "on", "off"].includes(o.fa)) throw new Error(`--fa: want auto, on or off, got ${o.fa}`);
    if (!Number.isInteger(o.threads) || o.threads < 1) throw new Error("-t: want a whole number ≥ 1");
    return o;
}

async function main() {
    const o = parseArgs(process.argv.slice(2));
    const L = await loadBinding();
    const { getLlama, LlamaLogLevel } = L.mod;
    const logs = [];
    const llama = await getLlama({
        gpu: false, build: "never", usePrebuiltBinaries: true, skipDownload: true, progressLogs: false,
        logLevel: LlamaLogLevel.debug, logger: (_level, msg) => logs.push(msg),
    });
    if (llama.gpu !== false) throw new Error(`expected the CPU build, got gpu=${llama.gpu}`);
    try {
        const model = await llama.loadModel({ modelPath: o.model, useMmap: false, gpuLayers: 0 });
        try {
            let ids = o.ids;
            if (ids == null) {
                ids = [...model.tokenize(o.text, false)];
                if (o.bos) {
                    if (model.tokens.bos == null) throw new Error("--bos: the model has no BOS token");
                    ids.unshift(model.tokens.bos);
                }
            }
            if (ids.length === 0) throw new Error("empty prompt");
            const type = o.kv.toUpperCase();
            const context = await model.createContext({
                contextSize: Math.max(256, ids.length + o.greedy + 16), batchSize: Math.max(ids.length, 1), sequences: 1,
                threads: o.threads, flashAttention: o.fa === "auto" ? "auto" : o.fa === "on",
                experimentalKvCacheKeyType: type, experimentalKvCacheValueType: type,
            });
            try {
                const seq = context.getSequence();
                const res = await seq.controlledEvaluate(ids.map((t) => [t, { generateNext: { logits: true } }]));
                const nVocab = vocabSize(model);
                const rows = [], tops = [];
                res.forEach((r, pos) => {
                    const m = r?.next?.logits;
                    if (!(m instanceof Map) || m.size === 0) throw new Error(`no logits at position ${pos}`);
                    const row = new Array(nVocab).fill(0);
                    for (const [id, v] of m) {
                        // The binding may pad its map past the vocabulary with
                        // zero rows; a real logit out there means the size is wrong.
                        if (id >= nVocab) {
                            if (v !== 0) throw new Error(`logit for id ${id} past the vocabulary of ${nVocab}`);
                            continue;
                        }
                        row[id] = v;
                    }
                    rows.push(row);
                    tops.push(row.map((v, id) => [id, v]).sort((x, y) => y[1] - x[1]).slice(0, o.top));
                });
                const generated = [], gaps = [];
                const best = (row) => {
                    let a = 0;
                    row.forEach((v, id) => { if (v > row[a]) a = id; });
                    const second = Math.max(...row.filter((_, id) => id !== a));
                    return [a, row[a] - second];
                };
                let [next] = best(rows[rows.length - 1]);
                for (let i = 0; i < o.greedy; i++) {
                    generated.push(next);
                    const [r] = await seq.controlledEvaluate([[next, { generateNext: { logits: true } }]]);
                    const row = new Array(nVocab).fill(0);
                    for (const [id, v] of r.next.logits) if (id < nVocab) row[id] = v;
                    const [a, gap] = best(row);
                    gaps.push(gap);
                    next = a;
                }
                const variant = logs.map((l) => /libggml-cpu-([\w-]+)\.so/.exec(l)).find(Boolean);
                const doc = {
                    engine: "llama.cpp", llama_cpp: llama.llamaCppRelease?.release ?? null, node_llama_cpp: L.version,
                    cpu_variant: variant ? variant[1] : null, model: basename(o.model),
                    arch: model.fileInfo?.metadata?.general?.architecture ?? null,
                    kv_cache_type: o.kv, flash_attn: o.fa, threads: o.threads,
                    prompt: o.text, add_bos: o.bos, prompt_ids: ids, n_vocab: nVocab,
                    prompt_top: tops,
                    ...(o.greedy > 0 ? { generated_ids: generated, generated_gaps: gaps } : {}),
                    ...(o.full ? { full_logits_prompt: rows } : {}),
                };
                const text = JSON.stringify(doc) + "\n";
                if (o.out) writeFileSync(o.out, text);
                else process.stdout.write(text);
            } finally {
                await context.dispose();
            }
        } finally {
            await model.dispose();
        }
    } finally {
        await llama.dispose();
    }
}

main().catch((err) => {
    console.error(`logits.mjs: ${err?.message ?? err}`);
    process.exit(1);
});
