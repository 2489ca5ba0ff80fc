"""A Gymnasium environment over a contract's simulator, for training tool-using agents.

Spaces (all text is JSON, ASCII-escaped, so that it fits the declared charset):

* action: ``Dict(tool=Text, input=Text)``: the operation's name and its input as a JSON object.
  ``step`` also takes ``{"tool": name, "input": {...}}`` with the input as a dict.
* observation: ``Dict(status=Discrete(600), output=Text)`` (and ``state=Text`` with
  ``observe_state=True``): the response's status (0 after ``reset``) and its output (or
  ``{"error": ...}`` for a rejected call) as JSON; text longer than ``MAX_TEXT`` is cut.
* reward: ``Rewards(goal=1.0, forbidden=-1.0, step=0.0)`` by default: the goal reached ends the
  episode (``terminated``) with ``goal``; a call the contract forbids earns ``forbidden``; anything
  else ``step``. Pass other ``Rewards`` or a function ``(state, response, reached) -> float``.
* truncated after ``max_steps`` calls.

``make_env(contract, goal=None, max_steps=50, seed=None)`` builds one; the environment is also
registered as ``"envfactory/Contract-v0"`` (``gymnasium.make(ENV_ID, contract="bank.yaml")``).

Imports Gymnasium and this layer; never ``envfactory.solver``.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import gymnasium
import orjson
from gymnasium import spaces

from envfactory.contracts.model import Contract
from envfactory.contracts.values import FrozenMap
from envfactory.statemachine.sampling import derive_seed
from envfactory.statemachine.simulator import Response, Simulator

ENV_ID = "envfactory/Contract-v0"
MAX_TEXT = 8192
MAX_STATUS = 600
CHARSET = "".join(chr(c) for c in range(32, 127))
TOOL_CHARSET = string.ascii_letters + string.digits + "_-.:/"


@attrs.frozen(slots=True)
class Rewards:
    """The reward of each outcome of a step."""

    goal: float = 1.0
    forbidden: float = -1.0
    step: float = 0.0


RewardFn = Callable[[FrozenMap, Response, bool], float]


def _text(value: Any) -> str:
    try:
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS).decode("utf-8")
    except TypeError:
        text = repr(value)
    text = text.encode("ascii", "backslashreplace").decode("ascii")
    text = "".join(c if c in CHARSET else " " for c in text)
    return text[:MAX_TEXT]


class ContractEnv(gymnasium.Env[dict[str, Any], dict[str, Any]]):
    """One episode is one session with the simulated API."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        contract: Contract | str | Path,
        goal: str | None = None,
        max_steps: int = 50,
        seed: int | None = None,
        reward: Rewards | RewardFn | None = None,
        observe_state: bool = False,
        render_mode: str | None = None,
    ) -> None:
        if isinstance(contract, str | Path):
            from envfactory.contracts.loader import load

            contract = load(contract)
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.contract = contract
        self.goal_name = goal
        self.max_steps = max_steps
        self.render_mode = render_mode
        self.observe_state = observe_state
        self.rewards = reward if reward is not None else Rewards()
        self._goal: Callable[[FrozenMap], bool] | None = None
        if goal is not None:
            from envfactory.statemachine.walk import goal_predicate

            self._goal = goal_predicate(contract, goal)
        self._base_seed = seed
        self.sim = Simulator(contract, seed=seed or 0)
        self._steps = 0
        self._last: tuple[str, Any, Response] | None = None
        self.tools = tuple(sorted(contract.operations))
        self.action_space = spaces.Dict(
            {
                "tool": spaces.Text(max_length=128, min_length=1, charset=TOOL_CHARSET),
                "input": spaces.Text(max_length=MAX_TEXT, min_length=0, charset=CHARSET),
            }
        )
        observed: dict[str, spaces.Space[Any]] = {
            "status": spaces.Discrete(MAX_STATUS),
            "output": spaces.Text(max_length=MAX_TEXT, min_length=0, charset=CHARSET),
        }
        if observe_state:
            observed["state"] = spaces.Text(max_length=MAX_TEXT, min_length=0, charset=CHARSET)
        self.observation_space = spaces.Dict(observed)

    def _observe(self, status: int, output: Any) -> dict[str, Any]:
        obs: dict[str, Any] = {"status": min(max(status, 0), MAX_STATUS - 1), "output": _text(output)}
        if self.observe_state:
            obs["state"] = _text(self.sim.state_json())
        return obs

    def reset(
        self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            sim_seed = derive_seed("gym", seed) % (1 << 31)
        elif self._base_seed is not None and self._steps == 0 and self._last is None:
            sim_seed = self._base_seed
        else:
            sim_seed = int(self.np_random.integers(0, 1 << 31))
        initial = (options or {}).get("initial")
        self.sim.reset(seed=sim_seed, initial=initial)
        self._steps = 0
        self._last = None
        return self._observe(0, None), {"tools": list(self.tools), "seed": sim_seed}

    def step(self, action: Mapping[str, Any]) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        tool, value, problem = _decode(action)
        if problem is not None:
            response = Response(400, None, problem, None, False)
        else:
            response = self.sim.call(tool, value)
        self._steps += 1
        self._last = (tool, value, response)
        reached = bool(response.accepted and self._goal is not None and self._goal(self.sim.state))
        if callable(self.rewards):
            reward = float(self.rewards(self.sim.state, response, reached))
        elif reached:
            reward = self.rewards.goal
        elif not response.accepted:
            reward = self.rewards.forbidden
        else:
            reward = self.rewards.step
        output = response.output if response.accepted else {"error": response.error}
        info: dict[str, Any] = {"accepted": response.accepted, "error": response.error}
        if response.failure is not None:
            info["kind"] = response.failure.kind
            info["clause"] = response.failure.clause_text
        truncated = not reached and self._steps >= self.max_steps
        return self._observe(response.status, output), reward, reached, truncated, info

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        if self._last is None:
            return f"{self.contract.title}: {_text(self.sim.state_json())}\n"
        tool, value, response = self._last
        shown = response.output if response.accepted else response.error
        return f"{tool}({_text(value)}) -> {response.status} {_text(shown)}\n"

    def trajectory(self, id: str = "episode") -> Any:
        """The episode so far as a trajectory (for ``envfactory verify``)."""
        return self.sim.trajectory(id=id)


def _decode(action: Any) -> tuple[str, Any, str | None]:
    if not isinstance(action, Mapping):
        return "", None, "an action is {'tool': name, 'input': {...}}"
    tool = action.get("tool")
    value = action.get("input", {})
    if not isinstance(tool, str):
        return "", None, "the action's tool must be a string"
    if isinstance(value, str | bytes):
        try:
            value = orjson.loads(value) if value.strip() else {}
        except orjson.JSONDecodeError:
            return tool, None, "the action's input is not JSON"
    return tool, value, None


make_env = ContractEnv
"""A Gymnasium environment for ``contract`` (a loaded contract or a path): the class itself, so
that its parameters are stated once."""


def register() -> None:
    """Register ``ENV_ID`` with Gymnasium (once)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="envfactory.statemachine.gym_env:make_env")


register()

__all__ = ["ENV_ID", "ContractEnv", "Rewards", "make_env", "register"]
