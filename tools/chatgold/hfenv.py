"""The Jinja2 environment Hugging Face transformers renders chat templates
in (chat_template_utils), shared by the golden generators here:
ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, the
loopcontrols extension, raise_exception, strftime_now (fixed to
2026-11-29 12:00 so the goldens do not change) and transformers' tojson
(json.dumps with ensure_ascii=False, keys in insertion order)."""

import datetime
import json
import os

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TESTDATA = os.path.join(ROOT, "engine", "chat", "testdata")
NOW = datetime.datetime(2026, 11, 29, 12, 0, 0)
RENDERER = ("python3 jinja2 %s ImmutableSandboxedEnvironment(trim_blocks, lstrip_blocks, loopcontrols), "
            "transformers' tojson/raise_exception, strftime_now = 2026-11-29 12:00" % jinja2.__version__)
TemplateError = jinja2.exceptions.TemplateError


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


# Tools the goldens' conversations offer and call, in Hugging Face's layout.
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


def call(name, args, cid="call_1"):
    """An assistant's tool call."""
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def load(name):
    """The template testdata/NAME, compiled."""
    with open(os.path.join(TESTDATA, name), encoding="utf-8") as f:
        return env.from_string(f.read())


def write(name, out):
    """Writes the golden testdata/NAME as the Go tests read it."""
    path = os.path.join(TESTDATA, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote %d cases, %d error cases to %s" % (len(out["cases"]), len(out["error_cases"]), path))


def golden(source, template, cases, error_cases, **fixed):
    """Renders each case (name, messages, add_generation_prompt, extra
    keyword arguments) with `fixed` (bos_token and the like) and tools
    None unless the case sets them; each error case must raise through
    the template's raise_exception. Returns the golden's JSON object."""
    tmpl = load(template)
    out = {"source": source, "renderer": RENDERER, "cases": [], "error_cases": []}
    for name, msgs, agp, extra in cases:
        kw = dict(fixed)
        kw.setdefault("tools", None)
        kw.update(extra)
        text = tmpl.render(messages=msgs, add_generation_prompt=agp, **kw)
        out["cases"].append({"name": name, "messages": msgs, "add_generation_prompt": agp,
                             "extra_kwargs": extra, "expected": text})
    for name, msgs, agp, extra in error_cases:
        kw = dict(fixed)
        kw.setdefault("tools", None)
        kw.update(extra)
        try:
            tmpl.render(messages=msgs, add_generation_prompt=agp, **kw)
        except TemplateError as e:
            out["error_cases"].append({"name": name, "messages": msgs, "add_generation_prompt": agp,
                                       "extra_kwargs": extra, "expected_error": str(e)})
            continue
        raise SystemExit("error case %s rendered" % name)
    return out
