#!/usr/bin/env python3
"""Check a file against Prometheus' text exposition format (version 0.0.4,
as node_exporter's textfile collector reads it), independently of the
code that wrote it, and print its samples as JSON:
{"name": [{"labels": {...}, "value": float}, ...], ...}.

Rules checked: every line is a HELP, a TYPE, another comment or a sample;
names and label names match the format's patterns; label values use only
the escapes \\\\, \\" and \\n; HELP and TYPE at most once per metric and
before its samples; a metric's samples are one contiguous group; no series
(name and labels) twice; values parse as floats; the file ends in a
newline.  Exit 1 with the first problem on stderr.
"""
import json
import re
import sys

NAME = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*')
LABEL = re.compile(r'[a-zA-Z_][a-zA-Z0-9_]*')
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


def bad(lineno, why):
    print("line %d: %s" % (lineno, why), file=sys.stderr)
    sys.exit(1)


def parse_labels(s, i, lineno):
    labels = {}
    assert s[i] == '{'
    i += 1
    while True:
        if s[i] == '}':
            return labels, i + 1
        m = LABEL.match(s, i)
        if not m:
            bad(lineno, "bad label name at %r" % s[i:])
        name = m.group(0)
        i = m.end()
        if s[i:i + 2] != '="':
            bad(lineno, "label %s: no =\"" % name)
        i += 2
        value = []
        while True:
            if i >= len(s):
                bad(lineno, "unterminated label value")
            c = s[i]
            if c == '\\':
                esc = s[i + 1:i + 2]
                if esc not in ('\\', '"', 'n'):
                    bad(lineno, "bad escape \\%s" % esc)
                value.append('\n' if esc == 'n' else esc)
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == '\n':
                bad(lineno, "newline in a label value")
            else:
                value.append(c)
                i += 1
        if name in labels:
            bad(lineno, "label %s twice" % name)
        labels[name] = ''.join(value)
        if s[i] == ',':
            i += 1
        elif s[i] != '}':
            bad(lineno, "expected , or } after label %s" % name)


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    if not text.endswith("\n"):
        bad(text.count("\n") + 1, "no newline at the end")
    helps, types, samples, series = set(), {}, {}, set()
    current, done = None, set()
    for lineno, line in enumerate(text.split("\n")[:-1], 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not NAME.fullmatch(name):
                    bad(lineno, "bad metric name %r" % name)
                if name in samples:
                    bad(lineno, "%s of %s after its samples" % (parts[1], name))
                if parts[1] == "HELP":
                    if name in helps:
                        bad(lineno, "HELP of %s twice" % name)
                    helps.add(name)
                else:
                    if name in types:
                        bad(lineno, "TYPE of %s twice" % name)
                    if len(parts) < 4 or parts[3] not in TYPES:
                        bad(lineno, "bad TYPE %r" % line)
                    types[name] = parts[3]
            continue
        m = NAME.match(line)
        if not m:
            bad(lineno, "not a sample: %r" % line)
        name, i = m.group(0), m.end()
        labels = {}
        if i < len(line) and line[i] == '{':
            labels, i = parse_labels(line, i, lineno)
        rest = line[i:].split()
        if not line[i:i + 1] == ' ' or len(rest) not in (1, 2):
            bad(lineno, "expected ' VALUE [TIMESTAMP]' after %s" % name)
        try:
            value = float(rest[0])
        except ValueError:
            bad(lineno, "value %r is not a float" % rest[0])
        if len(rest) == 2 and not re.fullmatch(r'-?[0-9]+', rest[1]):
            bad(lineno, "bad timestamp %r" % rest[1])
        if name != current:
            if name in done:
                bad(lineno, "samples of %s are not together" % name)
            if current:
                done.add(current)
            current = name
        key = (name, tuple(sorted(labels.items())))
        if key in series:
            bad(lineno, "series %s%s twice" % (name, labels))
        series.add(key)
        samples.setdefault(name, []).append({"labels": labels, "value": value})
    json.dump(samples, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
