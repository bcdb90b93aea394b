"""Fingerprint the code that decides a claim's verdict, so that a changed decision is a changed version.

``code_fingerprint`` hashes the claim module, every project definition it reaches through its imports
(breadth first; the engine's modules and ``Engine.stop`` not entered) and the core's decision rule
(``CORE_ENTRIES``), each definition's syntax without docstrings, comments, formatting and annotations,
references numbered in the order met (docs/protocols.md, "The fingerprint: what decides"). The same walk
names one decision (``definition_fingerprint``, ``decision_identity``). Pure: nothing here imports pytest
or runs the code it reads; what is parsed and hashed is cached per process until a file read changes."""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import importlib.util
import inspect
import json
import linecache
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claimcheck.errors import ConfigError
from claimcheck.files import import_base, module_file
from claimcheck.protocol.spec import LATER, ClaimProtocol, Control, Part, Seeds, Stat

SCHEME = "claimcheck-code/2"  # names the hashing scheme; a ledger entry of another scheme never matches
# /2: protocol values name no callable by its module path (a moved or renamed decision keeps its fingerprint)
CORE = "claimcheck"
CORE_ENTRIES = (
    "claimcheck.decide.verdicts.decide",
    "claimcheck.decide.record.ClaimRecorder",
    "claimcheck.decide.record.Check",
)
CORE_STOPS = ("claimcheck.provenance.fingerprint",)  # names code (Part.decision_id), decides nothing: not entered
PROSE = frozenset({"statement", "why", "regime", "horizon", "exploratory"})  # protocol fields that decide nothing
_PROTOCOL_TYPES = (ClaimProtocol, Part, Stat, Control, Seeds)
_IGNORED_FIELDS = frozenset({"ctx", "type_comment", "type_params", "kind", "annotation", "returns"})
_REF = re.compile("\u27e6([^\u27e7]*)\u27e7")


@dataclass(frozen=True)
class Engine:
    """What a suite declares about its code (the ``pytest_claimcheck_engine`` hook)."""

    packages: tuple[str, ...] = ()  # the suite's own top-level packages: the walk follows them
    modules: tuple[str, ...] = ()  # the engine's modules (each named exactly): the walk stops there
    stop: tuple[str, ...] = ()  # other modules not entered (calibration cases), submodules included
    decides: tuple[str, ...] = ()  # module.name definitions in engine modules that decide: followed anyway
    identity: str = ""  # the engine's identity, shown beside each verdict


NO_ENGINE = Engine()


@dataclass(frozen=True)
class CodeFingerprint:
    """The hash over what decides a claim, and the definitions it covers (by module path, for people)."""

    digest: str
    covers: tuple[str, ...]  # the project definitions hashed, e.g. qin2025.c1.linear_rate.rate_profile
    stops: tuple[str, ...] = field(default=())  # engine and stop-listed names the walk met and did not enter

    @property
    def short(self) -> str:
        return self.digest[:12]


def decides(value: Any) -> Any:
    """Return ``value`` (a protocol, or a part of one) as plain data without its prose (``PROSE``), a field marked
    ``LATER`` only when it differs from its default."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if f.name in PROSE or (f.metadata.get(LATER) and v == f.default):
                continue
            if f.name == "premise":
                out[f.name] = bool(v)
            elif f.name == "decision_id":
                out[f.name] = str(v).rsplit(" ", 1)[-1]  # its digest: the name before it says where the code lives
            else:
                out[f.name] = decides(v)
        return out
    if isinstance(value, Mapping):
        return {str(k): decides(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple | set | frozenset):
        items = [decides(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, set | frozenset) else items
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if callable(value):
        return "callable"  # not by name or module: a move or a rename decides nothing (its code counts elsewhere)
    return repr(value)


# --- modules ------------------------------------------------------------------------------------


@dataclass
class _Module:
    """One parsed module: its top-level statements, the names each binds, and its imports."""

    name: str
    path: Path
    statements: list[ast.stmt]
    binders: dict[str, list[int]]  # name -> indices of the statements that bind it
    imports: dict[str, str]  # local name -> qualified name it imports (a module, or module.attr)
    order: list[tuple[int, tuple[str, ...]]]  # (statement index, names it binds), in source order


def _bound(target: ast.AST) -> Iterator[str]:
    for node in ast.walk(target):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node.id


def _binds(stmt: ast.stmt) -> tuple[str, ...]:
    """Return the names a top-level statement binds (not its imports)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return (stmt.name,)
    if isinstance(stmt, ast.Assign):
        return tuple(n for t in stmt.targets for n in _bound(t))
    if isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        return tuple(_bound(stmt.target))
    if isinstance(stmt, ast.For | ast.AsyncFor | ast.With | ast.AsyncWith | ast.If | ast.Try | ast.While):
        names = []
        for node in _walk_scope(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.append(node.id)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.append(node.name)  # a definition made under a condition
        return tuple(dict.fromkeys(names))
    return ()


def _import_targets(stmt: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> dict[str, str]:
    if isinstance(stmt, ast.Import):  # ``import a.b`` binds ``a``; ``import a.b as c`` binds ``c`` to ``a.b``
        return dict((a.asname, a.name) if a.asname else (a.name.split(".")[0],) * 2 for a in stmt.names)
    base = import_base(stmt, module, is_package)
    return {a.asname or a.name: f"{base}.{a.name}" if base else a.name for a in stmt.names if a.name != "*"}


def _flatten(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Yield top-level statements, entering ``if``/``try`` blocks (say ``if TYPE_CHECKING:``) for their imports."""
    for stmt in body:
        if isinstance(stmt, ast.If | ast.Try) and any(
            isinstance(s, ast.Import | ast.ImportFrom) for s in ast.walk(stmt)
        ):
            inner = [*stmt.body, *getattr(stmt, "orelse", []), *getattr(stmt, "finalbody", [])]
            inner += [s for h in getattr(stmt, "handlers", []) for s in h.body]
            yield from _flatten(inner)
        else:
            yield stmt


def _parse(name: str, path: Path, source: bytes) -> _Module:
    tree = ast.parse(source, filename=str(path))
    module = _Module(name, path, [], {}, {}, [])
    for stmt in _flatten(tree.body):
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            module.imports.update(_import_targets(stmt, name, path.name == "__init__.py"))
        elif not _is_doc(stmt):
            module.statements.append(stmt)
            names = _binds(stmt)
            for n in names:
                module.binders.setdefault(n, []).append(len(module.statements) - 1)
            module.order.append((len(module.statements) - 1, names))
    return module


_PARSED: dict[tuple[str, Path], tuple[bytes, _Module]] = {}  # (module, file) -> (its source, parsed)
_TEXTS: dict[tuple[Engine, Path, str, Path], tuple[str, list[str]]] = {}  # definitions outside claim modules


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _forget_changed() -> None:
    """Drop everything parsed and hashed when a file read before has changed (by content: mtimes can tie)."""
    if any(_read(path) != source for (_, path), (source, _) in _PARSED.items()):
        _PARSED.clear()
        _TEXTS.clear()


def _module(name: str, path: Path) -> _Module:
    if (hit := _PARSED.get((name, path))) is None:
        source = path.read_bytes()
        hit = _PARSED[(name, path)] = (source, _parse(name, path, source))
    return hit[1]


def _package_root(top: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve().parent


def _within(module: str, prefixes: Sequence[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


# --- the walk -----------------------------------------------------------------------------------


class _Resolver:
    """Resolve names to project definitions, and hash each definition once (per scope of the walk)."""

    def __init__(self, engine: Engine, local_root: Path, claim: tuple[str, Path], source: bytes | None = None) -> None:
        self.engine = engine
        self.packages = (CORE, *engine.packages)
        self.local_root = local_root
        self.claim = claim
        # the claim module's source where it is no file (a notebook cell, read from linecache): parsed here
        self.unfiled = None if source is None else _parse(claim[0], claim[1], source)
        self.hashed: dict[str, tuple[str, list[str]]] = {}  # this claim module's definitions
        self.files: dict[str, Path | None] = {}
        self.roots: dict[str, Path | None] = {}

    def file_of(self, module: str) -> Path | None:
        if module == self.claim[0]:
            return self.claim[1]
        if module not in self.files:
            top = module.split(".")[0]
            if top in self.packages and top not in self.roots:
                self.roots[top] = _package_root(top)
            root = self.roots[top] if top in self.packages else self.local_root
            self.files[module] = None if root is None else module_file(module, root)
        return self.files[module]

    def resolve(self, qualified: str, seen: frozenset[str] = frozenset()) -> str:
        """Return the token a qualified name (``pkg.mod.name.attr``) stands for.

        ``⟦module:name⟧`` for a project definition (followed), ``engine:name`` / ``stop:name`` where
        the walk stops, ``module:`` for a project module, ``ext:pkg.name`` outside the project."""
        parts = qualified.split(".")
        for i in range(len(parts), 0, -1):
            module = ".".join(parts[:i])
            if self.file_of(module) is None:
                continue
            if i == len(parts):
                return "module:"
            token = self.resolve_in(module, parts[i], seen)
            return ".".join([token, *parts[i + 1 :]])
        return f"ext:{qualified}"

    def resolve_in(self, module: str, name: str, seen: frozenset[str] = frozenset()) -> str:
        """Return the token of ``name`` looked up in ``module`` from another module (through its imports)."""
        key = f"{module}.{name}"
        if module in self.engine.modules and key not in self.engine.decides:
            return f"engine:{name}"
        if _within(module, self.engine.stop):
            return f"stop:{name}"
        if _within(module, CORE_STOPS):
            return f"core:{name}"
        path = self.file_of(module)
        assert path is not None
        mod = self.parsed(module, path)
        if name in mod.binders:
            return f"\u27e6{module}:{name}\u27e7"
        if name in mod.imports and key not in seen:
            return self.resolve(mod.imports[name], seen | {key})
        if self.file_of(key) is not None:
            return "module:"
        return f"unresolved:{key}"

    def local(self, module: _Module, name: str) -> str | None:
        """Return the token of a module-level ``name`` used inside ``module``, or None for a builtin."""
        if name in module.binders:
            return f"\u27e6{module.name}:{name}\u27e7"
        if name in module.imports:
            return self.resolve(module.imports[name])
        return None

    def parsed(self, module: str, path: Path) -> _Module:
        if self.unfiled is not None and module == self.claim[0]:
            return self.unfiled
        return _module(module, path)

    def definition(self, key: str, namespace: Mapping[str, Any] | None) -> tuple[str, list[str]]:
        """Return a definition's normalised text (references as ``⟦key⟧``) and the keys it references, in order."""
        module_name, name = key.split(":", 1)
        own = module_name == self.claim[0] and (namespace is not None or self.unfiled is not None)  # not shared
        path = self.file_of(module_name)
        assert path is not None
        shared = (self.engine, self.local_root, key, path)
        if (hit := self.hashed.get(key) if own else _TEXTS.get(shared)) is not None:
            return hit
        mod = self.parsed(module_name, path)
        value = namespace.get(name) if own and namespace is not None else None
        if isinstance(value, _PROTOCOL_TYPES):
            text = "value:" + json.dumps(decides(value), sort_keys=True)
        else:
            indices = mod.binders[name] if not name.startswith("#") else [int(name[1:])]
            # each statement as plain data, its own name left out (a rename changes nothing)
            plain = (_Serialiser(mod, self).emit(mod.statements[i], own_name=True) for i in indices)
            text = "\n".join(json.dumps(p, separators=(",", ":"), ensure_ascii=False) for p in plain)
        refs = list(dict.fromkeys(_REF.findall(text)))
        if own:
            self.hashed[key] = (text, refs)
        else:
            _TEXTS[shared] = (text, refs)
        return text, refs


def _is_doc(stmt: ast.AST) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """Yield the nodes of one scope: nested functions, lambdas and classes are yielded but not entered."""
    yield node
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
        return
    for child in ast.iter_child_nodes(node):
        yield from _walk_scope(child)


Plain = Any  # a syntax tree as nested lists and dicts of JSON values


class _Serialiser:
    """Write a definition's tree as plain data: names resolved to tokens; docstrings, imports and annotations out."""

    def __init__(self, module: _Module, resolver: _Resolver) -> None:
        self.module = module
        self.resolver = resolver
        self.scopes: list[tuple[str, dict[str, str | None]]] = []  # (kind, name -> what a local import names)

    def _visible(self) -> Iterator[dict[str, str | None]]:
        for i, (kind, names) in enumerate(reversed(self.scopes)):
            if kind != "class" or i == 0:  # a class body's names are not visible in its methods
                yield names

    def _lookup(self, name: str) -> str | None:
        """Return the token a name stands for: a local import's, the module's, or None (local or builtin)."""
        for names in self._visible():
            if name in names:
                target = names[name]
                return None if target is None else self.resolver.resolve(target)
        return self.resolver.local(self.module, name)

    def _qualified(self, name: str) -> str | None:
        """Return the qualified name a local or module-level import gave ``name``."""
        return next((names[name] for names in self._visible() if name in names), self.module.imports.get(name))

    def _scope(self, kind: str, body: Sequence[ast.AST], params: Sequence[str]) -> dict[str, str | None]:
        names: dict[str, str | None] = dict.fromkeys(params)
        for stmt in body:
            for sub in _walk_scope(stmt):
                if isinstance(sub, ast.Import | ast.ImportFrom):
                    names.update(_import_targets(sub, self.module.name, False))
                elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    names.setdefault(sub.id, None)
                elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and sub is not stmt:
                    names.setdefault(sub.name, None)
                elif isinstance(sub, ast.Global):
                    for n in sub.names:
                        names.pop(n, None)
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.setdefault(stmt.name, None)
        return names

    def emit(self, node: Any, own_name: bool = False) -> Plain:
        if isinstance(node, list):
            return [self.emit(v) for v in node if not (_is_doc(v) or isinstance(v, ast.Import | ast.ImportFrom))]
        if not isinstance(node, ast.AST):
            if isinstance(node, str):
                return node.replace("\u27e6", "\\u27e6")  # a bracket in the source is no reference
            return repr(node) if isinstance(node, bytes | complex) or node is Ellipsis else node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return self._function(node, own_name)
        if isinstance(node, ast.ClassDef):
            return self._class(node, own_name)
        if isinstance(node, ast.Name):
            token = self._lookup(node.id) if isinstance(node.ctx, ast.Load) else None
            return ["Name", token or node.id]
        if isinstance(node, ast.Attribute) and (resolved := self._attribute(node)) is not None:
            return ["Name", resolved]
        if isinstance(node, ast.AnnAssign):
            return ["AnnAssign", {"target": self.emit(node.target), "value": self.emit(node.value)}]
        if isinstance(node, ast.arg):
            return ["arg", node.arg]
        if isinstance(node, ast.comprehension) and self.scopes:
            for n in _bound(node.target):
                self.scopes[-1][1].setdefault(n, None)
        fields = self._fields(node)
        if isinstance(node, ast.Call) and fields.get("func") == ["Name", "ext:pytest.mark.claim"]:
            fields["args"] = fields.get("args", [])[:1]  # the claim id; its title and source are prose
            fields["keywords"] = [k for k in fields.get("keywords", []) if k[1].get("arg") not in ("title", "source")]
        return [type(node).__name__, fields]

    def _fields(self, node: ast.AST, skip: frozenset[str] = frozenset()) -> dict[str, Plain]:
        ignored = _IGNORED_FIELDS | skip
        return {k: self.emit(v) for k, v in ast.iter_fields(node) if k not in ignored and v is not None and v != []}

    def _attribute(self, node: ast.Attribute) -> str | None:
        """Return the token of a dotted name over an imported module (``np.linalg.norm``), else None."""
        chain: list[str] = []
        base: ast.AST = node
        while isinstance(base, ast.Attribute):
            chain.insert(0, base.attr)
            base = base.value
        if not (isinstance(base, ast.Name) and isinstance(node.ctx, ast.Load)):
            return None
        token = self._lookup(base.id)
        qualified = self._qualified(base.id)
        if token is None or qualified is None or not (token.startswith("ext:") or token == "module:"):
            return None
        return self.resolver.resolve(".".join([qualified, *chain]))

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, own_name: bool) -> Plain:
        a = node.args
        params = [x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x is not None]
        out: dict[str, Plain] = {"args": self._fields(a, frozenset({"defaults", "kw_defaults"}))}
        out["defaults"] = self.emit(list(a.defaults)) + [self.emit(d) for d in a.kw_defaults]
        body: list[Any] = [node.body] if isinstance(node, ast.Lambda) else node.body
        if not isinstance(node, ast.Lambda):
            out["decorators"] = self.emit(node.decorator_list)
            if not own_name:
                out["name"] = node.name
        self.scopes.append(("function", self._scope("function", body, params)))
        out["body"] = self.emit(body)
        self.scopes.pop()
        return [type(node).__name__, out]

    def _class(self, node: ast.ClassDef, own_name: bool) -> Plain:
        out = {k: self.emit(getattr(node, k)) for k in ("bases", "keywords", "decorator_list")}
        if not own_name:
            out["name"] = node.name
        self.scopes.append(("class", self._scope("class", node.body, ())))
        out["body"] = self.emit(node.body)
        self.scopes.pop()
        return ["ClassDef", out]


def code_fingerprint(
    module_file: Path,
    module_name: str,
    namespace: Mapping[str, Any] | None = None,
    engine: Engine = NO_ENGINE,
) -> CodeFingerprint:
    """Return the fingerprint of what decides the claim declared in ``module_file`` (imported as ``module_name``).

    ``namespace`` (the module's globals): its protocol values are hashed by ``decides``, not by their source.
    ``engine`` names the suite's modules (followed), its engine's and its calibration's (not entered)."""
    _forget_changed()
    path = Path(module_file).resolve()
    depth = len(module_name.split("."))
    resolver = _Resolver(engine, path.parents[depth - 1], (module_name, path))
    claim = _module(module_name, path)
    roots = [f"{module_name}:{names[0] if names else f'#{i}'}" for i, names in claim.order]
    roots += [resolver.resolve(e)[1:-1] for e in CORE_ENTRIES]
    return _walk(resolver, roots, namespace)


def definition_fingerprint(fn: Callable[..., Any]) -> CodeFingerprint:
    """Return the fingerprint of the top-level definition that holds ``fn`` and of what it uses (``_walk``).

    A notebook cell's function is read from ``linecache``; ConfigError for a callable with no Python source."""
    fn = inspect.unwrap(fn)
    module = getattr(fn, "__module__", None) or ""
    code = getattr(fn, "__code__", None)
    try:
        source = inspect.getsourcefile(fn)
    except TypeError:
        source = None
    filed = source is not None and Path(source).is_file()
    text = None if filed or source is None else "".join(linecache.getlines(source)).encode()
    if not module or code is None or source is None or not (filed or text):
        raise ConfigError(
            f"cannot fingerprint the decision {fn!r}: it has no Python source; "
            "give Part(decision=...) a function defined in a module"
        )
    _forget_changed()
    path = Path(source).resolve() if filed else Path(source)
    depth = len(module.split(".")) + (path.name == "__init__.py")
    root = path.parents[depth - 1] if depth <= len(path.parents) else path.parent
    resolver = _Resolver(NO_ENGINE, root.resolve(), (module, path), text)
    parsed = resolver.parsed(module, path)
    line = code.co_firstlineno
    for index, names in parsed.order:
        stmt = parsed.statements[index]
        first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        if first <= line <= (stmt.end_lineno or stmt.lineno):
            return _walk(resolver, [f"{module}:{names[0] if names else f'#{index}'}"], None)
    raise ConfigError(f"cannot fingerprint the decision {fn!r}: line {line} of {path} is not in its module's source")


def decision_identity(fn: Callable[..., Any], stats: Sequence[Sequence[Any]] = ()) -> str:
    """Return ``module:qualname sha256[:12]``: a part's decision, and a digest of ``stats`` and its fingerprint."""
    fn = inspect.unwrap(fn)
    name = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', type(fn).__name__)}"
    payload = json.dumps([[list(s) for s in stats], definition_fingerprint(fn).digest], default=repr)
    return f"{name} {hashlib.sha256(payload.encode()).hexdigest()[:12]}"


def _walk(resolver: _Resolver, roots: Sequence[str], namespace: Mapping[str, Any] | None) -> CodeFingerprint:
    """Hash the definitions reached from ``roots``, breadth first, each reference numbered by first meeting."""
    index: dict[str, int] = {}
    queue = list(dict.fromkeys(roots))
    texts: list[str] = []
    stops: set[str] = set()
    while queue:
        key = queue.pop(0)
        if key in index:
            continue
        index[key] = len(index)
        text, refs = resolver.definition(key, namespace)
        texts.append(text)
        queue += [r for r in refs if r not in index]
        stops.update(re.findall(r"(?:engine|stop):[A-Za-z_][A-Za-z0-9_]*", text))
    body = [_REF.sub(lambda m: f"#{index[m.group(1)]}", t) for t in texts]
    digest = hashlib.sha256(json.dumps([SCHEME, body], ensure_ascii=False).encode()).hexdigest()
    covers = tuple(k.replace(":", ".", 1) for k in index)
    return CodeFingerprint(digest, covers, tuple(sorted(stops)))
