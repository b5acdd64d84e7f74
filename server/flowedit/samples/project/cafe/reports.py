"""Reports for the owner: totals per customer, per day and per product."""

import json
import sys

from cafe.pricing import line_total, order_total
from cafe.storage import load_orders


def summarize_orders(orders, currency="EUR", limit=None):
    result = {}
    for o in orders:
        if "currency" in o and o["currency"] != currency:
            continue
        c = o["customer"]
        t = 0
        for l in o["lines"]:
            t = t + l["price"] * l["quantity"]
        if c in result:
            result[c] = result[c] + t
        else:
            result[c] = t
    out = []
    for c in sorted(result, key=lambda c: result[c], reverse=True):
        out.append({"customer": c, "total": round(result[c], 2),
                    "currency": currency})
    if limit:
        out = out[:limit]
    return out


def sales_by_product(path):
    """How many of each product were sold, and for how much."""
    orders = load_orders(path)
    sold = {}
    for order in orders:
        for line in order.lines:
            count, amount = sold.get(line.product, (0, 0.0))
            sold[line.product] = (count + line.quantity,
                                  amount + line_total(line))
    return dict(sorted(sold.items()))


def main(path):
    with open(path, encoding="utf-8") as f:
        orders = json.load(f)
    for row in summarize_orders(orders, limit=10):
        print(f"{row['customer']:<20} {row['total']:>10.2f} {row['currency']}")


if __name__ == "__main__":
    main(sys.argv[1])
