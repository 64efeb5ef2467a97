"""Pydantic models in the shapes Python users bring, for the schema corpus.

Each model's ``model_json_schema()`` is a corpus schema (named ``pydantic-<Model>``), and each
``SAMPLES`` entry is a valid instance of it (round-tripped through the provider schema).
Written for this project; shapes after the pydantic and OpenAI structured-output docs: nested
models whose fields carry descriptions (``$ref`` with a sibling ``description``), optional
fields, enums and literals, discriminated unions, lists and dicts of models, recursion,
constrained types, dates, tuples, sets and strict (``extra="forbid"``) models.
"""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field


class Priority(enum.Enum):
    low = "low"
    medium = "medium"
    high = "high"


class Address(BaseModel):
    """A postal address."""

    street: str = Field(description="Street and number")
    city: str
    postcode: str | None = Field(default=None, pattern=r"^[0-9A-Z -]{3,10}$")
    country: str = Field(default="DE", min_length=2, max_length=2, description="ISO 3166-1 alpha-2")


class Person(BaseModel):
    name: str = Field(description="Full name as written")
    age: int | None = Field(default=None, ge=0, le=150)
    email: str | None = None
    home: Address = Field(description="Where the person lives")
    work: Address | None = Field(default=None, description="Office address, if any")
    tags: list[str] = Field(default_factory=list, max_length=5)


class LineItem(BaseModel):
    sku: Annotated[str, Field(pattern=r"^[A-Z]{3}-\d{4}$")]
    quantity: Annotated[int, Field(gt=0)]
    unit_price: float = Field(ge=0, description="Price per unit in EUR")


class Invoice(BaseModel):
    model_config = ConfigDict(extra="forbid", title="Invoice")

    number: str
    issued: dt.date
    due: dt.date | None = None
    customer: Person = Field(description="Who pays")
    items: list[LineItem] = Field(min_length=1)
    priority: Priority = Priority.medium
    notes: str | None = None


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]
    good_boy: bool = True


class Pet(BaseModel):
    pet: Cat | Dog = Field(discriminator="kind", description="The animal")
    owner: str


class TreeNode(BaseModel):
    label: str
    children: list[TreeNode] = Field(default_factory=list, description="Sub-nodes, possibly empty")


class Event(BaseModel):
    id: uuid.UUID
    at: dt.datetime
    kind: Literal["created", "updated", "deleted"]
    payload: dict[str, int] = Field(default_factory=dict)
    source: Union[str, int, None] = None  # noqa: UP007 - the shape users write


class Matrix(BaseModel):
    size: tuple[int, int]
    cells: list[list[float]]
    labels: set[str] = Field(default_factory=set)


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    theme: Literal["light", "dark"] = "light"
    font_size: int = Field(default=12, ge=6, le=72, multiple_of=2)
    shortcuts: dict[str, str] = Field(default_factory=dict)
    retries: int = 3


class Meeting(BaseModel):
    title: str
    when: dt.datetime
    attendees: list[Person] = Field(description="Everyone invited")
    organiser: Person = Field(description="Who sent the invitation")
    room: str | None = None
    recurring: bool = False


class Contact(BaseModel):
    name: str
    phones: list[Annotated[str, Field(min_length=3)]] = Field(default_factory=list)
    primary: Literal[True] = True


class Review(BaseModel):
    """A product review (the OpenAI structured-outputs guide's shape)."""

    sentiment: Literal["positive", "neutral", "negative"]
    score: int = Field(ge=1, le=5)
    summary: str
    pros: list[str]
    cons: list[str]


class Step(BaseModel):
    explanation: str
    output: str


class MathReasoning(BaseModel):
    """The OpenAI cookbook's chain-of-thought example."""

    steps: list[Step]
    final_answer: str


class Org(BaseModel):
    name: str
    departments: list[Department]
    ceo: Employee | None = Field(default=None, description="Chief executive, if named")


class Department(BaseModel):
    name: str
    head: Employee = Field(description="Who runs it")
    staff: list[Employee] = Field(default_factory=list)
    sub: list[Department] = Field(default_factory=list, description="Sub-departments")


class Employee(BaseModel):
    name: str
    role: str | None = None
    reports_to: Employee | None = Field(default=None, description="Manager, if known")


class Anything(BaseModel):
    """Free-form parts: strict mode cannot express these (turned off with a reason)."""

    name: str
    extra: dict[str, Any]
    value: Any = None


Org.model_rebuild()
Department.model_rebuild()
TreeNode.model_rebuild()

MODELS: list[type[BaseModel]] = [
    Address, Person, LineItem, Invoice, Pet, TreeNode, Event, Matrix, Settings, Meeting, Contact,
    Review, MathReasoning, Org, Department, Employee, Anything,
]

_ADDRESS = {"street": "Main St 1", "city": "Berlin"}
_PERSON = {"name": "Ann Lee", "home": _ADDRESS}
SAMPLES: dict[str, list[Any]] = {
    "Address": [_ADDRESS, {"street": "Rue 2", "city": "Paris", "postcode": "75001", "country": "FR"}],
    "Person": [_PERSON, {"name": "Bo", "age": 40, "email": "bo@example.com", "home": _ADDRESS, "work": _ADDRESS, "tags": ["a", "b"]}],
    "LineItem": [{"sku": "ABC-1234", "quantity": 2, "unit_price": 9.5}],
    "Invoice": [
        {"number": "R-1", "issued": "2024-05-01", "customer": _PERSON, "items": [{"sku": "ABC-1234", "quantity": 1, "unit_price": 1.0}]},
        {"number": "R-2", "issued": "2024-05-01", "due": "2024-06-01", "customer": _PERSON, "priority": "high", "notes": "x",
         "items": [{"sku": "XYZ-0001", "quantity": 3, "unit_price": 0}]},
    ],
    "Pet": [{"pet": {"kind": "cat", "lives": 7}, "owner": "Ann"}, {"pet": {"kind": "dog"}, "owner": "Bo"}],
    "TreeNode": [{"label": "root", "children": [{"label": "a", "children": [{"label": "b"}]}, {"label": "c"}]}],
    "Event": [{"id": "3fa85f64-5717-4562-b3fc-2c963f66afa6", "at": "2024-05-01T10:00:00Z", "kind": "created", "payload": {"n": 1}, "source": 3}],
    "Matrix": [{"size": [2, 2], "cells": [[1.0, 2.0], [3.0, 4.5]], "labels": ["x", "y"]}],
    "Settings": [{}, {"theme": "dark", "font_size": 14, "shortcuts": {"save": "ctrl+s"}}],
    "Meeting": [{"title": "Sync", "when": "2024-05-01T10:00:00+02:00", "attendees": [_PERSON], "organiser": _PERSON, "room": "4.01"}],
    "Contact": [{"name": "Cy", "phones": ["123", "4567"]}],
    "Review": [{"sentiment": "positive", "score": 4, "summary": "good", "pros": ["fast"], "cons": []}],
    "MathReasoning": [{"steps": [{"explanation": "add", "output": "2"}], "final_answer": "2"}],
    "Org": [{"name": "Acme", "departments": [{"name": "R&D", "head": {"name": "Di"}, "sub": [{"name": "Lab", "head": {"name": "Ed", "reports_to": {"name": "Di"}}}]}]}],
    "Department": [{"name": "Ops", "head": {"name": "Fa", "role": "lead"}, "staff": [{"name": "Gu"}]}],
    "Employee": [{"name": "Ha", "reports_to": {"name": "Io", "reports_to": {"name": "Jo"}}}],
    "Anything": [{"name": "n", "extra": {"k": [1, {"a": None}]}, "value": "v"}],
}


def schemas() -> dict[str, dict[str, Any]]:
    """Corpus name → the model's JSON Schema."""
    return {f"pydantic-{m.__name__}": m.model_json_schema() for m in MODELS}
