from socialsim.envs.decrypto.env import env, parallel_env, raw_env

__all__ = ["env", "parallel_env", "raw_env"]
