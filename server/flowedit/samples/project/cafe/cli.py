"""`python -m cafe.cli report|receipt|loyal`: the owner's commands."""

from __future__ import annotations

import argparse
import sys

from cafe.pricing import loyal_customers
from cafe.receipts import receipt
from cafe.reports import summarize_orders
from cafe.storage import find_order, load_menu, load_orders


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cafe")
    sub = parser.add_subparsers(dest="command", required=True)
    report = sub.add_parser("report", help="totals per customer")
    report.add_argument("orders")
    report.add_argument("--limit", type=int, default=None)
    slip = sub.add_parser("receipt", help="print the receipt of one order")
    slip.add_argument("orders")
    slip.add_argument("order_id", type=int)
    slip.add_argument("--menu", default="menu.json")
    loyal = sub.add_parser(
        "loyal", help="customers who earned the loyalty discount")
    loyal.add_argument("orders")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    orders = load_orders(args.orders)
    if args.command == "report":
        rows = [order.to_dict() for order in orders]
        for row in summarize_orders(rows, limit=args.limit):
            print(f"{row['customer']:<20} {row['total']:>10.2f} "
                  f"{row['currency']}")
    elif args.command == "receipt":
        order = find_order(orders, args.order_id)
        if order is None:
            print(f"no order {args.order_id}", file=sys.stderr)
            return 1
        print(receipt(order, load_menu(args.menu)))
    elif args.command == "loyal":
        for name in loyal_customers(orders):
            print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
