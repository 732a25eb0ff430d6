"""The documentation search behind `search_documentation`, run inside the sandbox's Python.

Stdlib only: docsearch.py sends this file's source to the sandbox, which executes it in a
namespace of its own and calls `search(library, query)`. The answer is text: the installed
library's version and its members (one level into its classes) that best match the query's
words, each with its signature and the first paragraph of its docstring.
"""

import dataclasses
import difflib
import functools
import importlib
import importlib.metadata
import importlib.util
import inspect
import pkgutil
import re
import sys
import warnings

MAX_CHARS = 4000
MAX_MATCHES = 8
MAX_SIGNATURE = 400
MAX_FIRST_SIGNATURE = 2000
MAX_SUMMARY = 400
MAX_DOC_SCANNED = 2000
MAX_SUGGESTIONS = 10
MAX_LISTING = 1200
MAX_SUBMODULES = 2
ALIASES = {
    "pymupdf": ("pymupdf", "fitz"),
    "fitz": ("fitz", "pymupdf"),
    "scikit-learn": ("sklearn",),
    "scikit_learn": ("sklearn",),
    "pillow": ("PIL",),
    "pil": ("PIL",),
    "pyyaml": ("yaml",),
    "beautifulsoup4": ("bs4",),
    "beautifulsoup": ("bs4",),
    "opencv": ("cv2",),
    "opencv-python": ("cv2",),
    "python-dateutil": ("dateutil",),
    "python-docx": ("docx",),
}
"""Names models use for a library -> the modules it may be imported as, in order of preference."""
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in into is it me my of on or the "  # noqa: SIM905
    "this that to use using what when which with".split()
)
NAME_WEIGHT = 3.0
OWNER_WEIGHT = 2.0
OWNER_PIECE_WEIGHT = 1.0
SUMMARY_WEIGHT = 1.0
WHOLE_SUMMARY_BONUS = 2.0
DOC_WEIGHT = 0.3
DEPRECATED_FACTOR = 0.2
DATA_FACTOR = 0.5
MIN_SCORE = 1.0


@dataclasses.dataclass
class _Entry:
    """One documented member: its qualified name, the class it belongs to ('' for a module's
    members), the object, its kind (class, function, property, module, callable or data), and
    how well it matches the query."""

    qualname: str
    owner: str
    obj: object
    kind: str
    score: float = 0.0


def search(library, query):
    """The answer to search_documentation(library, query), as text of at most MAX_CHARS."""
    library = str(library).strip()
    query = str(query).strip()
    if not library:
        return "search_documentation needs a library name, e.g. 'pandas' or 'fitz.Page'."
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        target, name, problem = _resolve(library)
        if problem:
            return _bounded(problem)
        header = _header(library, name)
        if not (inspect.ismodule(target) or inspect.isclass(target)):
            return _bounded(f"{header}\n\n{_describe(_Entry(name, '', target, _kind(target)))}")
        named = _words(library.split(".")[0]) + _words(name.split(".")[0])
        words = [word for word in _words(query) if word not in named] or list(_words(query))
        matches = _ranked(_entries(target, name, words), words) if words else []
        if not matches:
            what = f"No member of {name} matches {query!r}.\n" if words else ""
            return _bounded(f"{header}\n{what}{_overview(target, name)}")
        return _bounded(_report(header, query, matches))


def _resolve(library):
    """(object, its dotted name as imported here, None), or (None, None, why it is not found)."""
    top, *path = library.split(".")
    root = _importable(top)
    if root is None:
        return None, None, _not_installed(top)
    try:
        target = importlib.import_module(root)
    except Exception as exc:  # a broken install: say so, like any other answer
        return None, None, f"{root} is installed but cannot be imported: {_one_line(exc)}"
    for index, part in enumerate(path):
        found = _get(target, part)
        dotted = ".".join([root, *path[: index + 1]])
        if found is None and inspect.ismodule(target) and _has_module(dotted):
            try:
                found = importlib.import_module(dotted)
            except Exception as exc:
                return None, None, f"{dotted} cannot be imported: {_one_line(exc)}"
        if found is None:
            close = difflib.get_close_matches(part, _public_names(target), MAX_SUGGESTIONS)
            hint = f" Close names: {', '.join(close)}." if close else ""
            return None, None, f"{'.'.join([root, *path[:index]])} has no member {part!r}.{hint}"
        target = found
    return target, ".".join([root, *path]), None


def _importable(name):
    """The module name `name` (or an alias of it) is importable as here, or None."""
    lowered = name.lower()
    candidates = [name, lowered, name.replace("-", "_"), *ALIASES.get(lowered, ())]
    for candidate in candidates:
        if candidate.isidentifier() and _has_module(candidate):
            return candidate
    return None


def _has_module(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _not_installed(name):
    installed = {module.name for module in pkgutil.iter_modules() if module.name[0] != "_"}
    installed.update(n for n in sys.builtin_module_names if not n.startswith("_"))
    by_lower = {}
    for module in sorted(installed):
        by_lower.setdefault(module.lower(), module)
    wanted = [name.lower(), *ALIASES.get(name.lower(), ())]
    close = []
    for each in wanted:
        for match in difflib.get_close_matches(each.lower(), sorted(by_lower), MAX_SUGGESTIONS):
            if by_lower[match] not in close:
                close.append(by_lower[match])
    found = (
        f"Installed packages with close names: {', '.join(close[:MAX_SUGGESTIONS])}."
        if close
        else "No installed package has a close name."
    )
    return f"{name!r} is not installed in the sandbox, so code cannot import it. {found}"


def _header(library, name):
    root = name.split(".")[0]
    version = _version(root)
    named = f"{root} {version}" if version else root
    if library.split(".")[0] != root:
        return f"Library: {named} (asked for {library!r}; import it as `import {root}`)"
    return f"Library: {named}"


def _version(root):
    module = sys.modules.get(root)
    version = getattr(module, "__version__", None) or getattr(module, "VersionBind", None)
    if isinstance(version, str):
        return version
    try:
        distributions = importlib.metadata.packages_distributions().get(root) or [root]
        return importlib.metadata.version(distributions[0])
    except Exception:
        return ""


def _entries(target, name, words):
    """The documented members of module or class `target` (imported as `name`): a module's
    public names, one level into its classes, and the submodules the query names; or a class
    and its members."""
    if inspect.isclass(target):
        return [_Entry(name, "", target, "class"), *_class_entries(target, name, target.__name__)]
    entries = _module_entries(target, name)
    for submodule in _named_submodules(target, words):
        entries.extend(
            _module_entries(submodule, f"{name}{submodule.__name__[len(target.__name__) :]}")
        )
    return entries


def _module_entries(module, name):
    entries = []
    walked = set()
    for member in _public_names(module):
        obj = _get(module, member)
        qualname = f"{name}.{member}"
        if inspect.ismodule(obj):
            if obj.__name__.startswith(module.__name__ + "."):
                entries.append(_Entry(qualname, "", obj, "module"))
        elif _exported(obj, member, module):
            entries.append(_Entry(qualname, "", obj, _kind(obj)))
            if inspect.isclass(obj) and id(obj) not in walked:
                walked.add(id(obj))
                entries.extend(_class_entries(obj, qualname, member))
    return entries


def _named_submodules(package, words):
    """The package's submodules (at most MAX_SUBMODULES) whose name is one of the query's words,
    imported: 'open image' in PIL searches PIL.Image too."""
    if not hasattr(package, "__path__"):
        return []
    found = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda info: info.name):
        if info.name.lower() in words and len(found) < MAX_SUBMODULES:
            try:
                found.append(importlib.import_module(f"{package.__name__}.{info.name}"))
            except Exception:
                continue
    return found


def _class_entries(cls, prefix, owner):
    entries = []
    for name in dir(cls):
        if name.startswith("_") or _defined_in_builtins(cls, name):
            continue
        obj = _get(cls, name)
        entries.append(_Entry(f"{prefix}.{name}", owner, obj, _kind(obj)))
    return entries


def _public_names(target):
    names = getattr(target, "__all__", None) if inspect.ismodule(target) else None
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        names = dir(target)
    return sorted({name for name in names if not name.startswith("_")})


def _get(owner, name):
    """getattr(owner, name), or None when reading it fails in any way."""
    try:
        return getattr(owner, name)
    except Exception:
        return None


def _exported(obj, member, module):
    """Whether `module.member` is part of the module's API: listed in its __all__, or (without
    one) not a class or function imported from another package."""
    listed = getattr(module, "__all__", None)
    if isinstance(listed, (list, tuple)):
        return member in listed
    if not (inspect.isclass(obj) or inspect.isroutine(obj)):
        return True
    origin = _get(obj, "__module__")
    if not isinstance(origin, str):
        return True
    return origin.split(".")[0] == module.__name__.split(".")[0]


def _defined_in_builtins(cls, name):
    for klass in cls.__mro__:
        if name in vars(klass):
            return klass.__module__ == "builtins"
    return False


def _kind(obj):
    if inspect.isclass(obj):
        return "class"
    if inspect.ismodule(obj):
        return "module"
    if inspect.isroutine(obj):
        return "function"
    if isinstance(obj, property) or inspect.isdatadescriptor(obj):
        return "property"
    return "callable" if callable(obj) else "data"


def _ranked(entries, words):
    """The best MAX_MATCHES entries for `words`, one per object, best first."""
    doc_words = {}
    for entry in entries:
        entry.score = _score(entry, words, doc_words)
    entries = [entry for entry in entries if entry.score >= MIN_SCORE]
    entries.sort(key=_rank)
    seen = set()
    best = []
    for entry in entries:
        if entry.kind not in ("data", "callable"):
            if id(entry.obj) in seen:
                continue
            seen.add(id(entry.obj))
        best.append(entry)
        if len(best) == MAX_MATCHES:
            break
    return best


def _rank(entry):
    """Best score first; among equals, a member under its own name (find_all before its alias
    findAll), then the shorter name."""
    own_name = _get(entry.obj, "__name__")
    aliased = isinstance(own_name, str) and own_name != entry.qualname.rsplit(".", 1)[-1]
    return (-entry.score, aliased, len(entry.qualname), entry.qualname)


def _score(entry, words, doc_words):
    """How well `entry` matches the query's `words`: its own name counts most, then its class's
    name, then its docstring's first paragraph (most when that holds every word), then the rest
    of its docstring; scaled by the share of words matched, and low for deprecated members."""
    own = _words(entry.qualname.rsplit(".", 1)[-1])
    owner = entry.owner.lower()
    owner_pieces = _words(entry.owner)
    doc = _doc(entry)
    if id(doc) not in doc_words:
        summary, _, rest = doc[:MAX_DOC_SCANNED].strip().partition("\n\n")
        doc_words[id(doc)] = (_plain_words(summary), _plain_words(rest))
    summary_words, rest_words = doc_words[id(doc)]
    score = 0.0
    covered = 0
    in_summary = 0
    for word in words:
        hit = 0.0
        if any(_same_word(word, name) for name in own):
            hit = NAME_WEIGHT
        elif _same_word(word, owner):
            hit = OWNER_WEIGHT
        elif any(_same_word(word, name) for name in owner_pieces):
            hit = OWNER_PIECE_WEIGHT
        if _in(word, summary_words):
            hit += SUMMARY_WEIGHT
            in_summary += 1
        elif _in(word, rest_words):
            hit += DOC_WEIGHT
        score += hit
        covered += hit > 0
    if in_summary == len(words):
        score += WHOLE_SUMMARY_BONUS
    score *= covered / len(words)
    if entry.kind == "data":
        return score * DATA_FACTOR
    return score * DEPRECATED_FACTOR if _deprecated(doc) else score


def _deprecated(doc):
    return "deprecated" in doc[:300].lower()


def _doc(entry):
    """The entry's own docstring (a class without one: its __init__'s); none for plain data."""
    if entry.kind == "data":
        return ""
    doc = _get(entry.obj, "__doc__")
    if not doc and entry.kind == "class" and "__init__" in vars(entry.obj):
        doc = _get(entry.obj.__init__, "__doc__")
    return doc if isinstance(doc, str) else ""


@functools.cache
def _words(text):
    """The words of a name or query: split on punctuation, snake_case and CamelCase, lowered,
    with the joined CamelCase word kept too ('DataFrame' -> data, frame, dataframe)."""
    words = []
    for part in re.split(r"[^A-Za-z0-9]+", str(text)):
        pieces = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", part)
        candidates = [piece.lower() for piece in pieces]
        if len(pieces) > 1:
            candidates.append(part.lower())
        words.extend(word for word in candidates if word not in STOPWORDS and word not in words)
    return tuple(words)


def _plain_words(text):
    return frozenset(re.findall(r"[a-z0-9]+", text.lower()))


def _same_word(word, other):
    """Equal, or one a short extension of the other ('file'/'files', 'read'/'reader')."""
    if word == other:
        return True
    short, long = (word, other) if len(word) <= len(other) else (other, word)
    return len(short) >= 3 and len(long) - len(short) <= 3 and long.startswith(short)


def _in(word, words):
    return word in words or word + "s" in words or (word.endswith("s") and word[:-1] in words)


def _report(header, query, matches):
    lines = [f"{header}\nBest matches for {query!r}:"]
    size = len(lines[0])
    for entry in matches:
        block = _describe(entry, MAX_SIGNATURE if len(lines) > 1 else MAX_FIRST_SIGNATURE)
        if size + len(block) + 2 > MAX_CHARS and len(lines) > 1:
            break
        lines.append(block)
        size += len(block) + 2
    return "\n\n".join(lines)


def _describe(entry, max_signature=MAX_FIRST_SIGNATURE):
    """The entry as 'qualified name + signature' and its docstring's first paragraph."""
    if entry.kind == "data":
        return f"{entry.qualname} = {_cut(_repr(entry.obj), 80)}"
    if entry.kind == "module":
        head = f"{entry.qualname}  (module: search it with library={entry.qualname!r})"
    elif entry.kind == "property":
        head = f"{entry.qualname}  (property)"
    else:
        prefix = "class " if entry.kind == "class" else ""
        head = prefix + entry.qualname + _cut(_signature(entry.obj), max_signature)
    if _deprecated(_doc(entry)):
        head += "  (deprecated)"
    doc = _doc(entry) or inspect.getdoc(entry.obj)
    summary = " ".join(inspect.cleandoc(doc or "").split("\n\n")[0].split())
    return f"{head}\n    {_cut(summary, MAX_SUMMARY)}" if summary else head


def _signature(obj):
    """inspect.signature as text; for what it cannot read (some builtins and extension
    functions), the __text_signature__, a signature on the docstring's first line, or (...)."""
    try:
        return str(inspect.signature(obj))
    except Exception:
        pass
    text = _get(obj, "__text_signature__")
    if isinstance(text, str):
        return text.replace("$", "")
    doc = _get(obj, "__doc__")
    first = doc.strip().split("\n")[0] if isinstance(doc, str) else ""
    found = re.match(r"[\w.]+(\(.*\))", first)
    return found.group(1) if found else "(...)"


def _overview(target, name):
    """The target's public classes and functions (and a package's submodules) to search next."""
    classes, functions = [], []
    for member in _public_names(target):
        obj = _get(target, member)
        if inspect.isclass(obj) and _exported(obj, member, target):
            classes.append(member)
        elif inspect.isroutine(obj) and _exported(obj, member, target):
            functions.append(member)
    listed = [(f"Classes in {name}", classes), (f"Functions in {name}", functions)]
    if inspect.ismodule(target) and hasattr(target, "__path__"):
        found = [m.name for m in pkgutil.iter_modules(target.__path__) if m.name[0] != "_"]
        modules = [f"{name}.{module}" for module in sorted(found)]
        listed.append((f"Submodules of {name} (pass one as the library)", modules))
    lines = [f"{title}: {_listing(names)}." for title, names in listed if names]
    return "\n".join(lines) or f"{name} has no public classes or functions."


def _listing(names):
    """`names` joined, cut at MAX_LISTING characters with a count of those left out."""
    text = ", ".join(names)
    if len(text) <= MAX_LISTING:
        return text
    shown = text[:MAX_LISTING].rsplit(", ", 1)[0]
    return f"{shown} and {len(names) - shown.count(', ') - 1} more"


def _repr(obj):
    try:
        return repr(obj)
    except Exception:
        return f"<{type(obj).__name__}>"


def _cut(text, limit):
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _one_line(exc):
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0]}" if message else type(exc).__name__


def _bounded(text):
    return _cut(text, MAX_CHARS)
