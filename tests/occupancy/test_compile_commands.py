"""What a compile database entry leaves for compiling one file: the build's own flags, none of
its outputs, architectures or other inputs (no compiler runs here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from occupancy._compile_commands import compile_command


@pytest.mark.parametrize(("command", "options"), [
    # a Makefile that compiles and links several files in one nvcc call
    ("nvcc -O3 -arch=sm_70 main.cu k.cu helper.cpp util.o -o app -lcuda", ("-O3", "-lcuda")),
    ("nvcc -O3 main.cu k.cu -o app", ("-O3",)),
    # CMake: -x cu stays (a .cpp built as CUDA), the response file and its value stay
    ("nvcc --options-file CMakeFiles/k.dir/includes_CUDA.rsp -x cu -rdc=true -c k.cu -o CMakeFiles/k.dir/k.cu.o",
     ("--options-file", "CMakeFiles/k.dir/includes_CUDA.rsp", "-x", "cu", "-rdc=true")),
    # values of options that take one are never taken for inputs
    ("nvcc -include pre.cu -I inc -Xcompiler -fopenmp -Xlinker libx.so -c k.cu -o k.o",
     ("-include", "pre.cu", "-I", "inc", "-Xcompiler", "-fopenmp", "-Xlinker", "libx.so")),
    ("nvcc -gencode arch=compute_90,code=sm_90 -MD -MT k.o -MF k.d -c k.cu -ok.o -DN=4", ("-DN=4",)),
    # -dc is -c with relocatable device code: the build device-links, and so must the figures
    ("nvcc -ccbin g++ -dc -m64 -o k.o -c k.cu", ("-rdc=true", "-m64")),
    ("nvcc --device-c k.cu -o k.o", ("-rdc=true",)),
])
def test_options_keep_the_builds_flags_only(tmp_path, command, options):
    (tmp_path / "k.cu").write_text("")
    database = tmp_path / "compile_commands.json"
    database.write_text(json.dumps([{"directory": str(tmp_path), "file": "k.cu", "command": command}]))
    assert compile_command(tmp_path / "k.cu", database).options == options


def test_the_file_of_a_multi_file_command_is_found_by_each_name(tmp_path):
    """Each source of `nvcc a.cu b.cu -o app` has its own entry (Bear); each drops the other."""
    for name in ("a.cu", "b.cu"):
        (tmp_path / name).write_text("")
    database = tmp_path / "compile_commands.json"
    database.write_text(json.dumps([{"directory": str(tmp_path), "file": name,
                                     "arguments": ["nvcc", "-O2", "a.cu", "b.cu", "-o", "app"]}
                                    for name in ("a.cu", "b.cu")]))
    for name in ("a.cu", "b.cu"):
        command = compile_command(Path(tmp_path, name), database)
        assert command.options == ("-O2",) and command.file == str(tmp_path / name)
