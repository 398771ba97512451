#include "compare/published_cluster.h"

#include <algorithm>
#include <regex>

#include "compare/text_match.h"
#include "core/errors.h"
#include "core/presets.h"

namespace tessel {

namespace {
bool has(const std::string& text, const char* word) { return contains_ignoring_case(text, word); }

// The 40 GB A100 in the ways rows write it: "40GB", "40 GB", "(40 GB)", "-40G"; not "640GB", a DGX's total.
// "A100 80GB (not the 40GB part)" is no 40 GB part.
bool names_40gb(const std::string& gpu) { return affirmed(gpu, R"((?:^|[^\d.])40\s*-?\s*g(?:i?b)?\b)"); }

// The H100 NVL and H200 NVL PCIe cards: "NVL" as a word of its own, not NVLink, an NVL72 rack or
// an HGX board's "NVL8", and not in a text that names the SXM module or an HGX or DGX board.
bool names_nvl_card(const std::string& gpu) {
    static const std::regex nvl(R"(nvl(?![a-z0-9]))", std::regex::icase);
    return std::regex_search(gpu, nvl) && !has(gpu, "sxm") && !has(gpu, "hgx") && !has(gpu, "dgx") && !has(gpu, "gh200") &&
           (has(gpu, "h100") || has(gpu, "h200"));
}

constexpr double kGbpsToGBps = 1.0 / 8.0;
// A rate in bits per second and its prefix (two groups): "200 Gb/s", "400Gbps", "400G", "100GbE",
// "3.2 Tbps". Bytes ("GB/s", "GBps": a capital B) describe GPU links, not the network.
const std::string kRate = R"((\d+(?:\.\d+)?)\s*([GgTt])(?:bps|bit/s|bit\b|b/s|bE\b|b\b|\b))";
// Gigabits per second of a kRate match whose number is group i and prefix group i + 1.
double rate_Gbps(const std::smatch& m, int i) {
    const double giga = m[i + 1].str() == "T" || m[i + 1].str() == "t" ? 1000.0 : 1.0;
    return std::stod(m[i]) * giga;
}
}  // namespace

int largest_divisor_within(long long n, int limit) {
    for (int d = std::max(1, limit); d > 1; --d)
        if (n % d == 0) return d;
    return 1;
}

const char* cluster_preset_for_gpu(const std::string& gpu) {
    // A800 and H800 are the A100 and H100 with NVLink cut to 400 GB/s (published_cluster sets it).
    const bool a100 = has(gpu, "a100") || has(gpu, "a800");
    if (a100 && has(gpu, "pcie")) return "pcie-a100";
    if (a100 && names_40gb(gpu)) return "dgx-a100-40gb";
    if (a100) return "dgx-a100";
    if (has(gpu, "h100") && has(gpu, "pcie")) return "pcie-h100";
    if (has(gpu, "h100") || has(gpu, "h800")) return "dgx-h100";
    if (has(gpu, "h200")) return "dgx-h200";  // GH200 too: published_cluster gives it its own memory
    if (has(gpu, "v100")) return "dgx2-v100";
    // GB200 is the B200 die beside a Grace CPU, clocked higher, in a 72-GPU NVLink domain; GB300
    // and B300 are Blackwell Ultra in the same two forms.
    if (has(gpu, "gb300")) return "gb300-nvl72";
    if (has(gpu, "b300")) return "dgx-b300";
    if (has(gpu, "gb200")) return "gb200-nvl72";
    if (has(gpu, "b200")) return "dgx-b200";
    return nullptr;
}

GpuFigures parse_gpu_figures(const std::string& text) {
    GpuFigures f;
    std::smatch m;
    // "80GB", "96 GB HBM2e"; not "GB/s". A GPU's "GB" of memory is its GiB (an 80GB A100 holds 80 GiB).
    // No GPU holds more than 288 GB (B300 and GB300, the largest HBM per GPU shipped: NVIDIA Blackwell
    // Ultra specifications), so a larger figure is a node's or a superchip's total ("DGX A100 640GB",
    // "GH200 480GB"), not the GPU's.
    constexpr double kLargestGpuMemoryGB = 288;
    // The host's memory beside it ("host 256 GB DDR5", "120GB LPDDR5X") is not the GPU's either.
    static const std::regex size(R"((\d+(?:\.\d+)?)\s*GB\b(?!/))", std::regex::icase);
    static const std::regex host(R"(host|cpu|system|\bram\b|ddr)", std::regex::icase);
    for (std::sregex_iterator it(text.begin(), text.end(), size), end; it != end; ++it) {
        // Within its own item of a list: up to the comma, semicolon or bracket on either side.
        const std::size_t at = std::size_t(it->position(0)), stop = at + std::size_t(it->length(0));
        const std::size_t before = text.find_last_of(",;()", at);
        const std::size_t from = before == std::string::npos ? 0 : before + 1;
        const std::size_t after = std::min(text.find_first_of(",;()", stop), text.size());
        if (std::regex_search(text.substr(from, at - from), host) || std::regex_search(text.substr(stop, after - stop), host)) continue;
        if (const double gb = std::stod((*it)[1]); gb <= kLargestGpuMemoryGB) {
            f.memory_GiB = gb;
            break;
        }
    }
    // An HBM bandwidth; a TB/s figure beside NVLink or NVSwitch is the GPU-to-GPU link's.
    static const std::regex rate(R"((\d+(?:\.\d+)?)\s*TB/s)", std::regex::icase);
    static const std::regex link(R"(nvlink|nvswitch|interconnect|bidirectional)", std::regex::icase);
    for (std::sregex_iterator it(text.begin(), text.end(), rate), end; it != end; ++it) {
        const std::size_t at = std::size_t(it->position(0)), stop = at + std::size_t(it->length(0));
        const std::size_t from = at > 16 ? at - 16 : 0;
        if (std::regex_search(text.substr(from, at - from), link) || std::regex_search(text.substr(stop, 16), link)) continue;
        f.memory_bandwidth_GBps = std::stod((*it)[1]) * 1000.0;
        break;
    }
    if (std::regex_search(text, m, std::regex(R"((\d+(?:\.\d+)?)\s*W\b)"))) f.power_limit_W = std::stod(m[1]);
    return f;
}

std::optional<NodeNetwork> parse_interconnect(const std::string& stated, int default_nics) {
    // Counts in words ("four ConnectX-6 HCAs", "a single 100 Gbps NIC") as digits, and the adapter's
    // model number dropped, so "ConnectX-6" counts no six adapters.
    std::string text = std::regex_replace(stated, std::regex(R"(connectx-?\d+)", std::regex::icase), "ConnectX");
    for (const auto& [word, digits] : {std::pair{"one", "1"}, {"single", "1"}, {"two", "2"}, {"four", "4"},
                                        {"eight", "8"}, {"sixteen", "16"}})
        text = std::regex_replace(text, std::regex(std::string(R"(\b)") + word + R"(\b)", std::regex::icase), digits);
    const std::string t = lowercase(text);
    std::smatch m;
    auto in_t = [&](const char* words) { return t.find(words) != std::string::npos; };  // t is lowercase
    auto word = [&](const char* pattern) { return std::regex_search(t, std::regex(pattern)); };
    // The fabric's taper, where the text names one: "2:1 oversubscribed", "1:2 blocking".
    double oversubscription = 0;
    if (in_t("oversub") || in_t("blocking") || in_t("taper")) {
        if (std::regex_search(t, m, std::regex(R"((\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?))"))) {
            const double a = std::stod(m[1]), b = std::stod(m[2]);  // "2:1" or "1:2" alike
            oversubscription = std::max(a, b) / std::max(1e-9, std::min(a, b));
        } else if (in_t("non-blocking") || in_t("nonblocking"))
            oversubscription = 1;
    }
    auto network = [&](int nics, double nic_GBps) { return NodeNetwork{nics, nic_GBps, oversubscription}; };
    const int nics = std::max(1, default_nics);
    // "400 Gb/s per GPU", "1x 400G NDR per GPU", "1 NIC per GPU": a port for each of the node's GPUs,
    // as the preset's node has.
    if (std::regex_search(t, std::regex(R"((?:per|/|a|each)\s*gpu\b)")) && std::regex_search(text, m, std::regex(kRate)))
        return network(nics, rate_Gbps(m, 1) * kGbpsToGBps);
    // "8 x 200 Gb/s", "8x ConnectX-6 HDR 200 Gb/s", "8x400G": count and rate together.
    if (std::regex_search(text, m, std::regex(R"((\d+)\s*(?:x|×)\s*(?:[\w-]+\s+){0,3})" + kRate)))
        return network(std::stoi(m[1]), rate_Gbps(m, 2) * kGbpsToGBps);
    // "HDR 200 Gb/s x 4", "100Gbps (x4 per node)": the rate, then the count.
    if (std::regex_search(text, m, std::regex(kRate + R"(\s*\(?\s*(?:x|×)\s*(\d{1,2})\b)")))
        return network(std::stoi(m[3]), rate_Gbps(m, 1) * kGbpsToGBps);
    // A count of network adapters anywhere in the text ("4 EDR HCAs", "2 x HDR200"), at most 32 a node.
    std::optional<int> count;
    const std::string adapters = R"((?:hcas?|nics?|adapters?|rails?|ports?))";
    // The count may stand a few words before the adapters ("8 NVIDIA Mellanox 400 Gbps HDR InfiniBand
    // HCAs", "1 100 Gbps NIC"), not across GPUs or a node ("8 GPUs per node and 4 NICs"), or before
    // "per node" alone ("HDR (8 per node)").
    // A count stands apart ("2-tier" counts nothing), and the words between it and the adapters are
    // no other count.
    if (std::regex_search(t, m, std::regex(R"((?:^|[^\w.-])(\d{1,2})(?:\s+|\s*x\s*)(?:(?!gpus?\b|per\b|nodes?\b|\d{1,2}\s)[a-z0-9./-]+\s+){0,6}?)" +
                                           adapters + R"(\b)")) ||
        std::regex_search(t, m, std::regex(R"(\b(\d{1,2})\s*(?:x|×)\s*(?:hdr|ndr|edr|xdr))")) ||
        std::regex_search(t, m, std::regex(R"((?:^|[^\w.-])(\d{1,2})\s+(?:(?!gpus?\b|[gt]b)[a-z]+\s+){0,2}?(?:per|/)\s*node\b)")))
        count = std::stoi(m[1]);
    // No NIC port runs faster than 800 Gb/s (NVIDIA ConnectX-8 SuperNIC datasheet: up to 800 Gb/s):
    // a larger rate is the node's total, and where a text gives a port's rate and the node's
    // ("NDR 400 Gb/s (3.2 Tb/s per node)"), the node's total is the one to divide.
    constexpr double kFastestPortGbps = 800;
    std::optional<double> rate;
    {
        const std::regex any_rate(kRate);
        for (std::sregex_iterator it(text.begin(), text.end(), any_rate), end; it != end; ++it) {
            const double r = rate_Gbps(*it, 1);
            if (!rate || (r > kFastestPortGbps && r > *rate)) rate = r;
        }
    }
    // "8 HCAs per node" says how many a node has, not that the rate is the node's.
    const std::string per_node_said =
        std::regex_replace(t, std::regex(R"((?:)" + adapters + R"(|gpus?|(?:^|[^\w.-])\d{1,2}(?:\s+(?![gt]b)[a-z]+){0,2})\s*(?:per|/|a)\s*node)"), "");
    const bool whole_node = in_t("node-node") || in_t("node-to-node") || per_node_said.find("per node") != std::string::npos ||
                            word(R"(\btotal\b)") || word(R"(\baggregate\b)") || word(R"(\befa)") ||
                            (rate && !count && *rate > kFastestPortGbps);
    if (rate && whole_node) {
        const int n = count.value_or(nics);
        return network(n, *rate * kGbpsToGBps / n);
    }
    if (rate && count) return network(*count, *rate * kGbpsToGBps);
    // A stated rate is the port's ("400 Gbps HDR": the rate, not HDR's 200); otherwise the
    // technology's port rate: InfiniBand NDR 400, HDR 200, EDR 100 Gb/s; Omni-Path 100 Gb/s.
    double port = 0;
    if (word(R"(\bndr)")) port = 400;
    else if (word(R"(\bhdr)")) port = 200;
    else if (word(R"(\bedr)")) port = 100;
    else if (in_t("omni-path") || in_t("omnipath")) port = 100;
    // A rate stated in the technology's own clause is its port's ("400 Gbps HDR InfiniBand HCAs"); one
    // in another clause (a storage network's "25 GbE") is not, where the technology is named.
    if (rate) {
        static const std::regex technology(R"(\b(?:ndr|hdr|edr|xdr|infiniband|omni-?path))");
        bool beside = port == 0;
        const std::regex any_rate(kRate);
        for (std::sregex_iterator it(text.begin(), text.end(), any_rate), end; it != end && !beside; ++it) {
            if (rate_Gbps(*it, 1) != *rate) continue;
            const std::size_t at = std::size_t(it->position(0));
            const std::size_t before = t.find_last_of(",;()", at);
            const std::size_t from = before == std::string::npos ? 0 : before + 1;
            const std::size_t to = std::min(t.find_first_of(",;()", at), t.size());
            beside = std::regex_search(t.substr(from, to - from), technology);
        }
        if (beside) port = *rate;
    }
    if (port > 0) return network(count.value_or(nics), port * kGbpsToGBps);
    if (oversubscription > 0) return network(0, 0);
    return std::nullopt;
}

ClusterSpec published_cluster(const std::string& gpu_type, const std::string& interconnect, int gpus_per_node,
                              long long num_gpus, const std::string& origin, const std::string& where,
                              int* inferred_gpus_per_node) {
    const char* preset = cluster_preset_for_gpu(gpu_type);
    if (!preset)
        throw input_error(origin, where + ".gpu_type", "a V100, A100, A800, H100, H800, H200, B200, GB200, B300 or GB300 GPU", "\"" + gpu_type + "\"");
    ClusterSpec c = load_cluster(preset);
    // The PCIe preset is the 80GB card; the 40GB one (its size read below) has HBM2 at 1555 GB/s
    // (A100 PCIe datasheet).
    if (std::string(preset) == "pcie-a100" && names_40gb(gpu_type)) c.gpu.memory_bandwidth_GBps = 1555;
    // A800 SXM4 and H800 SXM5 datasheets: NVLink 400 GB/s bidirectional, 200 per direction; compute,
    // memory and network as the A100 and H100.
    if ((has(gpu_type, "a800") || has(gpu_type, "h800")) && c.intra_node.kind == "nvlink")
        c.intra_node.bandwidth_GBps = 200;
    // H100 NVL and H200 NVL (datasheets): PCIe cards, bridged by NVLink in pairs (or fours), with
    // the SXM die at lower clocks: dense BF16/FP16 835, FP8 1671, TF32 418, FP32 60 TFLOP/s; H100 NVL
    // 94 GB of HBM3 at 3.9 TB/s and up to 400 W, H200 NVL 141 GB at 4.8 TB/s and up to 600 W. The
    // node's one GPU-to-GPU link is PCIe Gen5 (64 GB/s each way), what crosses the bridged groups;
    // the measured shares of peak stay the SXM part's.
    if (names_nvl_card(gpu_type)) {
        c.gpu.peak_tflops = {{Precision::bf16, 835}, {Precision::fp16, 835}, {Precision::fp8, 1671},
                             {Precision::fp32, 60}};
        const bool h200 = has(gpu_type, "h200");
        c.gpu.name = h200 ? "H200-NVL" : "H100-NVL";
        c.gpu.memory_GiB = h200 ? 140 : 94;
        c.gpu.memory_bandwidth_GBps = h200 ? 4800 : 3900;
        c.gpu.tdp_W = h200 ? 600 : 400;
        c.intra_node.kind = "pcie";
        c.intra_node.bandwidth_GBps = 64;
    }
    // GH200 (NVIDIA GH200 Grace Hopper Superchip datasheet): the H100 die and its peaks with 96 GB of
    // HBM3 at 4 TB/s, or 144 GB of HBM3e at 4.9 TB/s where the row names HBM3e or 144 GB, tied to its
    // own Grace CPU by NVLink-C2C at 900 GB/s bidirectional (450 per direction). The nodes' GPU links
    // vary by system: the preset's, unless the row says otherwise.
    if (has(gpu_type, "gh200")) {
        const bool hbm3e = has(gpu_type, "hbm3e") || has(gpu_type, "144");
        c.gpu.name = "GH200";
        c.gpu.memory_GiB = hbm3e ? 144 : 96;
        c.gpu.memory_bandwidth_GBps = hbm3e ? 4900 : 4000;
        c.gpu.host_bandwidth_GBps = 450;
    }
    // The DGX-2H's V100s run at 450 W and higher clocks than the DGX-2's 350 W parts: 130 dense FP16
    // TFLOP/s (NVIDIA ADLR, 'MegatronLM's Supercharged V1.0', 2020: 62.4 TFLOP/s is 48% of the
    // DGX-2H V100's peak).
    if (has(gpu_type, "dgx-2h") && has(gpu_type, "v100")) {
        c.gpu.peak_tflops[Precision::fp16] = 130;
        c.gpu.tdp_W = 450;
    }
    const GpuFigures stated = parse_gpu_figures(gpu_type);
    if (stated.memory_GiB > 0) c.gpu.memory_GiB = stated.memory_GiB;
    if (stated.memory_bandwidth_GBps > 0) c.gpu.memory_bandwidth_GBps = stated.memory_bandwidth_GBps;
    if (stated.power_limit_W > 0) c.gpu.power_limit_W = stated.power_limit_W;
    // An NVL72 rack's NVLink domain is the rack: the 4 GPUs of a compute tray (the recipes'
    // GPUS_PER_NODE) are no node of its network, and a stated 72 that the GPU count does not fill
    // is the share of each rack the run took, as when unstated (below).
    const bool rack = std::string(preset) == "gb200-nvl72" || std::string(preset) == "gb300-nvl72";
    if (rack && (gpus_per_node == 4 || (gpus_per_node == c.gpus_per_node && num_gpus % gpus_per_node != 0)))
        gpus_per_node = 0;
    // A run whose GPU count does not fill whole nodes and that states no node size took the same
    // number of each node: the largest that divides its count (64 of an NVL72 rack for 128 or 2496
    // GPUs).
    if (gpus_per_node <= 0 && num_gpus > c.gpus_per_node && num_gpus % c.gpus_per_node != 0) {
        gpus_per_node = largest_divisor_within(num_gpus, c.gpus_per_node);
        if (inferred_gpus_per_node) *inferred_gpus_per_node = gpus_per_node;
    }
    if (gpus_per_node > 0) c = with_gpus_per_node(c, gpus_per_node, origin + ": " + where + ".gpus_per_node");
    if (auto net = parse_interconnect(interconnect, c.inter_node.nics_per_node)) {
        if (net->nics_per_node > 0) {
            c.inter_node.nics_per_node = net->nics_per_node;
            c.inter_node.nic_bandwidth_GBps = net->nic_bandwidth_GBps;
        }
        if (net->oversubscription > 0) c.inter_node.oversubscription = net->oversubscription;
    }
    return resize_cluster(c, num_gpus, origin + ": " + where + ".num_gpus");
}

}  // namespace tessel
