#!/usr/bin/env python3
"""What would a power-balance clock for GEMMs do to the validation? A first-order estimate from
`tessel validate --json` output, before anything is built into the simulator.

Measured (reports/gpu/step-kernel-split.md): under the 700 W limit of an H100/H200, a GEMM runs
faster the more of the GPU's time goes to other work. A steady-state balance with GEMM power
growing as the clock cubed and other work drawing R = 0.5 of a GEMM's power fits the measurement:
with a share d of the step in GEMMs, GEMMs run (d + (1 - d) R)^(-1/3) times their back-to-back
speed. Each row's step loses that on its GEMM time (kernel_time_s.gemm, taken as on the critical
path). Then one global factor on every prediction, chosen on the fit set as the fitted
sustained-clock fraction would be, stands in for the refit.

Scenarios: "none" (today's simulator), "h100" (the boost on H100/H200 rows only: the A100 is not
measured) and "all" (the A100 as well).

Usage: python3 tools/validation/power_balance_estimate.py FIT.json [OTHER.json ...]
       (each from `tessel validate [RUNS] --no-cross-validation --json FILE`)"""
import json
import sys

R = 0.5  # a bandwidth-bound kernel's power over a GEMM's at the same clock (fits both H100 points)


def power_limited(name):
    n = name.lower()
    return "h100" in n or "h200" in n


def step_ratio(row, scenario):
    """Old step / new step for a row, and the GEMM share and clock factor used."""
    step, gemm = row["step_time_s"], row["kernel_time_s"]["gemm"]
    d = min(1.0, gemm / step)
    factor = 1.0
    if scenario == "all" or (scenario == "h100" and power_limited(row["name"])):
        factor = (d + (1 - d) * R) ** (-1.0 / 3.0)
    return step / (step - gemm * (1 - 1 / factor))


def errors(rows, scenario, k):
    out = []
    for r in rows:
        if not r.get("modelled"):
            continue
        f = step_ratio(r, scenario) * k
        predicted = r["predicted"] / f if r["metric"] == "iteration_time_s" else r["predicted"] * f
        out.append((predicted - r["published"]) / r["published"])
    return out


def summary(errs):
    a = [abs(e) for e in errs]
    worst = max(errs, key=abs)
    return (f"MAPE {100 * sum(a) / len(a):.1f}%, {sum(x <= 0.15 for x in a)} of {len(a)} within 15%, "
            f"worst {100 * worst:+.1f}%")


def main():
    sets = [(path, json.load(open(path))["rows"]) for path in sys.argv[1:]]
    if not sets:
        sys.exit(__doc__)
    fit = sets[0][1]
    for scenario in ("none", "h100", "all"):
        k = 1.0
        if scenario != "none":
            k = min((sum(abs(e) for e in errors(fit, scenario, c / 1000)), c / 1000) for c in range(800, 1201))[1]
        print(f"{scenario}: global factor {k:.3f}")
        for path, rows in sets:
            print(f"  {path}: {summary(errors(rows, scenario, k))}")


if __name__ == "__main__":
    main()
