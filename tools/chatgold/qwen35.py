#!/usr/bin/env python3
"""Renders Qwen 3.5's chat template the way Hugging Face transformers does
and writes the golden file engine/chat's Qwen 3.5 test reads:

    python3 tools/chatgold/qwen35.py

Input: engine/chat/testdata/qwen3.5.jinja (llama.cpp v0.5.0's
models/templates/Qwen3.5-4B.jinja: Qwen3.5-4B's tokenizer chat_template, as
node-llama-cpp 3.22.1's llama/gitRelease.bundle carries it; see
engine/chat/testdata/README.md). Output: engine/chat/testdata/qwen3.5.golden.json,
in the layout of the shared templates/chat_template.*.json goldens.

The cases cover what the app sends: thinking on (the default: the prompt
ends in an open <think>) and off (enable_thinking false: an empty think
block), a system message (trimmed), several turns whose earlier reasoning
is dropped (from reasoning_content or from <think> in the content), the
reasoning after the last user turn kept, Korean, code, and tool calls and
results; error cases the template raises on."""

import hfenv

SRC = "qwen3.5.jinja"
OUT = "qwen3.5.golden.json"

OFF = {"enable_thinking": False}
ON = {"enable_thinking": True}

WEATHER, CLOCK, call = hfenv.WEATHER, hfenv.CLOCK, hfenv.call


def user(text):
    return {"role": "user", "content": text}


def assistant(text, reasoning=None, calls=None):
    m = {"role": "assistant", "content": text}
    if reasoning is not None:
        m["reasoning_content"] = reasoning
    if calls is not None:
        m["tool_calls"] = calls
    return m


SYSTEM = {"role": "system", "content": "  You are a terse assistant.\n"}
EARLIER = [
    user("Pick a number."),
    assistant("Seven.", "The user wants any number; seven is fine."),
    user("Why that one?"),
]
INLINE = [
    user("Pick a colour."),
    assistant("<think>\nAny colour will do.\n</think>\n\nBlue."),
    user("And a second?"),
]
KOREAN = [
    {"role": "system", "content": "항상 한국어로 답하세요."},
    user("안녕하세요! 서울 날씨 어때요?"),
    assistant("맑고 따뜻해요. 🌤️", "사용자가 날씨를 묻는다."),
    user("고마워요.\n내일은요?"),
]
TOOL_ROUND = [
    user("Weather in Seoul and Busan?"),
    assistant("", "Call the tool for both cities.", [
        call("get_weather", {"city": "Seoul", "unit": "celsius"}),
        call("get_weather", {"city": "Busan", "days": 2, "opts": {"hourly": True}, "tags": ["a", "b"]}, "call_2"),
    ]),
    {"role": "tool", "content": "{\"temp\": 21}", "tool_call_id": "call_1"},
    {"role": "tool", "content": "{\"temp\": 24}", "tool_call_id": "call_2"},
]

CASES = []
for agp_extra in ({}, OFF, ON):
    CASES.append(("single_user", [user("Hello, how are you?")], True, agp_extra))
    CASES.append(("system_and_user", [SYSTEM, user("What is 2+2?")], True, agp_extra))
    CASES.append(("multi_turn_earlier_reasoning", EARLIER, True, agp_extra))
CASES += [
    ("multi_turn_inline_think", INLINE, True, {}),
    ("multi_turn_inline_think", INLINE, True, OFF),
    ("korean", KOREAN, True, OFF),
    ("korean", KOREAN, True, {}),
    ("assistant_last_keeps_reasoning", [user("Say hi."), assistant("Hi!", "Greet back.")], False, {}),
    ("assistant_last_no_reasoning", [SYSTEM, user("Say hi."), assistant("Hi!")], False, OFF),
    ("assistant_last_inline_think", [user("Say hi."), assistant("<think>\n\nGreet.\n\n</think>\n\n  Hi!  ")], False, {}),
    ("code_markdown", [
        user("Write hello world in Go.\n```go\npackage main\n```"),
        assistant("```go\npackage main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hi\") }\n```"),
        user("  Now in C, with <stdio.h> & {braces}.  "),
    ], True, OFF),
    ("tools_no_call", [SYSTEM, user("Weather in Seoul?")], True, {"tools": [WEATHER, CLOCK]}),
    ("tools_no_system", [user("Weather in Seoul?")], True, dict(OFF, tools=[WEATHER])),
    ("tool_calls_answered", TOOL_ROUND, True, {"tools": [WEATHER]}),
    ("tool_calls_then_final", TOOL_ROUND + [
        assistant("Seoul 21°C, Busan 24°C.", "Report both."),
        user("Thanks!"),
    ], True, dict(OFF, tools=[WEATHER])),
    ("tool_call_with_text", [
        user("Weather?"),
        assistant("Let me check.", None, [call("get_weather", {"city": "Seoul"})]),
        {"role": "tool", "content": "sunny"},
    ], True, {}),
]

ERROR_CASES = [
    ("no_messages", [], True, {}),
    ("system_not_first", [user("x"), {"role": "system", "content": "y"}], True, {}),
    ("no_user_query", [{"role": "system", "content": "only a system message"}], True, {}),
    ("unknown_role", [user("x"), {"role": "narrator", "content": "y"}], True, {}),
]


def main():
    out = hfenv.golden("Qwen3.5-4B tokenizer chat_template (llama.cpp v0.5.0 models/templates/Qwen3.5-4B.jinja)",
                       SRC, CASES, ERROR_CASES, bos_token=None, eos_token="<|im_end|>")
    out["bos_token"] = None
    out["eos_token"] = "<|im_end|>"
    hfenv.write(OUT, out)


if __name__ == "__main__":
    main()
