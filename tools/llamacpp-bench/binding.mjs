// Finds node-llama-cpp where bench.sh installs it, for every script here:
// one place knows the cache folder and how to read a model's vocabulary
// size. Nothing is downloaded or built.

import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

process.env.NODE_LLAMA_CPP_SKIP_DOWNLOAD = "true";

// benchDir is where bench.sh --install puts node_modules.
export function benchDir() {
    return process.env.LLAMACPP_BENCH_DIR ||
        join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "churon", "llamacpp-bench");
}

// loadBinding imports node-llama-cpp from benchDir: the module, its version,
// the prebuilt linux-x64 package's version (null on other platforms) and
// the folder.
export async function loadBinding() {
    const dir = benchDir();
    let entry;
    try {
        entry = createRequire(import.meta.url).resolve("node-llama-cpp", { paths: [dir] });
    } catch (err) {
        throw new Error(`node-llama-cpp not installed under ${dir} (run tools/llamacpp-bench/bench.sh --install): ${err.message}`);
    }
    const pkgVersion = (file) => JSON.parse(readFileSync(file, "utf8")).version;
    const version = pkgVersion(join(dirname(entry), "..", "package.json"));
    let prebuilt = null;
    try {
        prebuilt = pkgVersion(join(dir, "node_modules", "@node-llama-cpp", "linux-x64", "package.json"));
    } catch { /* not this platform's package: reported as null */ }
    return { mod: await import(pathToFileURL(entry).href), version, prebuilt, dir };
}

// vocabSize is the vocabulary's size: the tokenizer's list, else
// token_embd's rows.
export function vocabSize(model) {
    const toks = model.fileInfo?.metadata?.tokenizer?.ggml?.tokens;
    if (Array.isArray(toks) && toks.length > 0) return toks.length;
    const emb = model.fileInfo?.fullTensorInfo?.find?.((t) => t.name === "token_embd.weight");
    if (emb && emb.dimensions.length === 2) return Number(emb.dimensions[1]);
    throw new Error("cannot tell the vocabulary size");
}
