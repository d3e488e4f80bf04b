# SPDX-License-Identifier: GPL-2.0-only
"""The package's shape (sweep/tswap/__init__.py, docs/design.md "The
sweep"): a layer imports only from the layers before it in
plan -> executor -> results -> stats -> report (cli drives them all), no
import cycle, and no module-level mutable state."""
import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / 'sweep' / 'tswap'
ORDER = ['plan', 'executor', 'results', 'stats', 'report']


def modules():
    for f in sorted(PKG.rglob('*.py')):
        rel = f.relative_to(PKG)
        layer = rel.parts[0] if len(rel.parts) > 1 else None
        yield f, layer, ast.parse(f.read_text(), str(f))


def imported_layers(f, tree):
    """The tswap layers a module imports (relative or absolute)."""
    rel = f.relative_to(PKG)
    depth = len(rel.parts) - 1
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel.parts[:-1])[:max(depth - (node.level - 1), 0)]
                parts = base + (node.module.split('.') if node.module else [])
                names = [parts] if node.module else [base + [a.name] for a in node.names]
            elif node.module and node.module.split('.')[0] == 'tswap':
                names = [node.module.split('.')[1:]]
            else:
                continue
            for p in names:
                if p and p[0] in ORDER + ['cli']:
                    yield p[0]
        elif isinstance(node, ast.Import):
            for a in node.names:
                p = a.name.split('.')
                if p[0] == 'tswap' and len(p) > 1 and p[1] in ORDER + ['cli']:
                    yield p[1]


def test_layers_import_only_from_the_layers_before_them():
    bad = []
    for f, layer, tree in modules():
        if layer not in ORDER:
            continue
        for other in imported_layers(f, tree):
            if other == 'cli' or ORDER.index(other) > ORDER.index(layer):
                bad.append('%s imports tswap.%s' % (f.relative_to(PKG), other))
    assert bad == []


def test_top_level_modules_import_no_layer_but_cli():
    # jqjson is the base every layer shares
    for f, layer, tree in modules():
        if layer is None:
            assert list(imported_layers(f, tree)) == [], f


MUTABLE = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)


def test_no_module_level_mutable_state():
    # module-level names bind constants (tuples, frozensets, strings,
    # numbers, functions), never a list, dict or set a call could change;
    # a mapping constant is wrapped in types.MappingProxyType
    bad = []
    for f, _, tree in modules():
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, MUTABLE):
                bad.append('%s:%d' % (f.relative_to(PKG), node.lineno))
    assert bad == []
