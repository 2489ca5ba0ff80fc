"""Chat server (``chat.yaml``), correct, and one class per planted bug, 7 to 10 calls deep.

A twenty-second held-out set, written without looking at the fuzzer's code. Its shapes: channels
made under a free name by someone registered (two per owner at most), public or private and with
a limit of messages standing per person, both optional; four members per channel at most, the
owner first and for good; moderators made by the owner, two at most; invites numbered by the
server (the calls on one use the number it answered), each good for an optional number of joins,
into the channel it names; members muted and unmuted by one call whose ``muted`` is optional
(absent, it mutes), and banned for good, their pinned messages unpinned; messages numbered by the
server, their author counted against the channel's limit while they stand (a delete by its author
or by a moderator gives the slot back), the limit set again by the owner but never below what
someone has standing, whether or not they are still a member; three pins per channel at most,
a deleted message unpinned. The minimal length is in each docstring, with why it cannot be shorter.

The implementation keeps some state where the contract does not look: each owner's tally of
channels, each (channel, author)'s count of messages standing (what a post and a new limit
check), each channel's count of messages, each invite's uses left and the people who took it, the
banned as a set, and a check that whoever moderates is a member (which the contract gets from
moderators being members).
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need, option

OWNED = 2  # channels per owner
SEATS = 4  # members per channel, the owner included
MODERATORS = 2  # per channel
PINS = 3  # per channel
LIMIT = 3  # messages standing per person, without `limit`
USES = 1  # joins an invite is good for, without `uses`


def _name(value: Any) -> bool:
    return is_str(value) and 1 <= len(value) <= 3


def _flag(value: Any) -> bool:
    return value is ABSENT or type(value) is bool


class Chat:
    def __init__(self) -> None:
        self.owned: dict[str, int] = {}  # the registered, by name: channels they own
        self.channels: dict[str, dict[str, Any]] = {}
        self.messages: dict[int, dict[str, Any]] = {}  # channel, author
        self.next_message = 1
        self.invites: dict[int, dict[str, Any]] = {}  # channel, left, takers
        self.next_invite = 1
        self.standing: dict[tuple[str, str], int] = {}  # (channel, author): messages standing

    # -- lookups ---------------------------------------------------------------------------------

    def _channel(self, channel: str) -> dict[str, Any]:
        need(channel in self.channels, 404)
        return self.channels[channel]

    def _message(self, message: Any) -> dict[str, Any]:
        need(message in self.messages, 404)
        return self.messages[message]

    def _moderates(self, record: dict[str, Any], user: str) -> bool:
        """The owner and the moderators, while they are members."""
        return user in record["members"] and (user == record["owner"] or user in record["moderators"])

    # -- people and channels ---------------------------------------------------------------------

    def register(self, user: Any) -> None:
        need(_name(user), 422)
        need(user not in self.owned, 409)
        self.owned[user] = 0

    def createChannel(self, channel: Any, owner: Any, limit: Any = ABSENT, private: Any = ABSENT) -> None:
        need(_name(channel) and _name(owner) and _flag(private), 422)
        most = option(limit, 2, 4, LIMIT)
        need(owner in self.owned, 404)
        need(channel not in self.channels, 409)
        need(self.owned[owner] < OWNED, 429)
        self.owned[owner] += 1
        self.channels[channel] = {
            "owner": owner,
            "private": private is not ABSENT and private,
            "limit": most,
            "members": [owner],
            "moderators": [],
            "muted": [],
            "banned": set(),
            "pinned": [],
            "messages": 0,
        }

    def join(self, channel: Any, user: Any) -> None:
        need(_name(channel) and _name(user), 422)
        record = self._channel(channel)
        need(user in self.owned, 404)
        need(user not in record["members"], 409)
        need(not record["private"], 403)
        need(not self._barred(record, user, invited=False), 403)
        need(len(record["members"]) < SEATS, 429)
        record["members"].append(user)

    def _barred(self, record: dict[str, Any], user: str, invited: bool) -> bool:
        """A ban keeps someone out for good, by join or by invite."""
        return user in record["banned"]

    def createInvite(self, channel: Any, by: Any, uses: Any = ABSENT) -> dict[str, Any]:
        need(_name(channel) and _name(by), 422)
        good_for = option(uses, 1, 3, USES)
        record = self._channel(channel)
        need(self._moderates(record, by), 403)
        number = self.next_invite
        self.next_invite += 1
        self.invites[number] = {"channel": channel, "left": good_for, "takers": set()}
        return {"invite": number}

    def accept(self, invite: Any, user: Any) -> None:
        need(is_int(invite) and _name(user), 422)
        need(invite in self.invites, 404)
        ticket = self.invites[invite]
        need(user in self.owned, 404)
        record = self.channels[ticket["channel"]]
        need(user not in record["members"], 409)
        need(not self._barred(record, user, invited=True), 403)
        need(ticket["left"] > 0, 410)
        need(len(record["members"]) < SEATS, 429)
        record["members"].append(user)
        self._use(ticket, user)

    def _use(self, ticket: dict[str, Any], user: str) -> None:
        """Every join by an invite uses it, whoever takes it."""
        ticket["left"] -= 1
        ticket["takers"].add(user)

    def leave(self, channel: Any, user: Any) -> None:
        need(_name(channel) and _name(user), 422)
        record = self._channel(channel)
        need(user in record["members"], 404)
        need(user != record["owner"], 409)
        self._leave(record, user)

    def _leave(self, record: dict[str, Any], user: str) -> None:
        """Whoever leaves is a moderator or muted no more."""
        record["members"].remove(user)
        self._drop(record["moderators"], user)
        self._drop(record["muted"], user)

    @staticmethod
    def _drop(names: list[str], user: str) -> None:
        if user in names:
            names.remove(user)

    def promote(self, channel: Any, by: Any, user: Any) -> None:
        need(_name(channel) and _name(by) and _name(user), 422)
        record = self._channel(channel)
        need(by == record["owner"], 403)
        need(user in record["members"], 404)
        need(user != record["owner"] and user not in record["moderators"], 409)
        need(len(record["moderators"]) < MODERATORS, 429)
        record["moderators"].append(user)
        self._drop(record["muted"], user)

    def ban(self, channel: Any, by: Any, user: Any) -> None:
        need(_name(channel) and _name(by) and _name(user), 422)
        record = self._channel(channel)
        need(self._moderates(record, by), 403)
        need(user in record["members"], 404)
        need(user != record["owner"], 409)
        need(by == record["owner"] or user not in record["moderators"], 403)
        record["members"].remove(user)
        self._drop(record["moderators"], user)
        self._drop(record["muted"], user)
        record["banned"].add(user)
        self._unpin_author(record, user)

    def _unpin_author(self, record: dict[str, Any], user: str) -> None:
        """The banned person's pinned messages are unpinned."""
        record["pinned"] = [m for m in record["pinned"] if self.messages[m]["author"] != user]

    def mute(self, channel: Any, by: Any, user: Any, muted: Any = ABSENT) -> None:
        need(_name(channel) and _name(by) and _name(user) and _flag(muted), 422)
        record = self._channel(channel)
        need(self._moderates(record, by), 403)
        need(user in record["members"], 404)
        need(user != record["owner"] and user not in record["moderators"], 409)
        if self._muting(record, user, muted):
            if user not in record["muted"]:
                record["muted"].append(user)
        else:
            self._drop(record["muted"], user)

    def _muting(self, record: dict[str, Any], user: str, muted: Any) -> bool:
        """A mute with nothing said mutes."""
        return True if muted is ABSENT else bool(muted)

    def setLimit(self, channel: Any, by: Any, limit: Any) -> None:
        need(_name(channel) and _name(by) and is_int(limit) and 2 <= limit <= 4, 422)
        record = self._channel(channel)
        need(by == record["owner"], 403)
        need(self._fits(channel, record, limit), 409)
        record["limit"] = limit

    def _fits(self, channel: str, record: dict[str, Any], limit: int) -> bool:
        """Nobody has more messages standing than the new limit, members or not."""
        return all(n <= limit for (where, _), n in self.standing.items() if where == channel)

    def channelInfo(self, channel: Any) -> dict[str, Any]:
        need(_name(channel), 422)
        record = self._channel(channel)
        return {
            "owner": record["owner"],
            "private": record["private"],
            "limit": record["limit"],
            "members": list(record["members"]),
            "pinned": list(record["pinned"]),
            "messages": record["messages"],
        }

    def memberInfo(self, channel: Any, user: Any) -> dict[str, Any]:
        need(_name(channel) and _name(user), 422)
        record = self._channel(channel)
        need(user in record["members"], 404)
        if user == record["owner"]:
            role = "owner"
        else:
            role = "moderator" if user in record["moderators"] else "member"
        return {"role": role, "muted": user in record["muted"]}

    # -- messages --------------------------------------------------------------------------------

    def post(self, channel: Any, user: Any) -> dict[str, Any]:
        need(_name(channel) and _name(user), 422)
        record = self._channel(channel)
        need(user in record["members"], 403)
        need(user not in record["muted"], 423)
        need(self.standing.get((channel, user), 0) < record["limit"], 429)
        number = self.next_message
        self.next_message += 1
        self.messages[number] = {"channel": channel, "author": user}
        self.standing[(channel, user)] = self.standing.get((channel, user), 0) + 1
        record["messages"] += 1
        return {"message": number}

    def deleteMessage(self, message: Any, by: Any) -> None:
        need(is_int(message) and _name(by), 422)
        text = self._message(message)
        need(self._may_delete(text, by), 403)
        record = self.channels[text["channel"]]
        del self.messages[message]
        record["messages"] -= 1
        self._drop_pin(record, message)
        self._give_back(text, by)

    def _may_delete(self, text: dict[str, Any], by: str) -> bool:
        """Its author, or someone who moderates its channel."""
        return by == text["author"] or self._moderates(self.channels[text["channel"]], by)

    @staticmethod
    def _drop_pin(record: dict[str, Any], message: int) -> None:
        if message in record["pinned"]:
            record["pinned"].remove(message)

    def _give_back(self, text: dict[str, Any], by: str) -> None:
        """A message deleted stands no more, whoever deletes it."""
        self.standing[(text["channel"], text["author"])] -= 1

    def pin(self, message: Any, by: Any) -> None:
        need(is_int(message) and _name(by), 422)
        text = self._message(message)
        record = self.channels[text["channel"]]
        need(self._moderates(record, by), 403)
        need(message not in record["pinned"], 409)
        need(len(record["pinned"]) < PINS, 429)
        record["pinned"].append(message)


class SlotKeptOnModeratorDelete(Chat):
    """C1, 8 calls: register o, register u, createChannel (c, owner o, limit 2), join (c, u), post
    (c, u) twice, deleteMessage (1 by o), post (c, u): a message deleted by someone who moderates
    its channel, not its author, does not give its author's slot back, so u, with one message
    standing of two, is refused a post (429). It needs the limit reached (two messages at least,
    the optional ``limit`` given), a member other than the deleter (a register and a join), the
    delete, and the post after it (a new limit reads the count too, but is refused only below
    three messages standing: a post more)."""

    def _give_back(self, text: dict[str, Any], by: str) -> None:
        if by == text["author"]:
            self.standing[(text["channel"], text["author"])] -= 1


class LimitIgnoresLeavers(Chat):
    """C2, 9 calls: register o, register u, createChannel c, join (c, u), post (c, u) three
    times, leave (c, u), setLimit (c, by o, 2): a new limit is checked against the members'
    messages only, not those of people who left, so it is set below the three u still has
    standing (refused, 409). It needs three messages of one person (the limit is two at least)
    who is not the owner (the owner stays), on the default limit of three, and their leave (or
    ban) before the owner sets the limit."""

    def _fits(self, channel: str, record: dict[str, Any], limit: int) -> bool:
        return all(self.standing.get((channel, m), 0) <= limit for m in record["members"])


class InviteCountsPeople(Chat):
    """C3, 9 calls: register o, register u, createChannel c, createInvite (c, by o, uses 2), accept
    (1, u), leave (c, u), accept (1, u), leave (c, u), accept (1, u): an invite counts the people
    who took it, not the joins, so a second join by the same person does not use it up, and a
    third join by an invite good for two is let through (refused, 410). It needs an invite good
    for two joins at least (the optional ``uses`` given: with one, the first join uses it up
    either way), taken twice by one person, who leaves after each join (a member is refused,
    409), and a join after that (by them or by someone else, who must register)."""

    def _use(self, ticket: dict[str, Any], user: str) -> None:
        if user not in ticket["takers"]:
            ticket["left"] -= 1
        ticket["takers"].add(user)


class ModeratorAnywhereDeletes(Chat):
    """C4, 8 calls: register o, register u, createChannel c, createChannel (d, owner o), join (d,
    u), promote (d, by o, u), post (c, o), deleteMessage (1 by u): a moderator of any channel is
    let delete any message, so u, who moderates d only, deletes a message of c (refused, 403). It
    needs two channels (one owner may have both), a moderator of one (a join and a promote: the
    owner's own rights are checked against the right channel), and a message of the other."""

    def _may_delete(self, text: dict[str, Any], by: str) -> bool:
        owner = self.channels[text["channel"]]["owner"]
        return by in (text["author"], owner) or any(by in r["moderators"] for r in self.channels.values())


class BanUnpinSkips(Chat):
    """C5, 10 calls: register o, register u, createChannel c, join (c, u), post (c, u) twice, pin
    (1 by o), pin (2 by o), ban (c, by o, u), channelInfo c: a ban unpins the banned person's
    messages by removing them from the list it walks, which skips the one after each removed, so
    message 2 stays pinned, not none. It needs two messages of one member, pinned one after the
    other (a pin of anyone else's in between would be the one skipped), their ban, and a read (or
    a pin of message 2 again) to show the list."""

    def _unpin_author(self, record: dict[str, Any], user: str) -> None:
        for message in record["pinned"]:
            if self.messages[message]["author"] == user:
                record["pinned"].remove(message)


class LeaverStaysModerator(Chat):
    """C6, 8 calls: register o, register u, createChannel c, join (c, u), promote (c, by o, u),
    leave (c, u), join (c, u), memberInfo (c, u): someone who leaves is not taken off the
    moderators, so back in the channel they read as a moderator, not a plain member. It needs a
    moderator (a member promoted), their leave and join again (while they are out, the check
    that whoever moderates is a member hides it), and a read of their role (or a promote, or a
    moderator's call)."""

    def _leave(self, record: dict[str, Any], user: str) -> None:
        record["members"].remove(user)
        self._drop(record["muted"], user)


class InvitePardonsBan(Chat):
    """C7, 7 calls: register o, register u, createChannel c, join (c, u), ban (c, by o, u),
    createInvite (c, by o), accept (1, u): a ban is checked on a join only, not on a join by an
    invite, so the banned u comes back in (refused, 403). It needs a member (a register and a
    join: only a member is banned), their ban, an invite into the channel, and its accept."""

    def _barred(self, record: dict[str, Any], user: str, invited: bool) -> bool:
        return not invited and user in record["banned"]


class MuteTogglesByDefault(Chat):
    """C8, 7 calls: register o, register u, createChannel c, join (c, u), mute (c, by o, u) twice,
    post (c, u): a mute with nothing said turns the mute over instead of muting, so a second one
    unmutes u and their post is let through (refused, 423). It needs a member (never the owner)
    muted twice without ``muted``, and a post (or a read) after."""

    def _muting(self, record: dict[str, Any], user: str, muted: Any) -> bool:
        return user not in record["muted"] if muted is ABSENT else bool(muted)
