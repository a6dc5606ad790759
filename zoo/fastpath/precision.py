"""Whether this machine computes bfloat16 products fast: the `auto` precision choice.

bfloat16 matrix products are fast on NVIDIA GPUs of compute capability 8.0 and later
(tensor cores) and on CPUs with bfloat16 instructions (`amx_bf16`, `avx512_bf16` in
`/proc/cpuinfo`), which oneDNN uses; elsewhere TensorFlow emulates them, slower than
float32.
"""

import os

CPU_FLAGS = ("amx_bf16", "avx512_bf16")


def cpu_bfloat16_flags(cpuinfo="/proc/cpuinfo"):
    """The bfloat16 instruction flags of the CPU (empty when unknown)."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.partition(":")[2].split())
                    return [flag for flag in CPU_FLAGS if flag in flags]
    except OSError:
        pass
    return []


def resolve_dtype(requested, cpuinfo="/proc/cpuinfo"):
    """`(dtype, reason)` for a precision option: "auto" is "bfloat16" where bfloat16
    products are fast on the device that trains (the first GPU when TensorFlow sees
    one, else the CPU) and "float32" elsewhere; other values are kept."""
    if requested != "auto":
        return requested, "asked for"
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        details = tf.config.experimental.get_device_details(gpus[0])
        capability = details.get("compute_capability") or (0, 0)
        name = details.get("device_name", "GPU")
        dtype = "bfloat16" if tuple(capability) >= (8, 0) else "float32"
        return dtype, f"{name}, compute capability {capability[0]}.{capability[1]}"
    if os.environ.get("TF_ENABLE_ONEDNN_OPTS") == "0":
        return "float32", "CPU with oneDNN switched off (TF_ENABLE_ONEDNN_OPTS=0)"
    flags = cpu_bfloat16_flags(cpuinfo)
    if flags:
        return "bfloat16", f"CPU with {', '.join(flags)}"
    return "float32", "CPU without bfloat16 instructions (amx_bf16, avx512_bf16)"
