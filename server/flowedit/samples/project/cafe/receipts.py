"""Receipts, as printed at the till."""

from __future__ import annotations

from cafe.models import Order, Product
from cafe.pricing import line_total, order_total, vat_of

WIDTH = 32


def receipt(order: Order, menu: dict[str, Product]) -> str:
    """A receipt for one order, `WIDTH` columns wide."""
    when = order.created.strftime("%Y-%m-%d %H:%M")
    lines = [f"Order {order.id}".center(WIDTH), when.center(WIDTH), ""]
    for line in order.lines:
        label = f"{line.quantity} x {line.product}"
        amount = f"{line_total(line):.2f}"
        room = WIDTH - len(amount)
        lines.append(f"{label[: room - 1]:<{room}}{amount}")
    lines.append("-" * WIDTH)
    lines.append(f"{'Total':<{WIDTH - 10}}{order_total(order):>10.2f}")
    lines.append(f"{'incl. VAT':<{WIDTH - 10}}{vat_of(order, menu):>10.2f}")
    return "\n".join(lines)
