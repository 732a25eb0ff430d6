"""Finding the code that produces a field."""

from tui_agent.analysis.logic import field_logic

SCRAPER = """from bs4 import BeautifulSoup

def main():
    soup = BeautifulSoup(html, "lxml")
    items = []
    for card in soup.select(".card"):
        item = {"title": card.select_one("h2").text}
        item["price"] = float(
            card.select_one(".price").text.strip("$")
        )
        items.append(item)
    return items
"""


def test_dict_key_and_subscript_assignment():
    assert field_logic(SCRAPER, "title") == (
        '   7          item = {"title": card.select_one("h2").text}'
    )
    assert field_logic(SCRAPER, "price") == "\n".join(
        [
            '   8          item["price"] = float(',
            '   9              card.select_one(".price").text.strip("$")',
            "  10          )",
        ]
    )


def test_dotted_field_uses_its_last_part_and_keywords_count():
    code = "def main():\n    return [dict(name='a', seller={'city': 'x'})]\n"
    expected = "   2      return [dict(name='a', seller={'city': 'x'})]"
    assert field_logic(code, "seller.city") == expected
    assert field_logic(code, "name") == field_logic(code, "seller.city")


def test_unknown_field_or_broken_code_gives_none():
    assert field_logic(SCRAPER, "rating") is None
    assert field_logic("def main(:\n", "title") is None


def test_many_places_are_capped():
    code = "\n".join(f"x{i} = {{'k': {i}}}" for i in range(6))
    shown = field_logic(code, "k")
    assert shown is not None and shown.endswith("… 2 more places")
    assert shown.count("\n") == 4


# -- the lines that compute a field win over data ---------------------------------------------

DATA_THEN_LOOP = """\
orders = [
    {"id": 1, "qty": 2, "price": 100.0, "total": None},
    {"id": 2, "qty": 1, "price": 89.5, "total": None},
]
for o in orders:
    o["total"] = o["qty"] * o["price"]
result = orders
"""
VARIABLE_PUT_IN_THE_ITEM = """\
def main(orders):
    out = []
    for o in orders:
        amount = o["qty"] * o["price"]
        total = round(amount, 2)
        out.append({"id": o["id"], "total": total})
    return out
"""
RENAMED_TWICE = """\
def main(orders):
    rows = []
    for o in orders:
        amount = o["qty"] * o["price"]
        value = amount
        rows.append(dict(id=o["id"], total=value))
    return rows
"""
SUMMED = """\
def main(orders):
    total = 0
    for o in orders:
        total += o["price"]
    return [{"total": total}]
"""
TABLE = """\
import pandas as pd

def main(rows):
    df = pd.DataFrame(rows)
    df["total"] = df["qty"] * df["price"]
    return df.to_dict("records")
"""
ANOTHER_FUNCTION = """\
def helper():
    value = "not this one"
    return value

def main(orders):
    value = sum(o["price"] for o in orders)
    return [{"total": value}]
"""


def test_a_computing_line_wins_over_the_data_that_holds_the_key() -> None:
    assert field_logic(DATA_THEN_LOOP, "total") == '   6      o["total"] = o["qty"] * o["price"]'


def test_a_variable_put_in_the_item_is_followed_to_its_assignment() -> None:
    assert field_logic(VARIABLE_PUT_IN_THE_ITEM, "total") == "\n".join(
        [
            "   5          total = round(amount, 2)",
            '   6          out.append({"id": o["id"], "total": total})',
        ]
    )


def test_a_keyword_value_is_followed_through_each_variable() -> None:
    assert field_logic(RENAMED_TWICE, "total") == "\n".join(
        [
            '   4          amount = o["qty"] * o["price"]',
            "   5          value = amount",
            '   6          rows.append(dict(id=o["id"], total=value))',
        ]
    )


def test_every_assignment_of_an_accumulated_variable_is_shown() -> None:
    assert field_logic(SUMMED, "total") == "\n".join(
        [
            "   2      total = 0",
            '   4          total += o["price"]',
            '   5      return [{"total": total}]',
        ]
    )


def test_a_column_assignment_is_the_computing_line() -> None:
    assert field_logic(TABLE, "total") == '   5      df["total"] = df["qty"] * df["price"]'


def test_a_variable_is_followed_in_its_own_function_only() -> None:
    assert field_logic(ANOTHER_FUNCTION, "total") == "\n".join(
        [
            '   6      value = sum(o["price"] for o in orders)',
            '   7      return [{"total": value}]',
        ]
    )


def test_with_nothing_giving_a_value_the_lines_reading_it_are_shown() -> None:
    code = "def main(rows):\n    return [r for r in rows if r['total']]\n"
    assert field_logic(code, "total") == "   2      return [r for r in rows if r['total']]"
