"""The veRL example's overrides are valid for veRL's own configuration schema."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import verifiers.integrations.verl as reward_module

from .conftest import require

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "verl"


def load_overrides() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verl_example", EXAMPLE / "overrides.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compose(overrides: list[str]):  # type: ignore[no-untyped-def]
    require("verl", "hydra")
    import verl
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    config_dir = str(Path(verl.__file__).parent / "trainer" / "config")
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return hydra_compose(config_name="ppo_trainer", overrides=overrides)


def test_defaults_compose_and_validate() -> None:
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    config = compose(load_overrides().overrides({}))
    validate_config(
        config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config)
    )
    assert config.reward.custom_reward_function.path == reward_module.__file__
    assert config.reward.custom_reward_function.name == "compute_score_async"
    assert config.reward.custom_reward_function.reward_kwargs.timeout_s == 5
    assert config.actor_rollout_ref.model.path == "Qwen/Qwen2.5-Coder-0.5B-Instruct"
    assert config.trainer.n_gpus_per_node == 1


def test_environment_overrides_reach_the_config() -> None:
    env = {
        "MODEL": "/models/local",
        "BATCH": "32",
        "ROLLOUT_N": "4",
        "N_GPUS": "8",
        "NNODES": "2",
        "TP": "2",
        "REWARD_FN": "compute_score_batch",
        "LR": "2e-6",
        "ADV_ESTIMATOR": "gae",
    }
    config = compose(load_overrides().overrides(env))
    assert config.actor_rollout_ref.model.path == "/models/local"
    assert config.data.train_batch_size == 32 and config.actor_rollout_ref.rollout.n == 4
    assert (config.trainer.n_gpus_per_node, config.trainer.nnodes) == (8, 2)
    assert config.actor_rollout_ref.rollout.tensor_model_parallel_size == 2
    assert config.actor_rollout_ref.actor.optim.lr == 2e-6
    assert config.algorithm.adv_estimator == "gae"


def test_script_prints_its_overrides() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "overrides.py")],
        capture_output=True,
        text=True,
        check=True,
        env={"BATCH": "16", "PATH": "/usr/bin:/bin"},
    )
    assert "data.train_batch_size=16" in done.stdout.splitlines()
