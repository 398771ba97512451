#include "core/rank_groups.h"

#include <algorithm>
#include <array>
#include <map>
#include <sstream>

#include "core/errors.h"

namespace tessel {

namespace {

// The placement's dimensions, innermost first. Called once per rank by the simulator's group
// building (a million ranks for an absurd cluster), so no allocation on the common path.
std::vector<std::string> split_order(const std::string& order) {
    std::vector<std::string> out;
    out.reserve(4);
    std::size_t start = 0;
    while (true) {
        const std::size_t dash = order.find('-', start);
        out.push_back(order.substr(start, dash == std::string::npos ? std::string::npos : dash - start));
        if (dash == std::string::npos) break;
        start = dash + 1;
    }
    for (const char* d : {"tp", "cp", "dp", "pp"})
        if (std::count(out.begin(), out.end(), d) != 1)
            throw InputError("placement '" + order + "': expected each of tp, cp, dp, pp exactly once");
    if (out.size() != 4) throw InputError("placement '" + order + "': expected exactly tp, cp, dp and pp");
    return out;
}

// split_order as indices into (tp, cp, dp, pp), for the per-rank arithmetic below.
std::array<int, 4> order_indices(const std::string& order) {
    // The usual "xx-xx-xx-xx" form: read in place.
    std::array<int, 4> idx{};
    auto index_of = [](char a, char b) {
        if (b != 'p') return -1;
        return a == 't' ? 0 : a == 'c' ? 1 : a == 'd' ? 2 : a == 'p' ? 3 : -1;
    };
    if (order.size() == 11 && order[2] == '-' && order[5] == '-' && order[8] == '-') {
        int seen = 0;
        bool ok = true;
        for (int i = 0; i < 4 && ok; ++i) {
            idx[i] = index_of(order[3 * i], order[3 * i + 1]);
            ok = idx[i] >= 0 && !(seen & (1 << idx[i]));
            if (ok) seen |= 1 << idx[i];
        }
        if (ok) return idx;
    }
    const auto names = split_order(order);  // throws, saying what is wrong
    for (int i = 0; i < 4; ++i) idx[i] = index_of(names[i][0], names[i][1]);
    return idx;
}

int& coord_at(RankCoords& c, int i) { return i == 0 ? c.tp : i == 1 ? c.cp : i == 2 ? c.dp : c.pp; }
int size_at(const ParallelSizes& s, int i) { return i == 0 ? s.tp : i == 1 ? s.cp : i == 2 ? s.dp : s.pp; }

int& coord(RankCoords& c, const std::string& d) {
    if (d == "tp") return c.tp;
    if (d == "cp") return c.cp;
    if (d == "dp") return c.dp;
    return c.pp;
}

}  // namespace

RankCoords coords_of(int rank, const std::string& order, const ParallelSizes& sizes) {
    RankCoords c;
    int r = rank;
    for (int d : order_indices(order)) {
        coord_at(c, d) = r % size_at(sizes, d);
        r /= size_at(sizes, d);
    }
    return c;
}

int rank_of(const RankCoords& coords, const std::string& order, const ParallelSizes& sizes) {
    RankCoords c = coords;
    int rank = 0, stride = 1;
    for (int d : order_indices(order)) {
        rank += coord_at(c, d) * stride;
        stride *= size_at(sizes, d);
    }
    return rank;
}

std::vector<std::vector<int>> rank_groups(const std::string& order, const ParallelSizes& sizes, const std::string& dims) {
    auto dim_list = split_order(order);
    std::vector<std::string> selected;
    std::stringstream ss(dims);
    std::string tok;
    while (std::getline(ss, tok, '-')) selected.push_back(tok);
    std::map<int, std::vector<int>> by_key;  // key: the rank with every selected coordinate zeroed
    for (int r = 0; r < sizes.world(); ++r) {
        RankCoords c = coords_of(r, order, sizes);
        for (const auto& d : selected) coord(c, d) = 0;
        by_key[rank_of(c, order, sizes)].push_back(r);
    }
    std::vector<std::vector<int>> out;
    for (auto& [k, g] : by_key) out.push_back(std::move(g));
    return out;
}

std::vector<int> group_of(int rank, const std::string& order, const ParallelSizes& sizes, const std::string& dims) {
    RankCoords base = coords_of(rank, order, sizes);
    std::vector<std::string> selected;
    std::stringstream ss(dims);
    std::string tok;
    while (std::getline(ss, tok, '-')) selected.push_back(tok);
    std::vector<int> out;
    for (int r = 0; r < sizes.world(); ++r) {
        RankCoords c = coords_of(r, order, sizes);
        RankCoords masked = c, masked_base = base;
        for (const auto& d : selected) coord(masked, d) = 0, coord(masked_base, d) = 0;
        if (masked.tp == masked_base.tp && masked.cp == masked_base.cp && masked.dp == masked_base.dp &&
            masked.pp == masked_base.pp)
            out.push_back(r);
    }
    return out;
}

int placement_stride(const std::string& placement, const ParallelSizes& sizes, const std::string& dim) {
    int stride = 1;
    for (std::size_t pos = 0; pos + 1 < placement.size(); pos += 3) {
        const std::string d = placement.substr(pos, 2);
        if (d == dim) break;
        stride *= d == "tp" ? sizes.tp : d == "cp" ? sizes.cp : d == "dp" ? sizes.dp : sizes.pp;
    }
    return stride;
}

bool groups_sit_alike(const std::string& placement, const ParallelSizes& sizes, int gpus_per_node) {
    const int node = std::max(1, gpus_per_node);
    if (sizes.world() <= node) return true;
    const char* names[] = {"tp", "cp", "dp", "pp"};
    const int size[] = {sizes.tp, sizes.cp, sizes.dp, sizes.pp};
    for (int i = 0; i < 4; ++i) {
        if (size[i] == 1) continue;
        const long long span = (long long)placement_stride(placement, sizes, names[i]) * size[i];
        if (span % node != 0 && node % span != 0) return false;
    }
    return true;
}

}  // namespace tessel
