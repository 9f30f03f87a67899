#!/usr/bin/env python3
"""Renders gpt-oss's Harmony chat template the way Hugging Face transformers
does and writes the golden file engine/chat's Harmony test reads:

    python3 tools/chatgold/harmony.py

Input: engine/chat/testdata/gpt-oss.jinja (the tokenizer.chat_template of
gpt-oss-20b's GGUF, as collected in github.com/ardanlabs/jinja v1.8.0's
testdata). Output: engine/chat/testdata/gpt-oss.golden.json.

The environment is transformers' (chat_template_utils), as hfenv.py sets
it up."""

import hfenv

SRC = "gpt-oss.jinja"
OUT = "gpt-oss.golden.json"


WEATHER, CLOCK, call = hfenv.WEATHER, hfenv.CLOCK, hfenv.call


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
    out = hfenv.golden("gpt-oss-20b GGUF tokenizer.chat_template (github.com/ardanlabs/jinja v1.8.0 testdata)",
                       SRC, CASES, ERROR_CASES, documents=None,
                       bos_token="<|startoftext|>", eos_token="<|return|>")
    hfenv.write(OUT, out)


if __name__ == "__main__":
    main()
