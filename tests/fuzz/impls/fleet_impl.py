"""A car fleet (``fleet.yaml``), correct, and one class per planted bug, 6 to 10 calls deep.

A sixth held-out set (session 12), written before that session's changes to the fuzzer and
measured on its code first. Its bugs take shapes the earlier sets have less of: two distinct
drivers each with a counter at its limit; a car used several times, removed and made again; an
interaction of the two collections (a car given back credits the wrong driver); a specific
order of three calls on one driver; a limit reached across several keys (the fleet's cars out,
summed over drivers); a counter past its limit on one car; and a driver made again after a ban.
The minimal length is in each docstring, with why it cannot be shorter."""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import is_str, need


class Fleet:
    def __init__(self) -> None:
        self.cars: dict[str, dict[str, Any]] = {}
        self.drivers: dict[str, dict[str, Any]] = {}
        self.rented = 0
        self.removed_cars: dict[str, dict[str, Any]] = {}
        self.removed_drivers: dict[str, dict[str, Any]] = {}
        self.last_renter = ""
        self.banned: list[str] = []

    # -- lookups ---------------------------------------------------------------------------------

    def _car(self, plate: Any) -> dict[str, Any]:
        need(is_str(plate), 422)
        need(plate in self.cars, 404)
        return self.cars[plate]

    def _driver(self, name: Any) -> dict[str, Any]:
        need(is_str(name), 422)
        need(name in self.drivers, 404)
        return self.drivers[name]

    # -- cars ------------------------------------------------------------------------------------

    def addCar(self, plate: Any) -> None:
        need(is_str(plate) and 1 <= len(plate) <= 4, 422)
        need(plate not in self.cars, 409)
        self.cars[plate] = self._new_car(plate)

    def _new_car(self, plate: str) -> dict[str, Any]:
        return {"trips": 0, "out": False, "driver": "", "strikes": 0}

    def removeCar(self, plate: Any) -> None:
        car = self._car(plate)
        need(not car["out"], 409)
        self.removed_cars[plate] = self.cars.pop(plate)

    def service(self, plate: Any) -> None:
        car = self._car(plate)
        need(not car["out"], 409)
        need(car["trips"] >= 1, 409)
        car["trips"] = 0

    # -- drivers ---------------------------------------------------------------------------------

    def addDriver(self, name: Any) -> None:
        need(is_str(name) and 1 <= len(name) <= 4, 422)
        need(name not in self.drivers, 409)
        self.drivers[name] = self._new_driver(name)

    def _new_driver(self, name: str) -> dict[str, Any]:
        return {"out": 0, "strikes": 0}

    def removeDriver(self, name: Any) -> None:
        driver = self._driver(name)
        need(driver["out"] == 0, 409)
        self.removed_drivers[name] = self.drivers.pop(name)
        if name in self.banned:
            self.banned.remove(name)

    def strike(self, name: Any) -> None:
        driver = self._driver(name)
        need(driver["strikes"] < 2, 409)
        driver["strikes"] += 1
        if driver["strikes"] >= 2:
            self._ban(name)

    def _ban(self, name: str) -> None:
        self.banned.append(name)

    # -- rentals ---------------------------------------------------------------------------------

    def rent(self, plate: Any, driver: Any) -> None:
        need(is_str(plate) and is_str(driver), 422)
        car = self._car(plate)
        who = self._driver(driver)
        need(not car["out"], 409)
        need(not self._is_banned(driver), 423)
        need(self._trips_left(car), 423)
        need(who["out"] < 2, 429)
        need(self._fleet_room(), 429)
        car.update(out=True, driver=driver, strikes=who["strikes"])
        who["out"] += 1
        self.rented += 1
        self.last_renter = driver

    def _is_banned(self, name: str) -> bool:
        return self.drivers[name]["strikes"] >= 2

    def _trips_left(self, car: dict[str, Any]) -> bool:
        return car["trips"] < 3

    def _fleet_room(self) -> bool:
        return self.rented < 3

    def giveBack(self, plate: Any) -> None:
        car = self._car(plate)
        need(car["out"], 409)
        who = self._credited(car)
        if who in self.drivers:
            self._release(self.drivers[who], car)
        car.update(out=False, driver="", trips=car["trips"] + 1)
        self.rented -= 1

    def _credited(self, car: dict[str, Any]) -> str:
        return str(car["driver"])

    def _release(self, driver: dict[str, Any], car: dict[str, Any]) -> None:
        driver["out"] -= 1

    # -- reads -----------------------------------------------------------------------------------

    def carInfo(self, plate: Any) -> dict[str, Any]:
        car = self._car(plate)
        return {"trips": car["trips"], "out": car["out"], "driver": car["driver"]}

    def driverInfo(self, name: Any) -> dict[str, Any]:
        driver = self._driver(name)
        return {"out": driver["out"], "strikes": driver["strikes"]}

    def fleet(self) -> dict[str, Any]:
        return {"rented": self.rented}


class TwoBanned(Fleet):
    """F1, 8 calls: addCar, addDriver a, addDriver b, strike a x2, strike b x2, rent (car, a): the
    ban list holds one driver, so when a second driver is banned the first may rent again. Two
    drivers with two strikes each, a car, and the rent."""

    def _ban(self, name: str) -> None:
        self.banned[:] = [name]

    def _is_banned(self, name: str) -> bool:
        return name in self.banned


class RecreatedCar(Fleet):
    """F2, 9 calls: addCar c, addDriver, (rent c, giveBack c) x2, removeCar c, addCar c, carInfo c:
    a car made again under the plate of a removed one that made two trips keeps its trips. Two
    trips take two rentals and two returns (one car is out once at a time)."""

    def _new_car(self, plate: str) -> dict[str, Any]:
        car = super()._new_car(plate)
        old = self.removed_cars.get(plate)
        if old is not None and old["trips"] >= 2:
            car["trips"] = old["trips"]
        return car


class WrongDriverCredited(Fleet):
    """F3, 8 calls: addCar x2, addDriver a, addDriver b, rent (c1, a), rent (c2, b), giveBack c1,
    driverInfo a: a car given back credits the driver who rented last, not the car's own. Two
    rentals at once by two drivers, the earlier one returned, and a read (or ``removeDriver b``)."""

    def _credited(self, car: dict[str, Any]) -> str:
        return self.last_renter


class StrikeWhileOut(Fleet):
    """F4, 6 calls: addCar, addDriver, rent, strike, giveBack, driverInfo: a car given back by a
    driver who got a strike while it was out is not counted back (the order rent, strike, give
    back on one driver; strike, rent, give back is answered right)."""

    def _release(self, driver: dict[str, Any], car: dict[str, Any]) -> None:
        if driver["strikes"] == car["strikes"]:
            super()._release(driver, car)


class FleetSum(Fleet):
    """F5, 10 calls: addCar x4, addDriver x2, rent x4 (two by each driver): the fleet limit of
    three cars out reads the most one driver has out, not the sum over drivers, so a fourth car
    goes out. A driver has two out at most, so it takes two drivers and four cars."""

    def _fleet_room(self) -> bool:
        return max((d["out"] for d in self.drivers.values()), default=0) < 3


class FourthTrip(Fleet):
    """F6, 9 calls: addCar, addDriver, (rent, giveBack) x3, rent: a car due for service after
    three trips goes out a fourth time."""

    def _trips_left(self, car: dict[str, Any]) -> bool:
        return car["trips"] <= 3


class BannedComesBack(Fleet):
    """F7, 6 calls: addDriver a, strike a x2, removeDriver a, addDriver a, driverInfo a: a driver
    made again under the name of a removed one that was banned keeps the strikes (and may not
    rent)."""

    def _new_driver(self, name: str) -> dict[str, Any]:
        driver = super()._new_driver(name)
        old = self.removed_drivers.get(name)
        if old is not None and old["strikes"] >= 2:
            driver["strikes"] = old["strikes"]
        return driver
