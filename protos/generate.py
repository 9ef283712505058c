"""Generate the Python stubs (messages, gRPC, and their type stubs) from protos/.

`--check` generates into a scratch folder and fails if the committed stubs differ,
so a proto edited without `make protos` breaks `make test`.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"
PACKAGE_DIR = Path("herald") / "v1"
OUTPUT_ROOT = ROOT / "src"


def generate(output_root: Path) -> None:
    protos = sorted(str(p.relative_to(PROTO_ROOT)) for p in (PROTO_ROOT / PACKAGE_DIR).glob("*.proto"))
    plugin = Path(sys.executable).parent / "protoc-gen-mypy_grpc"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"--proto_path={PROTO_ROOT}",
            f"--python_out={output_root}",
            f"--pyi_out={output_root}",
            f"--grpc_python_out={output_root}",
            f"--plugin=protoc-gen-mypy_grpc={plugin}",
            f"--mypy_grpc_out={output_root}",
            *protos,
        ],
        check=True,
    )
    (output_root / PACKAGE_DIR / "__init__.py").write_text('"""Generated from protos/herald/v1 by `make protos`."""\n')


def stale_files(fresh: Path, committed: Path) -> list[str]:
    names = {p.name for p in fresh.iterdir()} | {p.name for p in committed.glob("*") if p.is_file()}
    return sorted(
        n
        for n in names
        if not (fresh / n).exists()
        or not (committed / n).exists()
        or not filecmp.cmp(fresh / n, committed / n, shallow=False)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the committed stubs are stale")
    args = parser.parse_args()
    if not args.check:
        # Generate aside, then swap: an interrupted run never leaves the package half empty.
        target = OUTPUT_ROOT / PACKAGE_DIR
        with tempfile.TemporaryDirectory(dir=OUTPUT_ROOT) as scratch:
            (Path(scratch) / PACKAGE_DIR).mkdir(parents=True)
            generate(Path(scratch))
            previous = target.with_name(target.name + ".old")
            if target.exists():
                target.rename(previous)
            (Path(scratch) / PACKAGE_DIR).rename(target)
            if previous.exists():
                shutil.rmtree(previous)
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        (Path(scratch) / PACKAGE_DIR).mkdir(parents=True)
        generate(Path(scratch))
        stale = stale_files(Path(scratch) / PACKAGE_DIR, OUTPUT_ROOT / PACKAGE_DIR)
    if stale:
        print(f"stale generated stubs (run `make protos`): {', '.join(stale)}", file=sys.stderr)
        return 1
    print("generated stubs are current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
