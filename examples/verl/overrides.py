"""veRL overrides for a single-GPU GRPO run on code, wired to the verifiers reward.

Every value can be changed with an environment variable (defaults in brackets):

    MODEL [Qwen/Qwen2.5-Coder-0.5B-Instruct]  TRAIN_FILES [data/train.parquet]
    VAL_FILES [data/val.parquet]              ADV_ESTIMATOR [grpo] (gae trains a critic too)
    BATCH [64] prompts per step               MINI_BATCH [16]       MICRO_BATCH [4] per GPU
    ROLLOUT_N [8] samples per prompt          LR [1e-6]             KL_COEF [0.001]
    MAX_PROMPT [512]   MAX_RESPONSE [1024]    TEMPERATURE [1.0]     EPOCHS [1]
    ROLLOUT [vllm]     GPU_MEMORY [0.5]       TP [1] tensor parallel rollout
    N_GPUS [1] per node   NNODES [1]          (multi-GPU: N_GPUS=8, and TP=2 for larger models)
    REWARD_FN [compute_score_async]           REWARD_WORKERS [4]
    REWARD_TIMEOUT [5] seconds per test       REWARD_POLICY [binary]
    PROJECT [verifiers-code-rl]   EXPERIMENT [qwen2.5-coder-0.5b-grpo]   LOGGER [console]

``python overrides.py`` prints one override per line; ``run_grpo.sh`` passes them to
``python -m verl.trainer.main_ppo``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import verifiers.integrations.verl as reward_module

DEFAULTS = {
    "MODEL": "Qwen/Qwen2.5-Coder-0.5B-Instruct",
    "TRAIN_FILES": "data/train.parquet",
    "VAL_FILES": "data/val.parquet",
    "ADV_ESTIMATOR": "grpo",
    "BATCH": "64",
    "MINI_BATCH": "16",
    "MICRO_BATCH": "4",
    "ROLLOUT_N": "8",
    "LR": "1e-6",
    "KL_COEF": "0.001",
    "MAX_PROMPT": "512",
    "MAX_RESPONSE": "1024",
    "TEMPERATURE": "1.0",
    "EPOCHS": "1",
    "ROLLOUT": "vllm",
    "GPU_MEMORY": "0.5",
    "TP": "1",
    "N_GPUS": "1",
    "NNODES": "1",
    "REWARD_FN": "compute_score_async",
    "REWARD_WORKERS": "4",
    "REWARD_TIMEOUT": "5",
    "REWARD_POLICY": "binary",
    "PROJECT": "verifiers-code-rl",
    "EXPERIMENT": "qwen2.5-coder-0.5b-grpo",
    "LOGGER": "console",
}


def overrides(env: Mapping[str, str] | None = None) -> list[str]:
    """Hydra overrides for ``verl.trainer.main_ppo`` from ``env`` (default: the environment)."""
    values = {
        key: (env if env is not None else os.environ).get(key, default)
        for key, default in DEFAULTS.items()
    }
    v = values.__getitem__
    return [
        f"algorithm.adv_estimator={v('ADV_ESTIMATOR')}",
        "algorithm.use_kl_in_reward=false",
        f"data.train_files={v('TRAIN_FILES')}",
        f"data.val_files={v('VAL_FILES')}",
        f"data.train_batch_size={v('BATCH')}",
        f"data.max_prompt_length={v('MAX_PROMPT')}",
        f"data.max_response_length={v('MAX_RESPONSE')}",
        "data.filter_overlong_prompts=true",
        "data.truncation=error",
        f"actor_rollout_ref.model.path={v('MODEL')}",
        "actor_rollout_ref.model.enable_gradient_checkpointing=true",
        f"actor_rollout_ref.actor.optim.lr={v('LR')}",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={v('MINI_BATCH')}",
        f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={v('MICRO_BATCH')}",
        "actor_rollout_ref.actor.use_kl_loss=true",
        f"actor_rollout_ref.actor.kl_loss_coef={v('KL_COEF')}",
        f"actor_rollout_ref.rollout.name={v('ROLLOUT')}",
        f"actor_rollout_ref.rollout.n={v('ROLLOUT_N')}",
        f"actor_rollout_ref.rollout.temperature={v('TEMPERATURE')}",
        f"actor_rollout_ref.rollout.gpu_memory_utilization={v('GPU_MEMORY')}",
        f"actor_rollout_ref.rollout.tensor_model_parallel_size={v('TP')}",
        f"actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu={v('MICRO_BATCH')}",
        f"actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu={v('MICRO_BATCH')}",
        f"reward.custom_reward_function.path={reward_module.__file__}",
        f"reward.custom_reward_function.name={v('REWARD_FN')}",
        f"+reward.custom_reward_function.reward_kwargs.timeout_s={v('REWARD_TIMEOUT')}",
        f"+reward.custom_reward_function.reward_kwargs.policy={v('REWARD_POLICY')}",
        f"reward.num_workers={v('REWARD_WORKERS')}",
        f"trainer.n_gpus_per_node={v('N_GPUS')}",
        f"trainer.nnodes={v('NNODES')}",
        f"trainer.total_epochs={v('EPOCHS')}",
        f"trainer.project_name={v('PROJECT')}",
        f"trainer.experiment_name={v('EXPERIMENT')}",
        f"trainer.logger=[{v('LOGGER')}]",
        "trainer.val_before_train=true",
        "trainer.test_freq=10",
        "trainer.save_freq=-1",
    ]


if __name__ == "__main__":
    print("\n".join(overrides()))
