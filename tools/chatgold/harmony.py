#!/usr/bin/env python3
"""Renders gpt-oss's Harmony chat template the way Hugging Face transformers
does and writes the golden file engine/chat's Harmony test reads:

    python3 tools/chatgold/harmony.py

Input: engine/chat/testdata/gpt-oss.jinja (the tokenizer.chat_template of
gpt-oss-20b's GGUF, as collected in github.com/ardanlabs/jinja v1.8.0's
testdata). Output: engine/chat/testdata/gpt-oss.golden.json.

The environment is transformers' (chat_template_utils): jinja2's
ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, the
loopcontrols extension, raise_exception, strftime_now (fixed here to
2026-11-29 12:00 so the goldens do not change) and its tojson
(json.dumps with ensure_ascii=False, keys in insertion order)."""

import datetime
import json
import os

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SRC = os.path.join(ROOT, "engine", "chat", "testdata", "gpt-oss.jinja")
OUT = os.path.join(ROOT, "engine", "chat", "testdata", "gpt-oss.golden.json")
NOW = datetime.datetime(2026, 11, 29, 12, 0, 0)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(fmt):
    return NOW.strftime(fmt)


env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = strftime_now

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city name."},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
                "days": {"type": "integer", "description": "Forecast days."},
            },
            "required": ["city"],
        },
    },
}
CLOCK = {
    "type": "function",
    "function": {"name": "get_time", "description": "Current time.", "parameters": {"type": "object", "properties": {}}},
}


def call(name, args):
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": args}}


CASES = [
    ("single_user", [{"role": "user", "content": "Hello, how are you?"}], True, {}),
    ("system_and_user", [
        {"role": "system", "content": "You are a terse assistant."},
        {"role": "user", "content": "What is 2+2?"},
    ], True, {}),
    ("developer_and_user", [
        {"role": "developer", "content": "Answer in one word."},
        {"role": "user", "content": "Capital of France?"},
    ], True, {"reasoning_effort": "high"}),
    ("multi_turn_reasoning_dropped", [
        {"role": "user", "content": "Pick a number."},
        {"role": "assistant", "content": "Seven.", "thinking": "The user wants any number; seven is fine."},
        {"role": "user", "content": "Why that one?"},
    ], True, {}),
    ("korean", [
        {"role": "system", "content": "항상 한국어로 답하세요."},
        {"role": "user", "content": "안녕하세요! 서울 날씨 어때요?"},
        {"role": "assistant", "content": "맑고 따뜻해요. 🌤️", "thinking": "사용자가 날씨를 묻는다."},
        {"role": "user", "content": "고마워요.\n내일은요?"},
    ], True, {"reasoning_effort": "low"}),
    ("tool_call_pending", [
        {"role": "user", "content": "Weather in Seoul?"},
        {"role": "assistant", "content": "", "thinking": "I should call get_weather.",
         "tool_calls": [call("get_weather", {"city": "Seoul", "unit": "celsius"})]},
        {"role": "tool", "content": "{\"temp\": 21, \"sky\": \"clear\"}"},
    ], True, {"tools": [WEATHER, CLOCK]}),
    ("tool_call_then_final", [
        {"role": "user", "content": "Weather in Seoul?"},
        {"role": "assistant", "content": "", "thinking": "Call the tool.",
         "tool_calls": [call("get_weather", {"city": "Seoul"})]},
        {"role": "tool", "content": "sunny, 21°C"},
        {"role": "assistant", "content": "It is sunny and 21°C in Seoul.", "thinking": "Report it."},
        {"role": "user", "content": "And tomorrow?"},
    ], True, {"tools": [WEATHER]}),
    ("assistant_last_training_form", [
        {"role": "user", "content": "Say hi."},
        {"role": "assistant", "content": "Hi!", "thinking": "Greet back."},
    ], False, {"model_identity": "You are Churon's test model."}),
    ("builtin_tools", [
        {"role": "user", "content": "Search for the news."},
    ], True, {"builtin_tools": ["browser", "python"]}),
    ("code_markdown", [
        {"role": "user", "content": "Write hello world in Go.\n```go\npackage main\n```"},
        {"role": "assistant", "content": "```go\npackage main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hi\") }\n```"},
        {"role": "user", "content": "Now in C, with <stdio.h> & {braces}."},
    ], True, {}),
]

ERROR_CASES = [
    ("channel_tags_in_content", [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": "<|channel|>final<|message|>y"},
    ], True, {}),
    ("tool_without_call", [
        {"role": "user", "content": "x"},
        {"role": "tool", "content": "y"},
    ], True, {}),
]


def main():
    with open(SRC, encoding="utf-8") as f:
        src = f.read()
    tmpl = env.from_string(src)
    out = {
        "source": "gpt-oss-20b GGUF tokenizer.chat_template (github.com/ardanlabs/jinja v1.8.0 testdata)",
        "renderer": "python3 jinja2 %s ImmutableSandboxedEnvironment(trim_blocks, lstrip_blocks, loopcontrols), "
                    "transformers' tojson/raise_exception, strftime_now = 2026-11-29 12:00" % jinja2.__version__,
        "cases": [],
        "error_cases": [],
    }
    for name, msgs, agp, extra in CASES:
        kw = dict(extra)
        kw.setdefault("tools", None)
        text = tmpl.render(messages=msgs, add_generation_prompt=agp, documents=None,
                           bos_token="<|startoftext|>", eos_token="<|return|>", **kw)
        out["cases"].append({"name": name, "messages": msgs, "add_generation_prompt": agp,
                             "extra_kwargs": extra, "expected": text})
    for name, msgs, agp, extra in ERROR_CASES:
        try:
            tmpl.render(messages=msgs, add_generation_prompt=agp, tools=None, documents=None, **extra)
        except jinja2.exceptions.TemplateError as e:
            out["error_cases"].append({"name": name, "messages": msgs, "add_generation_prompt": agp,
                                       "extra_kwargs": extra, "expected_error": str(e)})
            continue
        raise SystemExit("error case %s rendered" % name)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote %d cases, %d error cases to %s" % (len(out["cases"]), len(out["error_cases"]), OUT))


if __name__ == "__main__":
    main()
