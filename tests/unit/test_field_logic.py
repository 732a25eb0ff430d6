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
