"""A hotel (``hotel.yaml``), correct, and one class per planted bug, 8 to 11 calls deep.

Written as a held-out set before the fuzzer was tuned on it: each bug needs several distinct
keys, a counter at a limit or repeated operations on one resource."""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import is_int, is_str, need


class Hotel:
    def __init__(self) -> None:
        self.rooms: dict[str, dict[str, Any]] = {}
        self.guests: dict[str, dict[str, Any]] = {}
        self.stays = 0

    def _room(self, number: Any) -> dict[str, Any]:
        need(is_str(number), 422)
        need(number in self.rooms, 404)
        return self.rooms[number]

    def _guest(self, name: Any) -> dict[str, Any]:
        need(is_str(name), 422)
        need(name in self.guests, 404)
        return self.guests[name]

    def addRoom(self, number: Any, capacity: Any) -> None:
        need(is_str(number) and 1 <= len(number) <= 4 and is_int(capacity) and 1 <= capacity <= 3, 422)
        need(number not in self.rooms, 409)
        self.rooms[number] = {"capacity": capacity, "guests": 0, "open": False, "visits": 0}

    def openRoom(self, number: Any) -> None:
        room = self._room(number)
        need(not room["open"], 409)
        room["open"] = True

    def _may_close(self, room: dict[str, Any]) -> bool:
        return room["guests"] == 0

    def closeRoom(self, number: Any) -> None:
        room = self._room(number)
        need(room["open"], 409)
        need(self._may_close(room), 409)
        room["open"] = False

    def register(self, name: Any) -> None:
        need(is_str(name) and 1 <= len(name) <= 12, 422)
        need(name not in self.guests, 409)
        self.guests[name] = {"room": None, "nights": 0, "extended": 0}

    def _has_space(self, room: dict[str, Any]) -> bool:
        return room["guests"] < room["capacity"]

    def _count_stay(self) -> None:
        self.stays += 1

    def checkIn(self, name: Any, number: Any) -> None:
        guest = self._guest(name)
        room = self._room(number)
        need(guest["room"] is None, 409)
        need(room["open"], 409)
        need(self._has_space(room), 409)
        guest.update(room=number, nights=1, extended=0)
        room["guests"] += 1
        room["visits"] += 1
        self._count_stay()

    def _may_extend(self, guest: dict[str, Any]) -> bool:
        return guest["nights"] < 4

    def extend(self, name: Any) -> None:
        guest = self._guest(name)
        need(guest["room"] is not None, 409)
        need(self._may_extend(guest), 409)
        guest["nights"] += 1
        guest["extended"] += 1

    def _leave_room(self, guest: dict[str, Any]) -> None:
        self.rooms[guest["room"]]["guests"] -= 1

    def checkOut(self, name: Any) -> None:
        guest = self._guest(name)
        need(guest["room"] is not None, 409)
        self._leave_room(guest)
        guest.update(room=None, nights=0)

    def _moved(self, old: str, new: str) -> None:
        self.rooms[old]["guests"] -= 1

    def move(self, name: Any, number: Any) -> None:
        guest = self._guest(name)
        room = self._room(number)
        need(guest["room"] is not None, 409)
        need(guest["room"] != number, 409)
        need(room["open"], 409)
        need(self._has_space(room), 409)
        self._moved(guest["room"], number)
        room["guests"] += 1
        guest["room"] = number

    def roomInfo(self, number: Any) -> dict[str, Any]:
        room = self._room(number)
        return {"guests": room["guests"], "open": room["open"]}

    def occupancy(self) -> dict[str, Any]:
        return {"stays": self.stays, "inside": sum(r["guests"] for r in self.rooms.values())}


class FullHouse(Hotel):
    """H1, 10 calls: addRoom(capacity 3), openRoom, register x4, checkIn x4: a room of three
    takes a fourth guest (the capacity check is off by one for the largest rooms only)."""

    def _has_space(self, room: dict[str, Any]) -> bool:
        limit = room["capacity"] + 1 if room["capacity"] == 3 else room["capacity"]
        return room["guests"] < limit


class LongStay(Hotel):
    """H2, 8 calls: addRoom, openRoom, register, checkIn, extend x4: the fourth extension
    takes a stay past four nights."""

    def _may_extend(self, guest: dict[str, Any]) -> bool:
        return guest["nights"] <= 4


class BusyClose(Hotel):
    """H3, 9 calls: addRoom, openRoom, register, then checkIn, checkOut, checkIn, checkOut,
    checkIn, closeRoom: a room with three visits closes with a guest inside."""

    def _may_close(self, room: dict[str, Any]) -> bool:
        return room["guests"] == 0 or room["visits"] >= 3


class StaleCount(Hotel):
    """H4, 8 calls: addRoom, openRoom, register, checkIn, extend, extend, checkOut, roomInfo:
    a guest who extended twice leaves the room's count behind."""

    def _leave_room(self, guest: dict[str, Any]) -> None:
        if guest["extended"] < 2:
            super()._leave_room(guest)


class StaysCapped(Hotel):
    """H5, 11 calls: addRoom(3), openRoom, register x3, checkIn x3, checkOut, checkIn,
    occupancy: the stay counter saturates at three."""

    def _count_stay(self) -> None:
        self.stays = min(self.stays + 1, 3)


class MoveLeaks(Hotel):
    """H6, 8 calls: addRoom x2, openRoom x2, register, checkIn, move, roomInfo: moving to a
    room whose number sorts first leaves the old room's count behind (two distinct rooms)."""

    def _moved(self, old: str, new: str) -> None:
        if new > old:
            super()._moved(old, new)
