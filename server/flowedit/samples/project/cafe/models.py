"""What the till sends: orders made of lines, each a product at a price."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class Line:
    """One product on an order."""

    product: str
    price: float
    quantity: int = 1

    @classmethod
    def from_dict(cls, data: dict) -> Line:
        return cls(product=data["product"], price=float(data["price"]),
                   quantity=int(data.get("quantity", 1)))

    def to_dict(self) -> dict:
        return {"product": self.product, "price": self.price,
                "quantity": self.quantity}


@dataclass(frozen=True)
class Order:
    """One order as the till recorded it."""

    id: int
    customer: str
    created: datetime
    lines: list[Line] = field(default_factory=list)
    currency: str = "EUR"

    @classmethod
    def from_dict(cls, data: dict) -> Order:
        return cls(
            id=int(data["id"]),
            customer=data["customer"].strip(),
            created=datetime.fromisoformat(data["created"]),
            lines=[Line.from_dict(line) for line in data["lines"]],
            currency=data.get("currency", "EUR"),
        )

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "customer": self.customer,
            "created": self.created.isoformat(),
            "lines": [line.to_dict() for line in self.lines],
            "currency": self.currency,
        }


@dataclass(frozen=True)
class Product:
    """A product on the menu."""

    name: str
    price: float
    vat_rate: float = 0.07

    @classmethod
    def from_dict(cls, data: dict) -> Product:
        return cls(name=data["name"], price=float(data["price"]),
                   vat_rate=float(data.get("vat_rate", 0.07)))

    def to_dict(self) -> dict:
        return {"name": self.name, "price": self.price,
                "vat_rate": self.vat_rate}
