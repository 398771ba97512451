#!/usr/bin/env python3
"""Which lines of llm-foundry's benchmark table the table's own sweep recipe does not submit.

llm-foundry publishes its MPT throughput table (scripts/train/benchmarking/README.md) beside the
script that is said to produce it (scripts/train/benchmarking/sweep.sh). Each sweep line submits one
model on one GPU count and GPU type at a range of sequence lengths (-s 2^a 2^b) with a microbatch
and a gradient accumulation, so it fixes the global batch: microbatch x accumulation x GPUs. The
table's GlobalBatchSize column comes from the submitted configuration and its MicroBatchSize from
the run's log. A table line whose global batch no sweep line for its model, length, GPU count and
GPU type gives was not run as the recipe says, and its configuration is less certain than the rest.

Arguments: the two files from one llm-foundry commit, e.g.

    git -C llm-foundry show 495218376:scripts/train/benchmarking/sweep.sh > sweep.sh
    git -C llm-foundry show 495218376:scripts/train/benchmarking/README.md > table.md
    tools/validation/llm_foundry_sweep_vs_table.py sweep.sh table.md
"""
import re
import sys


def sweep_batches(path):
    """(model, seq_len, gpus, gpu_type) -> set of (microbatch, accumulation) the sweep submits."""
    submitted = {}
    for line in open(path):
        if 'submit_benchmarks' not in line or line.lstrip().startswith('#'):
            continue
        model = re.search(r'-m\s+(\S+)\.yaml', line)
        gpus = re.search(r'-g\s+(\d+)', line)
        micro = re.search(r'--microbatch_size\s+(\d+)', line)
        accum = re.search(r'--accum\s+(\d+)', line)
        gpu_type = re.search(r'--gpu_type\s+(\S+)', line)
        lengths = re.search(r'-s\s+(\d+)\s+(\d+)', line)
        if not (model and gpus and micro and gpu_type and lengths):
            continue  # a line that leaves the batch to the script's defaults fixes none
        for exponent in range(int(lengths.group(1)), int(lengths.group(2)) + 1):
            key = (model.group(1), 2**exponent, int(gpus.group(1)), gpu_type.group(1))
            submitted.setdefault(key, set()).add((int(micro.group(1)), int(accum.group(1)) if accum else 1))
    return submitted


def table_lines(path):
    """Each data row of the table: (model, seq_len, gpus, gpu_type, microbatch, accumulation, global batch)."""
    for line in open(path):
        cells = [c.strip() for c in line.split('|')[1:-1]]
        if len(cells) < 10 or not cells[1].isdigit():
            continue
        yield cells[0], int(cells[1]), int(cells[2]), cells[3], int(cells[7]), int(cells[8]), int(cells[9])


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    submitted = sweep_batches(argv[1])
    matched = 0
    differing = []
    for model, seq, gpus, gpu_type, micro, accum, global_batch in table_lines(argv[2]):
        key = (model, seq, gpus, gpu_type)
        if key not in submitted:
            continue
        matched += 1
        if not any(m * a * gpus == global_batch for m, a in submitted[key]):
            sweep = ', '.join(f'{m} x {a} x {gpus} = {m * a * gpus}' for m, a in sorted(submitted[key]))
            differing.append(f'| {model} | {seq} | {gpus} | {gpu_type} | {micro} x {accum} x {gpus} = {global_batch} | {sweep} |')
    print(f'{matched} table lines have a sweep line for their model, length, GPU count and GPU type; '
          f'{len(differing)} list a global batch the sweep does not submit.\n')
    if differing:
        print('| model | seq | GPUs | GPU | table: microbatch x accumulation x GPUs | sweep |')
        print('|---|---|---|---|---|---|')
        print('\n'.join(differing))


if __name__ == '__main__':
    main(sys.argv)
