"""Runs one of seed document 001's snippets (``snippets/NAME.py``: the document's code with the
line breaks and indentation lost in extraction restored, nothing else changed) in a namespace
that a sample prepared, one statement at a time."""

import ast
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def source(name):
    with open(os.path.join(HERE, "snippets", name + ".py"), encoding="utf-8") as f:
        return f.read()


def run(name, ns=None, on_error=None):
    """Execute the snippet's statements in `ns` (a dict, returned). When a statement raises,
    ``on_error(statement_text, exception)`` may return True to go on with the next one (an
    error the sample expects); otherwise the exception propagates."""
    ns = {} if ns is None else ns
    src = source(name)
    for node in ast.parse(src).body:
        code = compile(ast.Module([node], []), f"snippets/{name}.py", "exec")
        try:
            exec(code, ns)
        except Exception as e:
            if on_error is None or not on_error(ast.get_source_segment(src, node), e):
                raise
    return ns
