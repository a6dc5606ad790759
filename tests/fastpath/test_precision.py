"""`zoo.fastpath.precision`: the `auto` choice of the training precision."""

from zoo.fastpath import precision


def _cpuinfo(tmp_path, flags):
    path = tmp_path / "cpuinfo"
    path.write_text(f"processor\t: 0\nflags\t\t: fpu sse2 {flags}\n\n")
    return str(path)


def test_cpu_flags_are_read_from_cpuinfo(tmp_path):
    assert precision.cpu_bfloat16_flags(_cpuinfo(tmp_path, "avx512f avx512_bf16")) == [
        "avx512_bf16"
    ]
    assert precision.cpu_bfloat16_flags(_cpuinfo(tmp_path, "avx2")) == []
    assert precision.cpu_bfloat16_flags(str(tmp_path / "missing")) == []


def test_auto_is_bfloat16_only_where_the_cpu_has_the_instructions(
    tmp_path, monkeypatch
):
    monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
    fast = _cpuinfo(tmp_path, "amx_bf16 amx_tile")
    dtype, why = precision.resolve_dtype("auto", fast)
    # (a GPU, when TensorFlow sees one, decides instead of the CPU)
    if "compute capability" not in why:
        assert (dtype, why) == ("bfloat16", "CPU with amx_bf16")
        slow = _cpuinfo(tmp_path, "avx2")
        assert precision.resolve_dtype("auto", slow)[0] == "float32"
        monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "0")
        assert precision.resolve_dtype("auto", fast)[0] == "float32"
    assert precision.resolve_dtype("float32", fast) == ("float32", "asked for")
    assert precision.resolve_dtype("bfloat16", fast) == ("bfloat16", "asked for")
