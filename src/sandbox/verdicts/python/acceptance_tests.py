# The test functions the user's Python acceptance files define, read with Python's own parser: nothing
# of them is imported or run. Run on the worker's host (verdicts/acceptance.ts) as
# `python -I -c <this file's text> <relative path> <full path>...`; prints
# {"ids": [...], "maySkip": [...]} as JSON: the ids as pytest names them, and those whose original
# asks for a skip or an expected failure.

import ast, json, re, sys
asks = re.compile(r"skip|xfail|marks\s*=", re.I)
ids = []
may = []
functions = (ast.FunctionDef, ast.AsyncFunctionDef)
for rel, full in zip(sys.argv[1::2], sys.argv[2::2]):
    with open(full, "rb") as f:
        source = f.read()
    tree = ast.parse(source, full)
    text = source.decode("utf-8", "replace")
    def segment(node):
        return ast.get_source_segment(text, node) or ""
    def marked(node):
        return any(asks.search(segment(d)) for d in getattr(node, "decorator_list", []))
    def pytestmark(body):
        return any(isinstance(n, (ast.Assign, ast.AnnAssign)) and "pytestmark" in segment(n) and asks.search(segment(n)) for n in body)
    helpers = [n for n in ast.walk(tree) if isinstance(n, functions) and not n.name.startswith("test")]
    whole = pytestmark(tree.body) or any(asks.search(segment(n)) for n in helpers) or any(
        isinstance(n, ast.Expr) and asks.search(segment(n)) for n in tree.body)
    for node in tree.body:
        if isinstance(node, functions) and node.name.startswith("test"):
            ids.append(rel + "::" + node.name)
            if whole or marked(node) or asks.search(segment(node)):
                may.append(ids[-1])
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test") or isinstance(node, ast.ClassDef) and any(
                isinstance(b, functions) and b.name.startswith("test") for b in node.body):
            if any(isinstance(b, functions) and b.name == "__init__" for b in node.body):
                continue
            visible = node.name.startswith("Test")
            cls = whole or marked(node) or pytestmark(node.body)
            for b in node.body:
                if isinstance(b, functions) and b.name.startswith("test"):
                    test_id = rel + "::" + node.name + "::" + b.name
                    if visible:
                        ids.append(test_id)
                    if cls or marked(b) or asks.search(segment(b)):
                        may.append(test_id)
print(json.dumps({"ids": ids, "maySkip": may}))
