"""The Gymnasium environment: passes the checker, rewards goals and forbidden calls, truncates."""

from __future__ import annotations

import warnings
from pathlib import Path

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import envfactory
from envfactory.statemachine.gym_env import ENV_ID, Rewards, make_env

ROOT = Path(__file__).resolve().parents[2]
BANK = ROOT / "examples" / "bank" / "bank.yaml"


@pytest.fixture(scope="module")
def bank() -> envfactory.Contract:
    return envfactory.load(BANK)


@pytest.mark.parametrize("observe_state", [False, True])
def test_passes_the_gymnasium_checker(bank: envfactory.Contract, observe_state: bool) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(make_env(bank, goal="two_accounts", observe_state=observe_state), skip_render_check=True)


def test_rewards_termination_and_observations(bank: envfactory.Contract) -> None:
    env = make_env(bank, goal="two_accounts", max_steps=10, observe_state=True)
    obs, info = env.reset(seed=1)
    assert obs["status"] == 0 and "open" in info["tools"]
    assert env.observation_space.contains(obs)
    obs, reward, terminated, truncated, _ = env.step(
        {"tool": "open", "input": {"account": "AA01", "owner": "a"}}
    )
    assert (obs["status"], reward, terminated, truncated) == (200, 0.0, False, False)
    obs, reward, terminated, _, info = env.step(
        {"tool": "open", "input": '{"account": "AA01", "owner": "a"}'}
    )
    assert (obs["status"], reward, terminated) == (409, -1.0, False)
    assert info["kind"] == "precondition" and "account exists" in obs["output"]
    obs, reward, terminated, _, _ = env.step({"tool": "open", "input": {"account": "BB01", "owner": "b"}})
    assert (reward, terminated) == (1.0, True)
    assert '"BB01"' in obs["state"]
    (result,) = envfactory.verify(bank, [env.trajectory()], allow_rejected=True)
    assert result.verdict == "valid", result.message


def test_truncates_at_max_steps_and_rewards_are_configurable(bank: envfactory.Contract) -> None:
    env = make_env(bank, max_steps=3, reward=Rewards(goal=5.0, forbidden=-0.5, step=0.1))
    env.reset(seed=0)
    outcomes = [env.step({"tool": "balance", "input": {"account": "NO01"}}) for _ in range(3)]
    assert [o[1] for o in outcomes] == [-0.5, -0.5, -0.5]
    assert [o[3] for o in outcomes] == [False, False, True]
    custom = make_env(bank, reward=lambda state, response, reached: float(response.status))
    custom.reset(seed=0)
    assert custom.step({"tool": "nope", "input": {}})[1] == 404.0


def test_same_seed_same_episode(bank: envfactory.Contract) -> None:
    def episode(seed: int) -> list[object]:
        env = make_env(bank, max_steps=30)
        env.reset(seed=seed)
        env.action_space.seed(seed)
        return [env.step(env.action_space.sample())[0] for _ in range(5)]

    assert episode(4) == episode(4)


def test_registered_and_made_by_id() -> None:
    env = gymnasium.make(ENV_ID, contract=str(BANK), max_steps=2)
    env.reset(seed=0)
    _, _, _, truncated, _ = env.step({"tool": "balance", "input": {"account": "X"}})
    _, _, _, truncated, _ = env.step({"tool": "balance", "input": {"account": "X"}})
    assert truncated
    env.close()
