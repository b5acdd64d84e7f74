"""Reading and writing the till's JSON files."""

from __future__ import annotations

import json
from pathlib import Path

from cafe.models import Order, Product


def load_orders(path: str | Path) -> list[Order]:
    """The orders in a JSON file written by the till."""
    with open(path, encoding="utf-8") as handle:
        return [Order.from_dict(item) for item in json.load(handle)]


def save_orders(path: str | Path, orders: list[Order]) -> None:
    """Write `orders` back in the till's format."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump([order.to_dict() for order in orders], handle, indent=2,
                  ensure_ascii=False)


def load_menu(path: str | Path) -> dict[str, Product]:
    """The menu, by product name."""
    with open(path, encoding="utf-8") as handle:
        return {item["name"]: Product.from_dict(item)
                for item in json.load(handle)}


def save_menu(path: str | Path, menu: dict[str, Product]) -> None:
    """Write the menu back, sorted by product name."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump([menu[name].to_dict() for name in sorted(menu)], handle,
                  indent=2, ensure_ascii=False)


def find_order(orders: list[Order], order_id: int) -> Order | None:
    """The order with this id, or None."""
    for order in orders:
        if order.id == order_id:
            return order
    return None
