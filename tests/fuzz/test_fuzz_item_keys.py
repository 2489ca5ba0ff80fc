"""Keys inside the items of a list input (``steering.ItemKey``): an order of two lines names two
products that exist, and two distinct ones, as the warehouse's ``placeOrder`` requires. Key
fields were top-level input fields only: in a 20 s run on the correct warehouse, 923 two-line
orders were sent and none was accepted, so no bug that needs one (a limit counted over the
first line only, a cancel that frees every line in the first line's lot) could show."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import envfactory
from envfactory.fuzz import oracle
from envfactory.fuzz.machine import Case, plans
from envfactory.fuzz.steering import ItemKey, item_keys

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chat_cases import impl_case
from fuzz_sources import Seeded

IMPLS = Path(__file__).resolve().parent / "impls"
WAREHOUSE = envfactory.load(IMPLS / "warehouse.yaml")

# products p and q, three units of each in bins a and b
STOCKED: list[tuple[str, dict[str, Any]]] = [
    ("addProduct", {"product": "p"}),
    ("addProduct", {"product": "q"}),
    ("addBin", {"bin": "a", "capacity": 4}),
    ("addBin", {"bin": "b", "capacity": 4}),
    ("receive", {"product": "p", "bin": "a", "quantity": 3, "shelf": 3}),
    ("receive", {"product": "q", "bin": "b", "quantity": 3, "shelf": 3}),
]


def _case() -> Case:
    return impl_case("warehouse", WAREHOUSE, "Warehouse", STOCKED)


def test_the_item_keys_are_read_off_the_quantifier_and_the_indexed_items() -> None:
    assert item_keys(WAREHOUSE.operations["placeOrder"], WAREHOUSE) == (
        ItemKey("lines", "product", "products"),
    )
    # a top-level key is key_fields's, not an item key; an operation without a list has none
    assert item_keys(WAREHOUSE.operations["receive"], WAREHOUSE) == ()
    for path in sorted(IMPLS.glob("*.yaml")):
        if path.stem != "warehouse":
            contract = envfactory.load(path)
            assert all(item_keys(op, contract) == () for op in contract.operations.values()), path.stem


def test_two_lines_name_two_distinct_products_and_the_model_accepts_such_orders() -> None:
    case = _case()
    (plan,) = (p for p in plans(case.session) if p.name == "placeOrder")
    two = both = fits = accepted = 0
    for seed in range(200):
        value = case.draw(plan, Seeded(seed), breaking=False)
        lines = value.get("lines") if isinstance(value, dict) else None
        if not (isinstance(lines, list) and len(lines) == 2 and all(isinstance(x, dict) for x in lines)):
            continue
        two += 1
        products = [x.get("product") for x in lines]
        both += set(products) == {"p", "q"}
        if set(products) == {"p", "q"} and all(x.get("quantity", 3) <= 2 for x in lines):
            fits += 1  # within the limit of two units a customer has of a product
            accepted += oracle.judge(case.session.model, case.state, plan.op, value).accepted
    # three draws in four take live keys, and two lines then name both products; with stock of
    # each and within the customer's limit, the model accepts every such order
    assert two >= 20 and both >= two // 2 and fits >= 10 and accepted == fits, (two, both, fits, accepted)
