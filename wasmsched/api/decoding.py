"""Reading and parsing YAML/JSON input files the way kube's strict decoders do, with hard limits.

One strict loader for manifests and the scheduler configuration:

- files are read in chunks with a size limit applied while reading (so `/dev/zero` fails fast, and
  pipes such as `<(cat x.yaml)` still work);
- YAML is parsed by libyaml when PyYAML has it (the pure-Python loader otherwise); duplicate
  mapping keys are errors (`key "name" already set in map`, as go-yaml's strict mode says);
  timestamps stay strings, as sigs.k8s.io/yaml leaves them; excessive alias expansion ("billion
  laughs") is refused before anything is constructed, with go-yaml v2's rule;
- JSON duplicate keys are errors (`duplicate field "name"`, sigs.k8s.io/json's strict wording) and
  nesting deeper than encoding/json's 10000 levels is refused;
- integers with more digits than Python converts (4300) are kept as `HugeNumber` text, so the
  converters can say "out of range" instead of leaking Python's conversion error.

Every failure is a DecodeError whose text is one line: `file:line:column: message` (1-based) when
the position is known, else `file: message`.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

# A 20,000-pod manifest is about 20 MB; 256 MiB leaves room while keeping a runaway read bounded.
MAX_MANIFEST_BYTES = 256 * 1024 * 1024
# kube-scheduler configurations are a few KiB.
MAX_CONFIG_BYTES = 16 * 1024 * 1024
_CHUNK = 1024 * 1024

# encoding/json's maxNestingDepth.
MAX_JSON_DEPTH = 10000
# Python refuses to convert decimal strings longer than this (sys.int_info.str_digits_check_threshold
# is 640; the default limit, sys.get_int_max_str_digits(), is 4300). Longer numbers are kept as text.
_MAX_INT_DIGITS = 4300

# go-yaml v2 (decode.go): allowedAliasRatio and the thresholds of the excessive-aliasing check.
_ALIAS_RATIO_RANGE_LOW = 400_000
_ALIAS_RATIO_RANGE_HIGH = 4_000_000
_ALIAS_RATIO_RANGE = float(_ALIAS_RATIO_RANGE_HIGH - _ALIAS_RATIO_RANGE_LOW)
EXCESSIVE_ALIASING = "document contains excessive aliasing"

# libyaml refuses nesting deeper than 1000 levels ("exceeded maximum nesting depth"); the pure-Python
# composer is held to the same, and Python's recursion limit is raised enough for either while parsing.
MAX_YAML_DEPTH = 1000
_YAML_RECURSION_LIMIT = 6 * MAX_YAML_DEPTH

# Longest rendering of an input value inside a message; longer ones are cut (values can be huge).
MAX_VALUE_CHARS = 120


class DecodeError(ValueError):
    """A file that cannot be read or parsed; str() is one line naming the file and the position."""

    def __init__(self, source: str, message: str, line: int | None = None, column: int | None = None) -> None:
        self.source = source
        self.message = message
        self.line = line
        self.column = column
        where = f"{source}:{line}:{column}" if line is not None and column is not None else source
        super().__init__(f"{where}: {message}")


class HugeNumber(str):
    """The text of an integer too long for int() (more than 4300 digits), as written in the input."""


def shorten(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    """text, or its start and a note of its length when longer than limit (for messages)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


# How much of a value a one-line error quotes: enough to recognise it, short enough that the field path and
# the reason after it stay in view.
BRIEF_VALUE_CHARS = 60
# A JSON (or Go %q) string literal inside a message.
_QUOTED = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def brief(text: str, limit: int = BRIEF_VALUE_CHARS) -> str:
    """text inside a one-line message: cut after limit characters with "…", control characters escaped as
    JSON escapes them (a newline as \\n), so that a name never breaks the line."""
    cut = text if len(text) <= limit else text[:limit] + "…"
    return json.dumps(cut, ensure_ascii=False)[1:-1]


def _names_a_file(value: str) -> bool:
    """An absolute or explicitly relative path (no Kubernetes name starts so), or an existing file's."""
    return value.startswith(("/", "./", "../", "~/")) or (
        len(value) < 4096 and "/" in value and "\n" not in value and os.path.exists(value))


def brief_quoted_values(message: str, limit: int = BRIEF_VALUE_CHARS) -> str:
    """message with every double-quoted value longer than limit cut as `brief` cuts it: kube quotes a bad
    value whole (and a name again in `Pod "NAME" is invalid`), which can push the field path and the reason
    out of a one-line error. Field paths and reasons are not quoted, so they stay whole; so does a quoted
    file path (`kubeconfig "PATH"`): the line names the file."""
    def cut(m: re.Match[str]) -> str:
        inner = m.group(1)
        if len(inner) <= limit or _names_a_file(inner):
            return m.group(0)
        head = inner[:limit]
        if (len(head) - len(head.rstrip("\\"))) % 2:  # do not split an escape sequence
            head = head[:-1]
        return f'"{head}…"'

    return _QUOTED.sub(cut, message)


def json_type_name(value: object) -> str:
    """The JSON type of a decoded value as Go's encoding/json names it in `cannot unmarshal X into ...`
    (YAML-only types map to what sigs.k8s.io/yaml's conversion to JSON gives them)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (HugeNumber, int, float)):
        return "number"
    if isinstance(value, (str, bytes)):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, (Mapping, set, frozenset)):
        return "object"
    return "value"


def describe_number(text: str) -> str:
    """A huge number for a message: its first digits and how many digits it has."""
    digits = sum(c.isdigit() for c in text)
    return f"{text[:20]}... ({digits} digits)"


# ---------------------------------------------------------------- reading


def _size(n: int) -> str:
    mib = 1024 * 1024
    return f"{n} bytes ({n // mib} MiB)" if n >= mib and n % mib == 0 else f"{n} bytes"


def read_limited(path: str, limit: int) -> str:
    """The file's text (UTF-8), read in chunks and refused as soon as it exceeds limit bytes."""
    chunks: list[bytes] = []
    size = 0
    try:
        with open(path, "rb") as f:
            while True:
                chunk = f.read(_CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if size > limit:
                    raise DecodeError(path, f"file is larger than {_size(limit)}")
                chunks.append(chunk)
    except OSError as e:
        raise DecodeError(path, e.strerror or str(e)) from None
    data = b"".join(chunks)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DecodeError(path, f"invalid UTF-8 at byte offset {e.start}") from None


# ---------------------------------------------------------------- YAML


def _allowed_alias_ratio(decode_count: int) -> float:
    if decode_count <= _ALIAS_RATIO_RANGE_LOW:
        return 0.99
    if decode_count >= _ALIAS_RATIO_RANGE_HIGH:
        return 0.10
    return 0.99 - 0.89 * ((decode_count - _ALIAS_RATIO_RANGE_LOW) / _ALIAS_RATIO_RANGE)


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        out: list[Node] = []
        for k, v in node.value:
            out.append(k)
            out.append(v)
        return out
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def check_aliasing(root: Node) -> None:
    """Refuse a composed document whose alias expansion go-yaml v2 would refuse.

    An alias is the same node object reached from a second place: its first place (in document order)
    is the anchored definition. The walk counts decode steps as go-yaml's decoder does when it expands
    every alias, checks the rule after each step and stops as soon as it trips, so a "billion laughs"
    document costs a few thousand steps. A node reached again through itself is refused as well.
    """
    defined: dict[int, tuple[int, int]] = {}  # node id -> (parent id, index) of its definition
    decode_count = 1  # the document node
    alias_count = 0
    on_path: set[int] = set()
    # (node, parent id, index, alias depth); None marks leaving the node on top of `path`.
    stack: list[tuple[Node, int, int, int] | None] = [(root, 0, 0, 0)]
    path: list[int] = []
    while stack:
        item = stack.pop()
        if item is None:
            on_path.discard(path.pop())
            continue
        node, parent, index, depth = item
        nid = id(node)
        where = defined.get(nid)
        if where is None:
            defined[nid] = (parent, index)
        elif where != (parent, index):
            # an alias occurrence: the alias node itself, then its target expanded one level deeper
            if nid in on_path:
                raise ComposerError(None, None, "anchor value contains itself", node.start_mark)
            decode_count += 1
            if depth > 0:
                alias_count += 1
            depth += 1
        decode_count += 1
        if depth > 0:
            alias_count += 1
        if (
            alias_count > 100
            and decode_count > 1000
            and alias_count / decode_count > _allowed_alias_ratio(decode_count)
        ):
            raise ComposerError(None, None, EXCESSIVE_ALIASING, root.start_mark)
        if isinstance(node, ScalarNode):
            continue
        on_path.add(nid)
        path.append(nid)
        stack.append(None)
        children = _children(node)
        stack.extend((children[i], nid, i, depth) for i in range(len(children) - 1, -1, -1))


class _StrictConstructor(SafeConstructor):
    """SafeConstructor with kube's strictness: duplicate keys refused, aliases bounded."""

    check_aliases = True

    def construct_document(self, node: Node) -> Any:
        if self.check_aliases:
            check_aliasing(node)
        return super().construct_document(node)

    def construct_mapping(self, node: Node, deep: bool = False) -> dict[Any, Any]:  # type: ignore[override]
        if not isinstance(node, MappingNode):
            found = getattr(node, "id", "node")
            raise ConstructorError(None, None, f"expected a mapping node, but found {found}", node.start_mark)
        explicit = node.value
        self.flatten_mapping(node)
        # flatten_mapping puts the pairs of `<<` merges first in a new list; the pairs written in this
        # mapping are the tail. Keys from merges may be overridden; written keys may not repeat.
        first_explicit = len(node.value) - len(explicit) if node.value is not explicit else 0
        mapping: dict[Any, Any] = {}
        construct = self.construct_object
        if first_explicit == 0:
            for key_node, value_node in node.value:
                key = construct(key_node, deep=deep)
                if self._is_duplicate(key, mapping, node, key_node):
                    raise ConstructorError(
                        None, None, f"key {_go_key(key)} already set in map", key_node.start_mark
                    )
                mapping[key] = construct(value_node, deep=deep)
            return mapping
        written: set[Any] = set()
        for i, (key_node, value_node) in enumerate(node.value):
            key = construct(key_node, deep=deep)
            if self._is_duplicate(key, written, node, key_node):
                raise ConstructorError(None, None, f"key {_go_key(key)} already set in map", key_node.start_mark)
            if i >= first_explicit:
                written.add(key)
            mapping[key] = construct(value_node, deep=deep)
        return mapping

    @staticmethod
    def _is_duplicate(key: Any, seen: Any, node: Node, key_node: Node) -> bool:
        try:
            return key in seen
        except TypeError:
            raise ConstructorError(
                "while constructing a mapping", node.start_mark, "found unhashable key", key_node.start_mark
            ) from None

    def construct_yaml_int(self, node: ScalarNode) -> Any:  # type: ignore[override]
        value = self.construct_scalar(node)
        if len(value) > _MAX_INT_DIGITS and ":" not in value and not value.lstrip("+-").startswith("0"):
            return HugeNumber(value)
        return super().construct_yaml_int(node)

    def construct_timestamp_as_string(self, node: ScalarNode) -> Any:
        # sigs.k8s.io/yaml converts YAML to JSON, where a timestamp is the string as written
        return self.construct_scalar(node)


_StrictConstructor.add_constructor("tag:yaml.org,2002:int", _StrictConstructor.construct_yaml_int)  # type: ignore[type-var]
_StrictConstructor.add_constructor("tag:yaml.org,2002:timestamp", _StrictConstructor.construct_timestamp_as_string)  # type: ignore[type-var]


def _go_key(key: Any) -> str:
    """A map key as go-yaml's %#v prints it in `key %#v already set in map`."""
    if isinstance(key, str):
        return json.dumps(shorten(key), ensure_ascii=False)
    return shorten(str(key))


class PureLoader(
    yaml.reader.Reader,
    yaml.scanner.Scanner,
    yaml.parser.Parser,
    yaml.composer.Composer,
    _StrictConstructor,
    yaml.resolver.Resolver,
):
    """The strict loader on PyYAML's pure-Python parser (used when libyaml is missing)."""

    def __init__(self, stream: str) -> None:
        self._depth = 0
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        _StrictConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise ComposerError(None, None, "exceeded maximum nesting depth", self.peek_event().start_mark)
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        finally:
            self._depth -= 1


_CParser: Any
try:
    from yaml.cyaml import CParser as _CParser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - PyYAML wheels ship libyaml
    _CParser = None
if _CParser is not None:

    class CLoader(_CParser, _StrictConstructor, yaml.resolver.Resolver):  # type: ignore[misc,valid-type]
        """The strict loader on libyaml (much faster on large manifests)."""

        def __init__(self, stream: str) -> None:
            _CParser.__init__(self, stream)
            _StrictConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)

    LOADER: Any = CLoader
else:  # pragma: no cover - PyYAML wheels ship libyaml
    LOADER = PureLoader


def _yaml_error(source: str, e: yaml.YAMLError) -> DecodeError:
    """One line from PyYAML's multi-line error: the problem and where it is (1-based)."""
    if isinstance(e, yaml.MarkedYAMLError):
        mark = e.problem_mark or e.context_mark
        problem = e.problem or e.context or "invalid YAML"
        if e.context and e.problem and e.context != e.problem and not e.context.startswith("while "):
            problem = f"{e.context}: {e.problem}"
        problem = " ".join(problem.split())
        if mark is not None:
            return DecodeError(source, problem, mark.line + 1, mark.column + 1)
        return DecodeError(source, problem)
    return DecodeError(source, " ".join(str(e).split()) or "invalid YAML")


def yaml_documents(text: str, source: str, loader: Any = None) -> Iterator[tuple[int, Any]]:
    """(1-based index, value) of every document of a YAML stream; raises DecodeError."""
    cls = loader or LOADER
    inst = cls(text)
    # Alias checks need an alias, and an alias needs '*': most manifests skip the walk entirely.
    inst.check_aliases = "*" in text
    index = 0
    limit = sys.getrecursionlimit()
    # The composer recurses once (libyaml) or a few times (pure Python) per nesting level; leave room
    # for libyaml's own limit of 1000 levels instead of failing at Python's default of 1000 frames.
    sys.setrecursionlimit(max(limit, _YAML_RECURSION_LIMIT))
    try:
        while inst.check_data():
            index += 1
            yield index, inst.get_data()
    except yaml.YAMLError as e:
        raise _yaml_error(source, e) from None
    except RecursionError:
        # only the pure-Python composer recurses; libyaml stops at its own nesting limit
        raise DecodeError(source, "exceeded maximum nesting depth") from None
    finally:
        sys.setrecursionlimit(limit)
        inst.dispose()


def load_yaml(text: str, source: str, loader: Any = None) -> Any:
    """The single document of a YAML text (None when empty); raises DecodeError."""
    out = None
    for index, doc in yaml_documents(text, source, loader):
        if index > 1:
            # kube-scheduler decodes one document; a second one is an error, not silently dropped
            raise DecodeError(source, "expected a single YAML document, found more than one")
        out = doc
    return out


# ---------------------------------------------------------------- JSON


class _DuplicateField(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _object(pairs: list[tuple[str, Any]], _dict: Any = dict, _len: Any = len) -> dict[str, Any]:
    # called for every JSON object: builtins bound as defaults save the global lookups
    d = _dict(pairs)
    if _len(d) != _len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateField(k)
            seen.add(k)
    return d


def _parse_int(text: str) -> Any:
    if len(text) > _MAX_INT_DIGITS:
        return HugeNumber(text)
    return int(text)


def _json_depth(text: str) -> tuple[int, int]:
    """(deepest nesting, offset where it first exceeds MAX_JSON_DEPTH or -1), skipping strings."""
    depth = deepest = 0
    in_string = escaped = False
    for i, c in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if depth > MAX_JSON_DEPTH:
                    return deepest, i
        elif c in "]}":
            depth -= 1
    return deepest, -1


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _json_loads(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_object, parse_int=_parse_int)


def load_json(text: str, source: str) -> Any:
    """Decode one JSON value strictly (duplicate keys, depth); raises DecodeError."""
    try:
        try:
            return _json_loads(text)
        except RecursionError:
            # Python's own recursion limit (about 1000) is below encoding/json's 10000: find the real
            # depth, refuse it past 10000, and otherwise parse again with room for it.
            _, offset = _json_depth(text)
            if offset >= 0:
                line, column = _position(text, offset)
                raise DecodeError(source, f"exceeded max depth of {MAX_JSON_DEPTH}", line, column) from None
            limit = sys.getrecursionlimit()
            sys.setrecursionlimit(limit + MAX_JSON_DEPTH + 100)
            try:
                return _json_loads(text)
            finally:
                sys.setrecursionlimit(limit)
    except _DuplicateField as e:
        raise DecodeError(source, f"strict decoding error: duplicate field {json.dumps(shorten(e.key))}") from None
    except json.JSONDecodeError as e:
        raise DecodeError(source, e.msg, e.lineno, e.colno) from None
    except RecursionError:
        raise DecodeError(source, f"exceeded max depth of {MAX_JSON_DEPTH}") from None
