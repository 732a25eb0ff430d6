"""Generated packages: JSON Schema mapped to Python types, one typed function per tool, written
again unless the folder holds exactly what the host would write (a rewritten manifest does not
count), and type-checked by mypy (strict)."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tui_agent.tools import WORKSPACE_TOOLS, ServerTools, ToolInfo, generate_packages
from tui_agent.tools.schema_types import TypeWriter
from tui_agent.tools.wrappers import function_specs


def annotation(schema, root=None):
    writer = TypeWriter(root or {}, "Tool", set())
    return writer.annotation(schema, "Value"), writer


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, "str"),
        ({"type": "integer"}, "int"),
        ({"type": "number"}, "float"),
        ({"type": "boolean"}, "bool"),
        ({"type": "null"}, "None"),
        ({"type": "array", "items": {"type": "string"}}, "list[str]"),
        ({"type": "array"}, "list[Any]"),
        ({"type": "object"}, "dict[str, Any]"),
        ({"type": "object", "additionalProperties": {"type": "integer"}}, "dict[str, int]"),
        ({"type": ["string", "null"]}, "str | None"),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "int | None"),
        ({"enum": ["a", "b"]}, "Literal['a', 'b']"),
        ({"enum": ["a", None]}, "Literal['a'] | None"),
        ({"const": 3}, "Literal[3]"),
        ({}, "Any"),
        (
            {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
            "list[list[float]]",
        ),
    ],
)
def test_json_schema_types_map_to_python(schema, expected):
    assert annotation(schema)[0] == expected


def test_an_object_with_properties_is_a_typed_dict_with_not_required_keys():
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
        "required": ["city"],
    }
    name, writer = annotation(schema)
    assert name == "ToolValue"
    [definition] = writer.definitions
    assert "'city': str," in definition and "'zip': NotRequired[str]," in definition


def test_references_are_followed_and_a_loop_of_them_stops():
    root = {
        "$defs": {
            "Point": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}},
        }
    }
    point, writer = annotation({"$ref": "#/$defs/Point"}, root)
    assert point == "ToolPoint" and len(writer.definitions) == 1
    node, writer = annotation({"$ref": "#/$defs/Node"}, root)
    assert node == "ToolNode" and "'next': NotRequired[dict[str, Any]]" in writer.definitions[0]


def test_functions_take_keyword_arguments_required_first_with_schema_defaults():
    tool = ToolInfo(
        "searchItems",
        "Find items.",
        {
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "default": 10},
                "query": {"type": "string", "description": "what to look for"},
                "tags": {"type": "array", "items": {"type": "string"}, "default": ["a"]},
                "class": {"type": "string"},
                "order": {"enum": ["asc", "desc"], "default": "asc"},
            },
            "required": ["query"],
        },
    )
    [spec] = function_specs(ServerTools("s", "s", (tool,)))
    assert spec.signature() == (
        "search_items(*, query: str, limit: int = 10, tags: list[str] | None = None, "
        "class_: str | None = None, order: Literal['asc', 'desc'] = 'asc') -> str"
    )


def listing(*tools: ToolInfo) -> ServerTools:
    return ServerTools("shop", "shop", tools, "A shop.")


PRICE = ToolInfo(
    "get_price",
    "The price of a product.",
    {
        "type": "object",
        "properties": {"sku": {"type": "string", "description": "the product"}},
        "required": ["sku"],
    },
)


def test_a_package_is_written_again_only_when_the_tool_list_changes(tmp_path):
    [first] = generate_packages([listing(PRICE)], tmp_path)
    assert first.written and (tmp_path / "shop_tools" / "get_price.py").is_file()
    manifest = json.loads((tmp_path / "shop_tools" / "_manifest.json").read_text())
    assert manifest["functions"] == ["get_price(*, sku: str) -> str"]
    [same] = generate_packages([listing(PRICE)], tmp_path)
    assert not same.written
    renamed = ToolInfo("price_of", PRICE.description, PRICE.input_schema)
    [changed] = generate_packages([listing(renamed)], tmp_path)
    assert changed.written
    assert sorted(p.name for p in (tmp_path / "shop_tools").glob("*.py")) == [
        "__init__.py",
        "_client.py",
        "price_of.py",
    ]


def test_an_edited_package_is_written_again(tmp_path):
    generate_packages([listing(PRICE)], tmp_path)
    module = tmp_path / "shop_tools" / "get_price.py"
    module.write_text(module.read_text() + "\nprint('tampered')\n")
    [again] = generate_packages([listing(PRICE)], tmp_path)
    assert again.written and "tampered" not in module.read_text()


def test_a_package_rewritten_with_matching_hashes_is_written_again(tmp_path):
    generate_packages([listing(PRICE)], tmp_path)
    package = tmp_path / "shop_tools"
    module = package / "get_price.py"
    module.write_text(module.read_text() + "\nprint('tampered')\n")
    manifest = json.loads((package / "_manifest.json").read_text())
    manifest["files"]["get_price.py"] = hashlib.sha256(module.read_bytes()).hexdigest()
    (package / "_manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    [again] = generate_packages([listing(PRICE)], tmp_path)
    assert again.written and "tampered" not in module.read_text()


def test_docstrings_are_the_descriptions_and_quotes_stay_harmless(tmp_path):
    odd = ToolInfo("odd", 'Says """hi""" and \\ backslashes.', {"type": "object"})
    generate_packages([listing(odd)], tmp_path)
    source = (tmp_path / "shop_tools" / "odd.py").read_text()
    namespace: dict = {}
    exec(compile(source.replace("from ._client import call_api", ""), "odd.py", "exec"), namespace)
    assert namespace["odd"].__doc__.startswith('Says """hi""" and \\ backslashes.')


async def test_generated_wrappers_of_a_real_server_type_check_with_mypy(tmp_path, shop_config):
    from tui_agent.tools import ToolServers

    async with ToolServers(shop_config) as servers:
        generated = generate_packages([*servers.listings, WORKSPACE_TOOLS], tmp_path)
    assert [g.server.package for g in generated] == ["shop_tools", "workspace_tools"]
    signatures = {spec.name: spec.signature() for spec in generated[0].functions}
    assert signatures["place_order"] == (
        "place_order(*, lines: list[PlaceOrderOrderLine], address: PlaceOrderAddress, "
        "express: bool = False, note: str | None = None) -> str"
    )
    assert signatures["slow_echo"] == "slow_echo(*, text: str, delay: float = 0.0) -> str"
    user = tmp_path / "program.py"
    user.write_text(
        "from shop_tools import get_price, place_order, ToolCallFailed\n"
        "from workspace_tools import read_workspace_file\n"
        "price: str = get_price(sku='kettle', currency='USD')\n"
        "order = place_order(lines=[{'sku': 'lamp', 'quantity': 2}],\n"
        "                    address={'street': 'Main St 1', 'city': 'Ghent'})\n"
        "text: str = read_workspace_file(filepath='data/notes.txt')\n"
    )
    clean = _mypy(tmp_path, "shop_tools", "workspace_tools", "program.py")
    assert clean.returncode == 0, clean.stdout
    user.write_text(
        "from shop_tools import get_price, place_order\n"
        "get_price(sku=3, currency='GBP')\n"
        "place_order(lines=[{'sku': 'lamp'}], address={'city': 'Ghent'})\n"
    )
    wrong = _mypy(tmp_path, "program.py")
    assert wrong.returncode == 1
    assert (
        'Argument "sku" to "get_price" has incompatible type "int"; expected "str"' in wrong.stdout
    )
    assert "\"Literal['GBP']\"" in wrong.stdout
    assert 'Missing key "quantity"' in wrong.stdout and 'Missing key "street"' in wrong.stdout


def _mypy(folder: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *targets],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
