"""llama.cpp contract runs: build llama-bench from a llama-cpp-python sdist, run it, keep captures.

For one matrix entry (``package = "0.3.16"``):

1. ``pip download --no-deps --no-binary :all: llama-cpp-python==0.3.16`` → the sdist, whose
   ``vendor/llama.cpp`` is a full llama.cpp tree;
2. cmake (CPU only, ``-j2``, niced) builds ``llama-bench`` and ``llama-quantize``;
3. the tiny model (tiny_model.py) goes through that tree's own ``convert_hf_to_gguf.py`` (F16)
   and ``llama-quantize`` (Q8_0): two models;
4. llama-bench runs, each written to ``fixtures/contract/llama.cpp-<package>/``:
   ``<case>.md`` (stdout of ``-o md``) with ``<case>.truth.json`` (the same run's ``-oe json``),
   and ``<case>.<csv|json|jsonl|sql>`` (stdout of ``-o <fmt>``, which is itself the truth).
"""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

from common import FIXTURES, JOBS, LOGS, WORK, ContractError, ensure_tiny_model, \
    ensure_tools, run

SMALL = ["-r", "2"]             # 2 repetitions, so stddev is real


def tree(package: str) -> Path:
    return WORK / "src" / f"llama_cpp_python-{package}" / "vendor" / "llama.cpp"


def build_dir(package: str) -> Path:
    return WORK / f"llama.cpp-{package}"


def bin_path(package: str, name: str) -> Path:
    return build_dir(package) / "build" / "bin" / name


def fetch(package: str) -> None:
    if (tree(package) / "CMakeLists.txt").exists():
        return
    sdists = WORK / "sdist"
    sdists.mkdir(parents=True, exist_ok=True)
    log = LOGS / f"llama.cpp-{package}.log"
    run(["python3", "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
         f"llama-cpp-python=={package}", "-d", str(sdists)], log)
    archive = sdists / f"llama_cpp_python-{package}.tar.gz"
    with tarfile.open(archive) as tar:
        tar.extractall(WORK / "src", filter="data")
    if not (tree(package) / "CMakeLists.txt").exists():
        raise ContractError(f"{archive} has no vendor/llama.cpp")


def build(package: str) -> None:
    """Configure and build (incremental: a second call only re-links what changed)."""
    log = LOGS / f"llama.cpp-{package}.log"
    out = build_dir(package) / "build"
    # The sdist has no .git; without a ceiling, llama.cpp's build-info finds the repo .contract/
    # sits in and stamps ITS commit.  With it the build prints `build: unknown (0)`, the truth.
    no_git = {"GIT_CEILING_DIRECTORIES": str(WORK / "src")}
    run(["cmake", "-S", str(tree(package)), "-B", str(out), "-DCMAKE_BUILD_TYPE=Release",
         "-DLLAMA_CURL=OFF", "-DLLAMA_OPENSSL=OFF", "-DLLAMA_BUILD_TESTS=OFF",
         "-DLLAMA_BUILD_SERVER=OFF", "-DGGML_NATIVE=ON", "-DBUILD_SHARED_LIBS=OFF"], log,
        env=no_git)
    run(["cmake", "--build", str(out), "--target", "llama-bench", "llama-quantize",
         "-j", JOBS], log, env=no_git)


def models(package: str) -> list[Path]:
    """F16 from the tree's own converter, Q8_0 from its own quantizer."""
    hf = ensure_tiny_model()
    log = LOGS / f"llama.cpp-{package}.log"
    f16 = build_dir(package) / "tiny-llama-F16.gguf"
    q8 = build_dir(package) / "tiny-llama-Q8_0.gguf"
    if not f16.exists():
        py = ensure_tools()
        run([str(py), str(tree(package) / "convert_hf_to_gguf.py"), str(hf), "--outtype", "f16",
             "--outfile", str(f16)], log, env={"PYTHONPATH": str(tree(package) / "gguf-py"),
                                              "NO_LOCAL_GGUF": ""})
    if not q8.exists():
        run([str(bin_path(package, "llama-quantize")), str(f16), str(q8), "Q8_0"], log)
    return [f16, q8]


def cases(entry: dict) -> list[tuple[str, list[str], str]]:
    """(case name, llama-bench arguments, output format) for one build."""
    fa = ",".join(entry.get("fa", ["0", "1"]))
    out = [
        ("md_default_two_models", ["-p", "64", "-n", "16"], "md"),
        ("md_sweep_p_n_t_fa", ["-p", "32,64", "-n", "8,16", "-t", "1,2", "-fa", fa], "md"),
        ("md_pg", ["-p", "0", "-n", "0", "-pg", "32,8"], "md"),
    ]
    if entry.get("depth"):
        out.append(("md_depth", ["-p", "32", "-n", "8", "-d", "0,64"], "md"))
    for fmt in entry["formats"]:
        if fmt != "md":
            extra = ["-d", "0,32"] if entry.get("depth") else ["-pg", "32,8"]
            out.append((f"out_{fmt}", ["-p", "32", "-n", "8", *extra], fmt))
    return out


def bench(entry: dict, progress=lambda msg: None) -> Path:
    package = entry["package"]
    fetch(package)
    progress("build")
    build(package)
    progress("models")
    gguf = models(package)
    dest = FIXTURES / f"llama.cpp-{package}"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    log = LOGS / f"llama.cpp-{package}.log"
    exe = bin_path(package, "llama-bench")
    for name, args, fmt in cases(entry):
        progress(name)
        # Model paths relative to the build dir so captures hold no machine-specific path.
        cmd = [str(exe), "-m", ",".join(p.name for p in gguf) if fmt != "md" or "two" in name
               else gguf[0].name, *cmd_args(args), "-o", fmt]
        if fmt == "md":
            cmd += ["-oe", "json"]
            truth = dest / f"{name}.truth.json"
            err = WORK / "tmp" / f"{package}-{name}.stderr"
            err.parent.mkdir(parents=True, exist_ok=True)
            _run_split(cmd, dest / f"{name}.md", err, log, build_dir(package))
            truth.write_text(_json_of(err.read_text()))
        else:
            run(cmd, log, cwd=build_dir(package), stdout=dest / f"{name}.{fmt}")
        _prepend_command(dest, name, fmt, cmd, exe)
    (dest / "ABOUT.json").write_text(json.dumps({
        "tool": "llama.cpp", "source": f"llama-cpp-python=={package} sdist, vendor/llama.cpp",
        "built_with": "cmake Release, CPU only, GGML_NATIVE=ON; build commit from the sdist's "
                      "shallow git module of vendor/llama.cpp (so the build number is 1), or "
                      "unknown (0) when the sdist has none",
        "models": [p.name for p in gguf],
        "cases": {name: ["llama-bench", *cmd_args(args), "-o", fmt]
                  for name, args, fmt in cases(entry)},
    }, indent=1) + "\n")
    return dest


def cmd_args(args: list[str]) -> list[str]:
    threads = [] if "-t" in args else ["-t", "2"]      # both cores unless the case sweeps -t
    return [*SMALL, *threads, *args]


def _run_split(cmd, stdout: Path, stderr: Path, log: Path, cwd: Path) -> None:
    import subprocess
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        code = subprocess.run(["nice", "-n", "10", *cmd], cwd=cwd, stdout=out,
                              stderr=err).returncode
    with open(log, "ab") as lg:
        lg.write(f"\n$ {' '.join(cmd)}\n".encode() + stderr.read_bytes())
    if code != 0:
        raise ContractError(f"llama-bench exited {code}; see {log}")


def _json_of(stderr: str) -> str:
    """The ``-oe json`` array from stderr (model-loading chatter may precede it)."""
    start = stderr.find("[\n")
    end = stderr.rfind("]")
    if start < 0 or end < start:
        raise ContractError("no JSON array on llama-bench's stderr")
    text = stderr[start:end + 1]
    json.loads(text)
    return text + "\n"


def _prepend_command(dest: Path, name: str, fmt: str, cmd: list[str], exe: Path) -> None:
    """Markdown captures get the command line above the table, as users paste them."""
    if fmt != "md":
        return
    path = dest / f"{name}.md"
    shown = " ".join(["./llama-bench", *cmd[1:]])
    path.write_text(f"$ {shown}\n{path.read_text()}")
