"""The corpus's scoring and its rewrite of URLs beyond loopback, on small inputs."""

from corpus.offsite import offsite_urls, to_loopback
from corpus.scoring import score

TRUTH = [{"title": "A  b", "tags": ("x", "y")}, {"title": "C", "tags": ("z",)}]


def test_values_match_at_the_same_index_whitespace_and_name_case_aside():
    result = score([{"Title": " A b\n", "tags": ["y", "x"]}, {"title": "C", "tags": ["z"]}], TRUTH)
    assert (result.items, result.recall, result.misses) == (1.0, 1.0, {})


def test_a_list_held_in_one_string_is_a_miss_counted_apart():
    result = score([{"title": "A b", "tags": "Tags: x y"}, {"title": "C", "tags": "z"}], TRUTH)
    assert (result.recall, result.as_string) == (0.5, 2)
    assert result.misses == {"tags": 2}
    assert "tags x2 (['x', 'y'] → 'Tags: x y'" in result.miss_summary()


def test_missing_items_miss_every_field_and_other_names_are_listed():
    result = score([{"name": "A b", "tags": ["x", "y"]}], TRUTH)
    assert (result.found, result.expected, result.items) == (1, 2, 0.5)
    assert result.recall == 0.25
    assert result.miss_summary().endswith("other fields: name")


def test_urls_beyond_loopback_point_at_the_same_server():
    html = (
        '<a href="https://datasette.io/">d</a><img src="//cdn.example.com/a.png">'
        '<svg xmlns="http://www.w3.org/2000/svg"></svg><a href="http://127.0.0.1:8001/x">'
        "<style>@font-face { src: url(https://fonts.gstatic.com/f.woff) }</style>"
    )
    assert offsite_urls(html) == [
        "https://datasette.io/",
        "//cdn.example.com/a.png",
        "https://fonts.gstatic.com/f.woff",
    ]
    rewritten = to_loopback(html)
    assert offsite_urls(rewritten) == []
    assert '<a href="/_offsite/datasette.io/">' in rewritten
    assert 'xmlns="http://www.w3.org/2000/svg"' in rewritten
    assert "http://127.0.0.1:8001/x" in rewritten
