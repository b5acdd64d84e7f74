"""Money: line totals, VAT and the loyalty discount."""

from __future__ import annotations

from collections import defaultdict

from cafe.models import Line, Order, Product

LOYALTY_THRESHOLD = 100.0  # a customer who spent this much gets the discount
LOYALTY_DISCOUNT = 0.05


def line_total(line: Line) -> float:
    """Price times quantity, rounded to cents."""
    return round(line.price * line.quantity, 2)


def order_total(order: Order) -> float:
    """The sum of an order's lines."""
    return round(sum(line_total(line) for line in order.lines), 2)


def vat_of(order: Order, menu: dict[str, Product]) -> float:
    """The VAT in an order's total (unknown products at the default rate)."""
    vat = 0.0
    for line in order.lines:
        product = menu.get(line.product)
        rate = product.vat_rate if product is not None else 0.07
        vat += line_total(line) * rate / (1 + rate)
    return round(vat, 2)


def spent_by_customer(orders: list[Order]) -> dict[str, float]:
    """What every customer spent, over all their orders."""
    totals = defaultdict(float)
    for order in orders:
        totals[order.customer] += order_total(order)
    return dict(totals)


def loyal_customers(orders: list[Order]) -> list[str]:
    """Customers who spent at least `LOYALTY_THRESHOLD`, by name."""
    totals = spent_by_customer(orders)
    return sorted(name for name, total in totals.items()
                  if total >= LOYALTY_THRESHOLD)


def discounted_total(order: Order, loyal: set[str]) -> float:
    """An order's total after the loyalty discount, if its customer has it."""
    total = order_total(order)
    if order.customer in loyal:
        total = total * (1 - LOYALTY_DISCOUNT)
    return round(total, 2)
