// Fuzzes the cluster parser and the topology built from what it accepts (bounded in size).
#include "core/cluster_spec.h"
#include "core/topology.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    tessel::fuzz::silence_warnings();
    return tessel::fuzz::guard([&] {
        auto j = tessel::parse_json_text(tessel::fuzz::as_text(data, size), "cluster.json");
        auto c = tessel::parse_cluster(j, "cluster.json");
        if (c.num_gpus() <= 4096) {
            tessel::Topology t(c);
            if (c.num_gpus() > 1) (void)t.group({0, c.num_gpus() - 1});
        }
    });
}
