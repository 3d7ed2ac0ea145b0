"""A stand-in `nvidia-smi` for a machine with two H100s: the two invocations record makes."""

import sys

if any(a.startswith("--query-gpu") for a in sys.argv[1:]):
    print("NVIDIA H100 80GB HBM3, 81559 MiB, 550.54.15")
    print("NVIDIA H100 80GB HBM3, 81559 MiB, 550.54.15")
else:
    print("Fri Nov 27 22:57:00 2026")
    print("+-----------------------------------------------------------------------------------------+")
    print("| NVIDIA-SMI 550.54.15             Driver Version: 550.54.15     CUDA Version: 12.4     |")
    print("|-----------------------------------------+------------------------+----------------------+")
