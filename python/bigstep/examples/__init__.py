"""Examples that use bigstep as an RL environment (they import torch; the package itself does not).

    python -m bigstep.examples.ppo --task hopper      # PPO in plain torch -> out/ppo/hopper/
"""
