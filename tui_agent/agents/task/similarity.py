"""Whether two task texts ask for the same thing, for the task executor's code cache.

`normalise_task` is the form the exact cache hashes: writings that differ only in case,
spacing, trailing punctuation, curly or straight quote marks or how a number or percentage is
written become one. Text inside quotes or brackets and field-like names (snake_case, dotted,
camelCase, `context['x']`) keep their case, because there case is meaning.

`best_match` is the semantic cache: it finds the cached task that says the same thing in other
words. A wrong hit silently runs the wrong code on the user's data, so it prefers a miss.
Method: rapidfuzz ranks candidates by wording (`token_set_ratio` on the normalised texts, with
`threshold` as a cheap cut-off), and a candidate is a hit only when both texts reduce to the
same *canonical form*: the sequence of meaningful tokens after dropping fillers ("please",
"the", "could you") and mapping known synonyms to one word ("calculate" -> "compute", "more
than" -> "above", "10 percent" -> "10 %", "EUR 1000" -> "1000 eur"). Every other token must
match exactly and in the same order, so any difference in numbers, comparison or direction
words, negation, units, currencies, quoted strings, field names or plain content words is a
miss. The only reordering allowed is of phrases led by a preposition ("from the PDF, extract
the total" = "extract the total from the PDF"; "from A to B" = "to B from A", never "from B to
A"). A fuzzy score alone cannot do this: "above 1000" and "below 1000" are one word apart.
Embedding models were not chosen: the small ones that run on a CPU download their weights at
run time (model2vec, fastembed) and are known to blur negation and numbers, the very cases
that matter here. English is handled first; Spanish fillers, numbers and comparisons work.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz

DEFAULT_THRESHOLD = 50.0

_QUOTE_MARKS = str.maketrans(  # curly quotes and guillemets as straight ones
    "\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u00ab\u00bb", "''''" + '"' * 6
)
# Spans kept verbatim (case included): subscripts, quoted text, code and field-like names.
_PROTECTED = re.compile(
    r"""(?P<access>[^\W\d]\w*(?:\[\s*(?:'[^'\n]*'|"[^"\n]*"|\d+)\s*\])+)"""
    r"""|(?P<quoted>"[^"\n]*"|(?<!\w)'[^'\n]*'(?!\w))"""
    r"""|(?P<code>`[^`\n]*`)"""
    r"""|(?P<name>\b[^\W\d]\w*(?:\.[^\W\d]\w*)+\b|\b\w*_\w*\b|\b\w*[a-z]\w*[A-Z]\w*\b)"""
)
_COMMA_THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?!\d|,\d)")
_SPACE_THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?: \d{3})+(?![\d]|[.,]\d)")
_PERCENT = re.compile(r"(\d)\s*(?:%|\bper ?cent\b|\bpor ciento\b)")
_TRAILING = re.compile(r"(?<=[\w\"'`)\]])[.!?;:,…]+$")

# Canonical word: the words and phrases it stands for. "-" drops them, "." ends a clause.
_SYNONYMS = """
-: please, kindly, the, a, an, this, these, those, that, which, all, just, simply, also,
   it, its, them, is, are, be, do, does, of, and, i, me, we, you, i want to, i need to,
   i would like to, i'd like to, can you, could you, would you, help me, go ahead and, thanks,
   thank you, por favor, el, la, los, las, lo, un, una, unos, unas, que, todo, todos, toda,
   todas, son, puedes, podrias, quiero, necesito
each: each, every, cada
de: de, del
.: then, and then, after that, afterwards, luego, y luego, despues, entonces, ;, .
above: above, over, more than, greater than, higher than, larger than, bigger than,
   exceeding, exceeds, in excess of, >, mayor que, mas de, mas que, por encima de, superior a
below: below, under, less than, fewer than, lower than, smaller than, <, menor que,
   menos de, menos que, por debajo de, inferior a
at least: at least, no less than, no fewer than, >=, al menos, por lo menos, como minimo
at most: at most, no more than, up to, <=, como maximo, a lo sumo
before: before, prior to, earlier than, antes de
after: after, later than, despues de
ascending: ascending, asc, in ascending order, ascending order, lowest first, smallest first,
   low to high, ascendente, de menor a mayor
descending: descending, desc, in descending order, descending order, highest first,
   largest first, high to low, descendente, de mayor a menor
minimum: minimum, min, lowest, smallest, minimo
maximum: maximum, max, highest, largest, biggest, maximo
not: not, no, never, nunca
without: without, excluding, except, sin, excepto, salvo
compute: compute, calculate, work out, figure out, determine, calcular, calcula, computa
extract: extract, get, retrieve, obtain, pull out, extraer, extrae, obtener, obten, saca
remove: remove, delete, drop, strip, eliminate, filter out, get rid of, elimina, quita, borra
deduplicate: deduplicate, dedupe, remove duplicates, remove duplicate, delete duplicates,
   delete duplicate, drop duplicates, drop duplicate
store: store, save, put, guarda, almacena
sort: sort, order by=sort by, arrange, ordena, ordenar
keep: keep, keep only, only keep, retain, filter
sum: sum, sum up, add up, suma, sumar
average: average, mean, avg, promedio, media
convert: convert, transform, convierte
return: return, give, devuelve
key: key, field, campo, clave
email: email, e-mail, correo
emails: emails, e-mails, correos
to: to, into
%: %, percent, per cent, por ciento
eur: eur, euro, euros, €
dollar: dollar, dollars, $, dolar, dolares
gbp: gbp, £
kg: kg, kilogram, kilograms, kilos
2: two, dos
3: three, tres
4: four, cuatro
5: five, cinco
10: ten, diez
"""
_CURRENCIES = {"eur", "dollar", "usd", "gbp"}
# Phrases led by these words may move within a clause; every other token keeps its place.
_MOVABLE = {"from", "to", "in", "with", "as", "for", "by", "using", "via", "on"}
_MOVABLE |= {"desde", "en", "con", "para", "por"}
_TOKEN = re.compile(
    r"""[^\W\d]\w*(?:\[[^\]]*\])+|"[^"]*"|'[^']*'|`[^`]*`|\d[\d.,:/-]*\d|\d"""
    r"""|[^\W\d][\w'-]*(?:\.\w+)*|>=|<=|!=|==|[^\w\s()\[\]{}!?¿¡]"""
)


def _strip_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def _parse_synonyms(spec: str) -> dict[tuple[str, ...], tuple[str, ...]]:
    table: dict[tuple[str, ...], tuple[str, ...]] = {}
    for entry in re.split(r"\n(?=\S)", spec.strip()):
        canonical, words = entry.split(": ", 1)
        for phrase in words.split(","):
            source, *target = re.split(r"(?<![<>!=])=(?!=)", phrase.strip(), maxsplit=1)
            replacement = target[0] if target else ("" if canonical == "-" else canonical)
            table[tuple(source.split())] = tuple(replacement.split())
    return table


_PHRASES = _parse_synonyms(_strip_accents(_SYNONYMS))
_LONGEST_PHRASE = max(len(phrase) for phrase in _PHRASES)


@dataclass(frozen=True)
class TaskMatch:
    """A cached task that says the same as the new one: its index among the candidates, a
    wording similarity from 0 to 100 and one line saying why it counts as the same task."""

    index: int
    score: float
    why: str


def normalise_task(text: str) -> str:
    """The task as the exact cache hashes it (NFKC, case-folded outside quotes and field-like
    names, whitespace collapsed, trailing punctuation and wrapping quotes dropped, numbers and
    percentages written one way: "1,000" and "1 000" -> "1000", "10%" and "10 percent" -> "10 %").
    """
    text = _trim(unicodedata.normalize("NFKC", text).translate(_QUOTE_MARKS))
    parts, position = [], 0
    for match in _PROTECTED.finditer(text):
        parts.append(_normalise_words(text[position : match.start()]))
        parts.append(_normalise_protected(match))
        position = match.end()
    parts.append(_normalise_words(text[position:]))
    return re.sub(r" {2,}", " ", "".join(parts)).strip()


_normalised = lru_cache(maxsize=4096)(normalise_task)


def _trim(text: str) -> str:
    """Without surrounding space, opening "¿¡", closing punctuation or wrapping quotes."""
    previous = None
    while text != previous:
        previous = text
        text = _TRAILING.sub("", text.strip().lstrip("¿¡")).strip()
        if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'" and text.count(text[0]) == 2:
            text = text[1:-1]
    return text


def _normalise_words(text: str) -> str:
    text = re.sub(r"\s+", " ", text.casefold())
    text = _COMMA_THOUSANDS.sub(lambda m: m.group().replace(",", ""), text)
    text = _SPACE_THOUSANDS.sub(lambda m: m.group().replace(" ", ""), text)
    return _PERCENT.sub(r"\1 %", text)


def _normalise_protected(match: re.Match[str]) -> str:
    span = match.group()
    if match.lastgroup == "access":  # context["x"] -> context['x'], as Python prints it
        return re.sub(r"\"([^\"']*)\"", r"'\1'", span)
    return span


def _tokens(normalised: str) -> list[str]:
    """Words, numbers, symbols and protected spans (quoted ones in double quotes), with
    contractions spelled out; a mark with a space before it ("split on ,") is the literal
    character, as if quoted."""
    tokens = []
    for match in _TOKEN.finditer(normalised):
        token, start = match.group(), match.start()
        if token in ".,;:" and (start == 0 or normalised[start - 1] == " "):
            token = f'"{token}"'
        if token[0] == "'" and '"' not in token:  # 'paid' says "paid"
            token = f'"{token[1:-1]}"'
        if token[0] in "\"'`" or "[" in token:
            tokens.append(token)
            continue
        token = _strip_accents(token)
        if not token:  # a lone accent mark
            continue
        if token.endswith("n't"):
            stem = {"can't": "can", "won't": "will"}.get(token, token[:-3])
            tokens.extend([stem, "not"])
        else:
            tokens.append(token)
    return tokens


def _apply_synonyms(tokens: list[str]) -> list[str]:
    """Known words and phrases replaced by their canonical word, twice, so that a phrase split
    by a dropped filler ("remove the duplicates") is found too; currencies put after amounts."""
    out = _replace_phrases(_replace_phrases(tokens))
    for k in range(len(out) - 1):  # "EUR 1000" and "€1000" say "1000 eur"
        after_amount = k > 0 and out[k - 1][:1].isdigit()
        if out[k] in _CURRENCIES and out[k + 1][:1].isdigit() and not after_amount:
            out[k], out[k + 1] = out[k + 1], out[k]
    return out


def _replace_phrases(tokens: list[str]) -> list[str]:
    """Replace the longest known phrase at each position by its canonical word (or nothing)."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        for size in range(min(_LONGEST_PHRASE, len(tokens) - i), 0, -1):
            replacement = _PHRASES.get(tuple(tokens[i : i + size]))
            if replacement is not None:
                out.extend(replacement)
                i += size
                break
        else:
            out.append(tokens[i])
            i += 1
    return out


@lru_cache(maxsize=4096)
def _canonical(normalised: str) -> tuple[tuple[tuple[str, ...], ...], ...]:
    """Clauses in order; in each, the fixed words in order, then the prepositional phrases
    sorted by their preposition (phrases sharing one keep their order)."""
    clauses: list[tuple[tuple[str, ...], ...]] = []
    fixed: list[str] = []
    phrases: list[tuple[str, ...]] = []
    current: list[str] = []

    def close_phrase() -> None:
        if current and current[0] in _MOVABLE:
            phrases.append(tuple(current))
        else:
            fixed.extend(current)
        current.clear()

    for token in [*_apply_synonyms(_tokens(normalised)), "."]:
        if token in (",", ":") or token in _MOVABLE:
            close_phrase()
            if token in _MOVABLE:
                current.append(token)
        elif token == ".":
            close_phrase()
            phrases.sort(key=lambda phrase: phrase[0])
            if fixed or phrases:
                clauses.append((tuple(fixed), *phrases))
            fixed, phrases = [], []
        else:
            current.append(token)
    return tuple(clauses)


def best_match(
    task: str, candidates: Sequence[str], threshold: float = DEFAULT_THRESHOLD
) -> TaskMatch | None:
    """The candidate that says the same task in other words, or None.

    A candidate is a hit when it is identical to `task` once normalised, or when its wording
    similarity reaches `threshold` (0-100) and both reduce to the same canonical form (see the
    module docstring). Among hits the most similar wording wins, the earliest on a tie.
    """
    query = _normalised(task)
    query_form = _canonical(query)
    best: TaskMatch | None = None
    for index, candidate in enumerate(candidates):
        text = _normalised(candidate)
        if text == query:
            return TaskMatch(index, 100.0, "identical once normalised")
        score = fuzz.token_set_ratio(query, text)
        if score < threshold or not query_form or _canonical(text) != query_form:
            continue
        if best is None or score > best.score:
            why = "same words in the same roles once fillers and synonyms are set aside"
            best = TaskMatch(index, round(score, 1), why)
    return best
