"""The type stubs cover the native module: every public class, function, method and property it
has is declared in lathe/_lathe.pyi (and nothing there is missing from the module)."""

import ast
import os

import lathe
from lathe import _lathe

STUBS = os.path.join(os.path.dirname(lathe.__file__), "_lathe.pyi")


def declared():
    tree = ast.parse(open(STUBS).read())
    classes, names = {}, set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AnnAssign)) and hasattr(n, "name")} | {
                n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
            names.add(node.name)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
    return classes, names


def public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def test_every_native_name_is_declared():
    classes, names = declared()
    missing = public(_lathe) - names - {"dtypes"} | ({"dtypes"} - names)
    assert not missing, f"not in _lathe.pyi: {sorted(missing)}"
    for cls in ("Tensor", "Plan", "KernelProfile", "DType", "SInt", "Variable", "Session"):
        undeclared = public(getattr(_lathe, cls)) - classes[cls]
        assert not undeclared, f"{cls} members not in _lathe.pyi: {sorted(undeclared)}"
        stale = {n for n in classes[cls] if not n.startswith("_")} - public(getattr(_lathe, cls))
        assert not stale, f"{cls} members in _lathe.pyi the module lacks: {sorted(stale)}"


def test_every_dtype_is_declared():
    classes, _ = declared()
    assert public(_lathe.dtypes) <= classes["_DTypes"]


def test_every_native_member_has_a_docstring():
    undocumented = []
    for cls in ("Tensor", "Plan", "KernelProfile", "DType", "SInt", "Variable", "Session"):
        c = getattr(_lathe, cls)
        for name in public(c):
            member = getattr(c, name)
            doc = (getattr(member, "__doc__", "") or "").strip()
            if isinstance(member, property):
                has = bool(doc)
            else:  # pybind11 puts the signature first: the text after it is the docstring
                has = len([line for line in doc.split("\n") if line.strip()]) >= 2
            if not has:
                undocumented.append(f"{cls}.{name}")
    assert not undocumented, f"no docstring: {undocumented}"
