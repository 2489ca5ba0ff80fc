"""A Python implementation of examples/petstore, correct, plus copies with a planted bug each."""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, ApiError, is_int, is_str, need

TAGS = ("dog", "cat", "bird")


def _pet_ok(id: Any, name: Any, price: Any, tag: Any) -> bool:
    return (
        is_int(id)
        and id >= 1
        and is_str(name)
        and len(name) >= 1
        and is_int(price)
        and 0 <= price <= 1000
        and (tag is ABSENT or (is_str(tag) and tag in TAGS))
    )


class PetStore:
    def __init__(self) -> None:
        self.user: str | None = None
        self.balance = 100
        self.pets: dict[int, dict[str, Any]] = {}

    def login(self, name: Any) -> dict[str, str]:
        need(is_str(name) and len(name) >= 1, 422)
        self.user = name
        return {"user": name}

    def logout(self) -> None:
        need(self.user is not None, 401, "not logged in")
        self.user = None

    def addPet(self, id: Any, name: Any, price: Any, tag: Any = ABSENT) -> dict[str, Any]:
        need(_pet_ok(id, name, price, tag), 422)
        need(self.user is not None, 401, "not logged in")
        need(id not in self.pets, 409, "pet exists")
        pet = {"id": id, "name": name, "price": price}
        if tag is not ABSENT:
            pet["tag"] = tag
        self.pets[id] = pet
        return dict(pet)

    def getPet(self, petId: Any) -> dict[str, Any]:
        need(is_int(petId), 422)
        need(petId in self.pets, 404, "no such pet")
        return dict(self.pets[petId])

    def adopt(self, petId: Any) -> dict[str, int]:
        need(is_int(petId), 422)
        need(self.user is not None, 401, "not logged in")
        need(petId in self.pets, 404, "no such pet")
        need(self.pets[petId]["price"] <= self.balance, 402, "insufficient funds")
        self.balance -= self.pets.pop(petId)["price"]
        return {"balance": self.balance}

    def deletePet(self, petId: Any) -> None:
        need(is_int(petId), 422)
        need(self.user is not None, 401, "not logged in")
        need(petId in self.pets, 404, "no such pet")
        del self.pets[petId]

    def countPets(self) -> dict[str, int]:
        return {"count": len(self.pets)}


class UseAfterDeleteStore(PetStore):
    """Planted bug: deleting marks a pet as gone, but getPet still serves it."""

    def __init__(self) -> None:
        super().__init__()
        self.deleted: dict[int, dict[str, Any]] = {}

    def deletePet(self, petId: Any) -> None:
        need(is_int(petId), 422)
        need(self.user is not None, 401, "not logged in")
        need(petId in self.pets, 404, "no such pet")
        self.deleted[petId] = self.pets.pop(petId)

    def getPet(self, petId: Any) -> dict[str, Any]:
        if is_int(petId) and petId in self.deleted:
            return dict(self.deleted[petId])
        return super().getPet(petId)


class WrongStatusStore(PetStore):
    """Planted bug: an adoption the wallet cannot pay for answers 400 instead of 402."""

    def adopt(self, petId: Any) -> dict[str, int]:
        if (
            is_int(petId)
            and self.user is not None
            and petId in self.pets
            and self.pets[petId]["price"] > self.balance
        ):
            raise ApiError(400, "too expensive")
        return super().adopt(petId)


class CrashingStore(PetStore):
    """Planted bug: a pet name outside ASCII crashes the name index."""

    def addPet(self, id: Any, name: Any, price: Any, tag: Any = ABSENT) -> dict[str, Any]:
        if is_str(name) and self.user is not None:
            name.encode("ascii")  # UnicodeEncodeError on unusual input
        return super().addPet(id, name, price, tag)
