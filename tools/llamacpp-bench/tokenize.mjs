#!/usr/bin/env node
// Records llama.cpp's tokenization of a fixed set of texts with one
// vocabulary, as the reference engine/tokenizer's tests read:
//
//   node tools/llamacpp-bench/tokenize.mjs VOCAB.gguf OUT.json [--set gpt-oss|qwen35]
//
// e.g. VOCAB = $CHURON_TESTDATA/vocab/ggml-vocab-gpt-oss.gguf and OUT =
// engine/tokenizer/testdata/gpt-oss.tokens.json (the default set: the
// texts below and Harmony's special tokens), or VOCAB =
// $CHURON_TESTDATA/vocab/ggml-vocab-qwen35pre.gguf, OUT =
// engine/tokenizer/testdata/qwen35pre.tokens.json with --set qwen35: the
// same texts, more where the qwen35 pre-tokenizer joins combining marks to
// letters (Hangul jamo, Indic and Thai signs, Arabic harakat, decomposed
// accents, marks after digits, punctuation and spaces), and ChatML prompts
// as engine/chat's Qwen 3.5 golden renders them, special tokens parsed.
// It loads the vocabulary
// only (loadModel vocabOnly) in node-llama-cpp 3.22.1's prebuilt llama.cpp
// v0.5.0, installed as bench.sh installs it; it never downloads or builds.

import { readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadBinding } from "./binding.mjs";


// Texts: English, Korean, code, emoji, digits, whitespace runs, case runs
// (the o200k expression splits on them), contractions, other scripts.
const texts = [
    "Hello world",
    " Hello World! How's it going? I'd say we'll see, they're fine, you've won, I'm here.",
    "HELLO WORLD, HelloWorld, helloWORLD, camelCaseIdentifier, XMLHttpRequest, iPhone",
    "SHOUTING'S LOUD'LL DON'T",
    "안녕하세요, 세계! 오늘 날씨가 정말 좋네요. 한국어 토큰화 테스트입니다.",
    "대한민국의 수도는 서울입니다 (Seoul). 가격은 12,345원이에요.",
    "func main() {\n\tfmt.Println(\"hi\")\n\tfor i := 0; i < 10; i++ {\n\t\tx += i*2 // sum\n\t}\n}\n",
    "def f(x):\n    return {'a': [1, 2, 3], \"b\": x ** 2}\n\n\nclass A(B):\n    pass\n",
    "https://example.com/path/to/file.html?q=1&r=two#frag and C:\\Users\\me\\file.txt",
    "<html><body class=\"x\">&amp; &lt;tag&gt;</body></html>\r\n",
    "Emoji: 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🇰🇷 ❤️ ✨🚀",
    "Numbers: 1 12 123 1234 12345 1234567890 3.14159 -42 1e10 ０１２３ ١٢٣ ⅫⅣ",
    "Whitespace:  two   three    four\t\ttabs\n\nnewlines\n\n\n   \n  mixed \r\n\r\n end   ",
    "   leading spaces and trailing   ",
    "\n\n\n",
    "nbsp\u00a0here\u3000ideographic\u2003em space \u200bzero width",
    "Ünïcödé: ÉCOLE école Straße ĲSSELMEER İstanbul ǅemal Ǆ ǈ",
    "Combining: e\u0301 a\u0308 n\u0303 Cafe\u0301 ESPAN\u0303A",
    "中文测试：你好，世界！日本語のテキスト、カタカナ。",
    "Русский текст, Ελληνικά, العربية, עברית, हिन्दी, ไทย",
    "don't can't won't it's we're they've I'll she'd 'quoted' ''double''",
    "a/b/c //comment /// \n/path/ ...!!!??? ---___=== ~~~ ```code```",
    "<|start|>assistant<|channel|>analysis<|message|>plain text, not special",
    "x",
    "",
];

// And 60 mixes drawn with a fixed generator from pieces the expression
// treats differently: case runs, accented capitals, Hangul, marks,
// digits, apostrophes, slashes, line breaks and other whitespace.
{
    const pieces = ["a", "Z", "Hello", "WORLD", "camelCase", "ÉCOLE", "école", "한글", "漢字", "😀", "e\u0301",
        "'s", "'LL", "'re", "'", "0", "12", "3456", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "/", "//",
        ";", "...", "<|", "|>", "-", "_x", "İ", "ǅ", "ß", "Ω", "ǈ"];
    let state = 20261202;
    const next = (n) => {
        state = (state * 1103515245 + 12345) % 2147483648;
        return state % n;
    };
    for (let i = 0; i < 60; i++) {
        let t = "";
        const k = 1 + next(12);
        for (let j = 0; j < k; j++) t += pieces[next(pieces.length)];
        texts.push(t);
    }
}

// Texts tokenized with special tokens parsed (the Harmony markers).
const special = [
    "<|start|>user<|message|>안녕?<|end|><|start|>assistant",
    "<|start|>assistant<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Answer.<|return|>",
    "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\":\"Seoul\"}<|call|>",
];

// The qwen35 set's further texts: what qwen35's expression treats apart
// from qwen2's, letters with marks ([\p{L}\p{M}]+), and Korean as people
// type it (jamo alone, conjoining jamo, laughter runs).
const qwen35Texts = [
    "ㅋㅋㅋ ㅎㅎ ㅠㅠ ㅇㅇ ㄱㄴㄷ ㅏㅑㅓ",
    "\u1112\u1161\u11ab\u1100\u1173\u11af \u1112\u1161\u11ab\uae00 \u115f\u1160 x\u1161",
    "\u3164 \uffa1\uffc2 ᄀᄀ ퟻ 한\u0301글 가\u302e",
    "हिन्दी भाषा, नमस्ते। தமிழ் ভাষা",
    "ภาษาไทย สวัสดีครับ ๑๒๓",
    "مَرْحَبًا بِالْعَالَمِ",
    "Vie\u0323\u0302t Nam, Tie\u0302\u0301ng Vie\u0323\u0302t, Z\u0337\u0322a\u0334l\u0338g\u0335o",
    "1\u0301 2\u0308x !\u0301? \u0301start  \u0301\u0302 x\n\u0301y",
    "keycap 1\ufe0f\u20e3 #\ufe0f\u20e3 ❤\ufe0f ☺\ufe0e a\u20dd",
    "I'\u0301m it'S DON'T's 'd\u0301",
    "<think>\nplain think text\n</think>\n\n<tool_call> <|im_start|>not special",
];

const qwen35Special = (() => {
    const golden = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "engine", "chat", "testdata", "qwen3.5.golden.json");
    const want = ["single_user", "system_and_user", "multi_turn_earlier_reasoning", "korean", "tool_calls_answered"];
    const cases = JSON.parse(readFileSync(golden, "utf8")).cases;
    return want.map((name) => cases.find((c) => c.name === name).expected);
});

const args = process.argv.slice(2);
let set = "gpt-oss";
const si = args.indexOf("--set");
if (si >= 0) set = args.splice(si, 2)[1];
const [vocab, out] = args;
if (!vocab || !out || !["gpt-oss", "qwen35"].includes(set)) {
    console.error("usage: tokenize.mjs VOCAB.gguf OUT.json [--set gpt-oss|qwen35]");
    process.exit(2);
}
const plain = set === "qwen35" ? texts.concat(qwen35Texts) : texts;
const specials = set === "qwen35" ? qwen35Special() : special;
const { getLlama, LlamaLogLevel } = (await loadBinding()).mod;
const llama = await getLlama({ gpu: false, build: "never", skipDownload: true, logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: vocab, vocabOnly: true });
const cases = [];
for (const text of plain) cases.push({ text, special: false, ids: Array.from(model.tokenize(text, false)) });
for (const text of specials) cases.push({ text, special: true, ids: Array.from(model.tokenize(text, true)) });
// One case a line: small diffs when a text is added.
writeFileSync(out, `{"vocab": ${JSON.stringify(basename(vocab))},\n` +
    `"reference": "llama.cpp v0.5.0 (node-llama-cpp 3.22.1), model.tokenize(text, special)",\n` +
    `"cases": [\n${cases.map((c) => JSON.stringify(c)).join(",\n")}\n]}\n`);
console.log(`wrote ${cases.length} cases to ${out}`);
await model.dispose();
await llama.dispose();
