// Drives `churon serve` with OpenAI's official Node library, as a real
// client would: list models, a chat completion, the same streamed (with
// usage), a stop sequence, a stream the client cancels, and the errors
// the library raises for a bad request and an unknown model. Prints one
// JSON object of what it saw; exits 1 on the first check that fails.
//
//   node check.mjs --base-url http://127.0.0.1:8080/v1 [--api-key KEY]
import OpenAI from "openai";

const args = process.argv.slice(2);
const arg = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const baseURL = arg("--base-url", process.env.OPENAI_BASE_URL);
const apiKey = arg("--api-key", "none");
if (!baseURL) {
  console.error("usage: node check.mjs --base-url URL [--api-key KEY]");
  process.exit(2);
}
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 120_000 });
const seen = {};
const fail = (what) => {
  console.log(JSON.stringify({ ok: false, failed: what, seen }));
  process.exit(1);
};
const check = (cond, what) => {
  if (!cond) fail(what);
};

const models = await client.models.list();
const ids = [];
for await (const m of models) ids.push(m.id);
seen.models = ids;
check(ids.length === 1, "models.list gives the loaded model");
const model = ids[0];

const messages = [
  { role: "system", content: "You tell short stories." },
  { role: "user", content: "Once upon a time" },
];
const plain = await client.chat.completions.create({ model, messages, max_tokens: 24, temperature: 0 });
const text = plain.choices[0].message.content;
seen.chat = { text, finish: plain.choices[0].finish_reason, usage: plain.usage, object: plain.object };
check(plain.object === "chat.completion", "a chat.completion object");
check(typeof text === "string" && text.length > 0, "the answer has text");
check(plain.choices[0].message.role === "assistant", "the assistant's message");
check(plain.usage.completion_tokens === 24 && plain.choices[0].finish_reason === "length", "24 tokens, cut at max_tokens");
check(plain.usage.prompt_tokens > 0 && plain.usage.total_tokens === plain.usage.prompt_tokens + 24, "usage adds up");

const stream = await client.chat.completions.create({
  model, messages, max_tokens: 24, temperature: 0, stream: true, stream_options: { include_usage: true },
});
let streamed = "";
let chunks = 0;
let finish = null;
let streamUsage = null;
for await (const chunk of stream) {
  chunks++;
  if (chunk.usage) streamUsage = chunk.usage;
  for (const c of chunk.choices) {
    streamed += c.delta?.content ?? "";
    if (c.finish_reason) finish = c.finish_reason;
  }
}
seen.stream = { text: streamed, chunks, finish, usage: streamUsage };
check(streamed === text, "the streamed answer equals the plain one (greedy)");
check(finish === "length", "the stream ends with its finish_reason");
check(streamUsage && streamUsage.completion_tokens === 24, "include_usage sends the usage last");
check(streamUsage.prompt_tokens_details.cached_tokens > 0, "the same prompt again reuses its KV cache");

// A stop sequence: a piece of the answer, which then ends before it.
const words = text.trim().split(/\s+/);
const stop = words.length > 2 ? words[2] : words[words.length - 1];
const stopped = await client.chat.completions.create({ model, messages, max_tokens: 24, temperature: 0, stop: [stop] });
const stoppedText = stopped.choices[0].message.content;
seen.stop = { stop, text: stoppedText, finish: stopped.choices[0].finish_reason };
check(!stoppedText.includes(stop) && text.startsWith(stoppedText), "the answer stops before the stop sequence");
check(stopped.choices[0].finish_reason === "stop", "finish_reason stop");

// A stream the client cancels after three chunks.
const long = await client.chat.completions.create({ model, messages, max_tokens: 1000, temperature: 0, stream: true });
let got = 0;
let aborted = false;
try {
  for await (const chunk of long) {
    if (chunk.choices.length) got++;
    if (got === 3) long.controller.abort();
  }
} catch (e) {
  aborted = e instanceof OpenAI.APIUserAbortError || e.name === "AbortError";
}
seen.cancel = { chunks: got, aborted: aborted || long.controller.signal.aborted };
check(long.controller.signal.aborted && got >= 3 && got < 1000, "the client cancelled its stream");

// Errors, as the library raises them.
try {
  await client.chat.completions.create({ model, messages, max_tokens: -1 });
  fail("max_tokens -1 was taken");
} catch (e) {
  seen.badRequest = { status: e.status, type: e.type, param: e.param, message: e.message };
  check(e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === "max_tokens", "a BadRequestError for max_tokens");
}
try {
  await client.chat.completions.create({ model: "gpt-4o", messages, max_tokens: 4 });
  fail("an unknown model was taken");
} catch (e) {
  seen.unknownModel = { status: e.status, code: e.code };
  check(e instanceof OpenAI.NotFoundError && e.code === "model_not_found", "a NotFoundError for an unknown model");
}

// A plain completion.
const comp = await client.completions.create({ model, prompt: "Once upon a time", max_tokens: 8, temperature: 0 });
seen.completion = { text: comp.choices[0].text, usage: comp.usage };
check(comp.object === "text_completion" && comp.usage.completion_tokens === 8, "a text completion of 8 tokens");

console.log(JSON.stringify({ ok: true, seen }));
